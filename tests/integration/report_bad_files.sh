#!/usr/bin/env bash
# `ioprobe report FILE` on a file that is not a result document (not JSON, JSON cut short, JSON of
# something else) exits 2 with one message naming the file, where parsing failed and what it
# expects: no library exception text.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-repbad-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
expect2() {  # expect2 FILE "text"...
  local f=$1 out rc; shift
  out=$("$IOPROBE" report "$f" 2>&1); rc=$?
  [ $rc = 2 ] || fail "report $f exited $rc, expected 2: $out"
  echo "$out" | grep -q "json.exception" && fail "report $f shows the library's exception text: $out"
  for want in "$f" "schema ioprobe.result/1" "$@"; do
    echo "$out" | grep -qF -- "$want" || fail "report $f: message lacks '$want': $out"
  done
  echo "ok: $f -> $out"
}
printf 'samples,bytes\n1,2\n' > data.csv
expect2 data.csv "line 1, column 1"
# A real result document, cut short.
"$IOPROBE" --quiet --dir ds --files 20 --file-size 4KiB --file-size-dist fixed --workers 1 --json full.json > /dev/null \
  || fail "run failed"
head -c 700 full.json > cut.json
expect2 cut.json "truncated?" "not valid JSON"
printf '{"hello": [1, 2, 3]}\n' > other.json
expect2 other.json 'no "schema" string'
printf '[1, 2]' > arr.json
expect2 arr.json "top level is an array"
: > empty.json
expect2 empty.json "is empty"
"$IOPROBE" report full.json > /dev/null || fail "the whole document is refused"
# One document twice in a merge (also by another name) would count it twice.
ln -s full.json again.json
out=$("$IOPROBE" report --merge full.json again.json 2>&1); rc=$?
[ $rc = 2 ] || fail "report --merge of one file twice exited $rc: $out"
echo "$out" | grep -q "are the same result" || fail "report --merge of one file twice: $out"
# A derived figure edited by hand (a percentile, a rate) is not passed on to the CSV: the run's
# figures come from its counts and latency buckets.
python3 - <<'PY' || fail "editing the document"
import json
d = json.load(open("full.json"))
d["results"]["file_latency_us"]["p99"] = "fast"
d["results"]["samples_per_s"] = "2951"
json.dump(d, open("edited.json", "w"))
PY
"$IOPROBE" report edited.json --csv edited.csv > /dev/null 2>&1 || fail "report --csv of an edited run"
grep -q '^/results/file_latency_us/p99,[0-9]' edited.csv || fail "p99 in the CSV: $(grep p99 edited.csv)"
grep -q '^/results/samples_per_s,[0-9]' edited.csv || fail "samples_per_s missing from the CSV"
echo "ok: report refuses non-documents clearly"
