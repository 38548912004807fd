#!/usr/bin/env bash
# ioprobe raw on a small file in a temp dir: layout, JSON keys, iops > 0, exactly size/bs I/Os per
# pass with either engine, write-safety refusals (a file ioprobe did not create is never written or
# extended), and a path with ':' and a space used verbatim, never parsed.
set -u
IOPROBE=${1:?usage: raw_file_layout_and_safety.sh path/to/ioprobe}
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe raw:smoke.XXXXXX") || { echo "skip: cannot make a temp dir"; exit 77; }
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

f="$dir/a b:c.bin"
"$IOPROBE" raw --filename "$f" --size 4M --rw randread --bs 4k --iodepth 4 --runtime 0.3s --json "$dir/r.json" \
  > "$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; fail "randread run exited $?"; }
[ -f "$f" ] || fail "file with ':' in its name was not created verbatim"
[ "$(stat -c %s "$f")" = 4194304 ] || fail "layout size is not 4 MiB"
grep -q "IOPS" "$dir/out.txt" || fail "no IOPS line in the text report"
python3 - "$dir/r.json" "$f" <<'PY' || fail "JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "raw", d["kind"]
for k in ("schema", "host", "target", "partial", "warnings", "raw"):
    assert k in d, k
raw = d["raw"]
assert raw["filename"] == sys.argv[2], raw["filename"]
assert raw["engine"]["name"] in ("io_uring", "psync") and raw["engine"]["reason"]
r = raw["results"]
for k in ("ios", "bytes", "elapsed_s", "iops", "bytes_per_s", "latency_us", "cpu"):
    assert k in r, k
for k in ("mean", "p50", "p90", "p99", "p999", "max"):
    assert k in r["latency_us"], k
for k in ("user_s", "sys_s", "per_io_us"):
    assert k in r["cpu"], k
assert r["iops"] > 0 and r["ios"] > 0 and r["bytes"] == r["ios"] * 4096, r
assert r["latency_us"]["p50"] <= r["latency_us"]["p99"] <= r["latency_us"]["max"], r["latency_us"]
assert r["errors"] == 0
assert d["partial"] is False
PY

# Both engines, one pass without --runtime: exactly size/bs I/Os.
for e in psync io_uring; do
  "$IOPROBE" raw --filename "$f" --rw read --bs 64k --iodepth 8 --engine $e --json "$dir/$e.json" > /dev/null 2>&1 \
    || fail "--engine $e read pass failed"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['raw']['results']; assert r['ios']==64, r['ios']" \
    "$dir/$e.json" || fail "--engine $e: one pass over 4 MiB at 64k is not 64 I/Os"
done
# A queue deeper than the pass: the first fill alone must not issue more than the pass's blocks.
"$IOPROBE" raw --filename "$f" --rw read --bs 256k --iodepth 64 --engine io_uring --json "$dir/deep.json" > /dev/null 2>&1 \
  || fail "--iodepth 64 read pass failed"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['raw']['results']; assert r['ios']==16 and r['bytes']==4194304, r" \
  "$dir/deep.json" || fail "one pass over 4 MiB at 256k with --iodepth 64 is not 16 I/Os (requests past the pass)"

# Writes to a file ioprobe created are allowed; to a foreign file they are refused (exit 2), data untouched.
"$IOPROBE" raw --filename "$f" --rw randwrite --bs 4k --iodepth 2 --runtime 0.2s > /dev/null 2>&1 \
  || fail "write to an ioprobe-created file was refused"
foreign="$dir/foreign.bin"
head -c 1048576 /dev/urandom > "$foreign"
sum=$(md5sum < "$foreign")
"$IOPROBE" raw --filename "$foreign" --rw write --bs 4k --runtime 0.2s > "$dir/err.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "write to a foreign file: exit $rc, expected 2"
grep -q "allow-overwrite" "$dir/err.txt" || fail "refusal does not mention --allow-overwrite"
[ "$(md5sum < "$foreign")" = "$sum" ] || fail "foreign file was modified"
"$IOPROBE" raw --filename "$foreign" --size 2M --rw read > /dev/null 2>&1
[ $? = 2 ] || fail "--size beyond a foreign file must be refused with exit 2"
[ "$(stat -c %s "$foreign")" = 1048576 ] || fail "foreign file was extended"
"$IOPROBE" raw --filename "$dir/missing.bin" --rw read > /dev/null 2>&1
[ $? = 2 ] || fail "missing file without --size must exit 2"
# --size 0 is refused as a value, saying what a valid size looks like (not "give --size").
for z in 0 0MiB; do
  "$IOPROBE" raw --filename "$dir/missing.bin" --size "$z" --rw read > /dev/null 2> "$dir/err.txt"
  rc=$?
  [ $rc = 2 ] && grep -q -- "--size $z: a size of 0 B is refused" "$dir/err.txt" && grep -q "e.g. --size 1GiB" "$dir/err.txt" ||
    fail "--size $z (exit $rc): $(cat "$dir/err.txt")"
done
"$IOPROBE" raw --filename "$f" --bs 1000 --direct 1 > /dev/null 2>&1
[ $? = 2 ] || fail "--bs 1000 with --direct 1 must exit 2"
ls "$dir" | grep -q "ioprobe-layout" && fail "a layout temp file was left behind"
# --json never replaces a file ioprobe did not write (raw and probe), and refuses before any work.
echo "the user's notes" > "$dir/notes.txt"
"$IOPROBE" raw --filename "$f" --rw read --runtime 0.2s --json "$dir/notes.txt" > "$dir/err.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "raw --json onto a foreign file: exit $rc, expected 2: $(cat "$dir/err.txt")"
grep -q "not an ioprobe output" "$dir/err.txt" || fail "raw --json refusal does not say why: $(cat "$dir/err.txt")"
"$IOPROBE" probe --dir "$dir" --json "$dir/notes.txt" > "$dir/err.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "probe --json onto a foreign file: exit $rc, expected 2"
[ "$(cat "$dir/notes.txt")" = "the user's notes" ] || fail "--json replaced a file ioprobe did not write"
# An O_DIRECT block size in decimal units (4MB = 4,000,000 B) is refused with the binary unit named.
out=$("$IOPROBE" raw --filename "$dir/bs.bin" --bs 4MB --direct 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -qF -- "--bs 4MiB is 4.00 MiB (4,194,304 B)" || fail "--bs 4MB --direct 1: exit $rc: $out"
[ ! -e "$dir/bs.bin" ] || fail "a refused raw left $dir/bs.bin"
echo "ok"
