#!/bin/bash
# A file that fails in every epoch is one line of ERRORS with its count, not one line per epoch;
# the JSON keeps the lines (error_samples) and the typed records (error_details: errno, op, path,
# count); `ioprobe report` renders the same from the document; the run exits 1.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-errgroup.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$IOPROBE" gen --quiet --dir "$W/ds" --files 24 --file-size 4KiB --file-size-dist fixed >"$W/gen" 2>&1 || { cat "$W/gen"; fail "gen"; }
{ find "$W/ds" -type f -name '*.bin'; echo "$W/ds/gone.bin"; } >"$W/list"
"$IOPROBE" --file-list "$W/list" --epochs 3 --workers 2 --batch-size 4 --json "$W/r.json" >"$W/out" 2>&1; rc=$?
[ $rc = 1 ] || { cat "$W/out"; fail "a run with a missing file exited $rc, expected 1"; }
line="open $W/ds/gone.bin: No such file or directory (ENOENT) (3 times)"
[ "$(grep -cF "open $W/ds/gone.bin:" "$W/out")" = 1 ] || { cat "$W/out"; fail "the failing file is not listed exactly once in ERRORS"; }
grep -qF "    $line" "$W/out" || { cat "$W/out"; fail "no grouped line: $line"; }
json "$W/r.json" 'd["results"]["error_samples"]' | grep -qF "(3 times)" || fail "error_samples lacks the count"
[ "$(json "$W/r.json" '[(e["errno_name"], e["op"], e["count"]) for e in d["results"]["error_details"]]')" = \
  "[('ENOENT', 'open', 3)]" ] || fail "error_details: $(json "$W/r.json" 'd["results"]["error_details"]')"
"$IOPROBE" report "$W/r.json" | grep -qF "    $line" || fail "ioprobe report does not render the grouped line"
# Reads and files apart: 3 failed reads of 1 file, in the ERRORS line, the JSON and the verdict.
grep -qF "ERRORS               3 failed reads of 1 file; first ones:" "$W/out" || { cat "$W/out"; fail "ERRORS does not count reads and files apart"; }
[ "$(json "$W/r.json" '(d["results"]["error_files"], d["results"]["error_files_complete"])')" = "(1, True)" ] ||
  fail "error_files: $(json "$W/r.json" '(d["results"].get("error_files"), d["results"].get("error_files_complete"))')"
# 4% of the samples failed, more than the 1% a verdict allows: no verdict on the storage, no GPU fed.
grep -F "verdict" "$W/out" | grep -qF "3 failed reads of 1 file (4.0% of the samples attempted, more than the 1% a verdict allows)" ||
  { cat "$W/out"; fail "the verdict does not say that reads failed"; }
grep -qF "GPUs fed             not judged" "$W/out" || { cat "$W/out"; fail "GPUs were judged fed or not despite 4% failed"; }
# The header counts the files that hold the data, beside the paths listed.
grep -qF "files                24 files, 96.00 KiB (98,304 B) (of 25 listed paths: 1 could not be found or read" "$W/out" ||
  { grep "^  files" "$W/out"; fail "the dataset line does not count the files found apart from the paths listed"; }
# A file truncated after generation: "size changed", the sizes named, no errno (an EIO read as a
# failing device).
f=$(find "$W/ds" -type f -name '*.bin' | head -1)
truncate -s 10 "$f"
"$IOPROBE" run --dir "$W/ds" --files 24 --file-size 4KiB --file-size-dist fixed --epochs 1 --workers 2 --batch-size 4 \
  --cache warm --json "$W/t.json" >"$W/tout" 2>&1; rc=$?
[ $rc = 1 ] || { cat "$W/tout"; fail "a run with a truncated file exited $rc, expected 1"; }
grep -qF "read $f: size changed: 10 B read, 4096 B when the dataset was indexed" "$W/tout" ||
  { cat "$W/tout"; fail "the truncated file is not named with its sizes"; }
grep -F "$f" "$W/tout" | grep -q "EIO" && { cat "$W/tout"; fail "a size change is reported as EIO"; }
[ "$(json "$W/t.json" '[e.get("errno", 0) for e in d["results"]["error_details"]]')" = "[0]" ] ||
  fail "error_details: $(json "$W/t.json" 'd["results"]["error_details"]')"
echo PASS
