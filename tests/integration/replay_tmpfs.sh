#!/bin/bash
# ioprobe replay on a tmpfs it mounts: a trace (the fixture tests/fixtures/trace/loader.trace: a
# main process with three batch waits, two workers reading, one mapping a file, a failed open)
# replayed under --dir with exact byte counts in the JSON; --map onto the laid-out files; --map onto
# a missing path refused (exit 2) naming it; a file of another size that replay did not create
# refused (exit 2) and left as it was; report re-renders and --merge adds two replays; a trace that
# is a directory or a device and a --dir that is a file refused (exit 2) saying so; a layout larger
# than the filesystem refused (exit 1) before any write; two replays onto one new --dir both succeed.
set -u
IOPROBE=${1:?usage: $0 path/to/ioprobe}
. "$(dirname "$0")/lib.sh"
TRACE=$(cd "$(dirname "$0")/../fixtures/trace" && pwd)/loader.trace
scratch_mount replay tmpfs size=64m

# 1. Laid out under --dir and replayed: every recorded byte read again (mapped range included).
"$IOPROBE" replay "$TRACE" --dir "$MNT/d" --json "$W/r.json" --quiet >"$W/out.txt" 2>&1 || {
  cat "$W/out.txt"; fail "replay --dir exited $?"; }
python3 - "$W/r.json" <<'PY' || fail "r.json figures"
import json, sys
d = json.load(open(sys.argv[1]))
r, s = d["replay"], d["settings"]
def expect(c, what):
    if not c: sys.exit("expected " + what + ": " + json.dumps(r)[:400])
expect(d["kind"] == "replay", "kind replay")
expect(r["bytes"] == 131072 + 0 + 50000 + 100000 + 65536, "bytes 346,608 (a.bin 2 x 64 KiB + EOF read, c 50,000, b 100,000, d mapped 64 KiB)")
expect(r["mapped_bytes"] == 65536, "mapped bytes 65,536")
expect(r["ops"] == 18, "18 ops")
expect(r["errors"] == 0, "no errors (the recorded failed open is not issued)")
expect(len(r["streams"]) == 3, "3 streams")
expect(r["timeline"]["batches"] == 3, "3 batches")
expect(r["timeline"]["recorded_wait_ns"] == 4000000, "recorded wait 4 ms")
expect(s["files_created"] == 4 and s["bytes_laid_out"] == 346608, "4 files laid out, 346,608 B")
expect(s["gaps"] == "recorded", "gaps recorded")
expect(d["analysis"]["verdict"].startswith("on this target your job would have run"), "the verdict")
expect(d["device_io"]["source"] == "none" and "tmpfs" in d["device_io"]["reason"], "device I/O not measurable on tmpfs, saying why")
PY
[ "$(stat -c %s "$MNT/d/data/train/b.bin")" = 100000 ] || fail "b.bin laid out at its recorded size"
[ -e "$MNT/d/data/train/missing.bin" ] && fail "a file only a failed open named was laid out"
grep -q "verdict" "$W/out.txt" || fail "no verdict line in the text"
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
    "$(dirname "$0")/../../reports/result.schema.json" "$W/r.json" || fail "r.json does not match the schema"
fi
echo "ok: replay --dir read 346,608 B exactly (65,536 B of them a mapped range)"

# 2. --map onto the files laid out above, as fast as possible: same bytes, nothing created.
"$IOPROBE" replay "$TRACE" --map "/data/train=$MNT/d/data/train" --as-fast-as-possible --json "$W/r2.json" --quiet \
  >"$W/out2.txt" 2>&1 || { cat "$W/out2.txt"; fail "replay --map exited $?"; }
[ "$(json "$W/r2.json" 'd["replay"]["bytes"]')" = 346608 ] || fail "--map replay bytes"
[ "$(json "$W/r2.json" 'd["settings"]["files_mapped"]')" = 4 ] || fail "--map: 4 files mapped"
[ "$(json "$W/r2.json" 'd["settings"]["gaps"]')" = none ] || fail "--as-fast-as-possible: gaps none"
echo "ok: replay --map onto existing files, --as-fast-as-possible"

# 3. --map onto a path that does not exist: exit 2, naming it.
rc=0
"$IOPROBE" replay "$TRACE" --map "/data/train=$MNT/nowhere" --quiet >"$W/out3.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$W/out3.txt"; fail "--map onto a missing path: exit $rc, expected 2"; }
grep -q "$MNT/nowhere/" "$W/out3.txt" || { cat "$W/out3.txt"; fail "the refusal does not name the missing path"; }
echo "ok: --map onto a missing path refused with exit 2, naming it"

# 4. A file of another size under --dir that replay did not create: refused, untouched.
mkdir -p "$MNT/d2/data/train"
printf 'user data\n' >"$MNT/d2/data/train/a.bin"
before=$(md5sum <"$MNT/d2/data/train/a.bin")
rc=0
"$IOPROBE" replay "$TRACE" --dir "$MNT/d2" --quiet >"$W/out4.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$W/out4.txt"; fail "a foreign file under --dir: exit $rc, expected 2"; }
grep -q "$MNT/d2/data/train/a.bin" "$W/out4.txt" || { cat "$W/out4.txt"; fail "the refusal does not name the file"; }
[ "$(md5sum <"$MNT/d2/data/train/a.bin")" = "$before" ] || fail "replay modified a file it did not create"
echo "ok: a file of another size replay did not create is refused (exit 2) and left unchanged"

# 5. report re-renders a replay and --merge adds two.
"$IOPROBE" report "$W/r.json" | grep -q "^REPLAY" || fail "report does not re-render the replay"
"$IOPROBE" report --merge "$W/r.json" "$W/r2.json" --json "$W/m.json" >/dev/null 2>&1 || fail "report --merge of replays"
[ "$(json "$W/m.json" 'd["replay"]["bytes"]')" = 693216 ] || fail "merged bytes are the sum"
[ "$(json "$W/m.json" 'd["replay"]["processes"]')" = 2 ] || fail "merged processes 2"
echo "ok: report re-renders a replay; --merge adds two"

# 6. A trace `ioprobe record` made of a real job on this tmpfs, replayed: the same bytes.
if [ -e "$(dirname "$IOPROBE")/libioprobe_record.so" ]; then
  mkdir -p "$MNT/job"
  head -c 110000 /dev/urandom >"$MNT/job/a.bin"
  head -c 4096 /dev/urandom >"$MNT/job/b.bin"
  head -c 1 /dev/urandom >"$MNT/job/c.bin"
  "$IOPROBE" record --out "$W/job.trace" -- python3 -c '
import sys
for n in ("a", "b", "c", "a"):
    with open(sys.argv[1] + "/" + n + ".bin", "rb") as f:
        f.read()
' "$MNT/job" >"$W/rec.txt" 2>&1 || { cat "$W/rec.txt"; fail "record of a python job exited $?"; }
  "$IOPROBE" replay "$W/job.trace" --map "$MNT/job=$MNT/job" --json "$W/job.json" --quiet >"$W/out6.txt" 2>&1 ||
    { cat "$W/out6.txt"; fail "replay of the recorded job exited $?"; }
  [ "$(json "$W/job.json" 'd["replay"]["bytes"]')" = $((110000 * 2 + 4096 + 1)) ] ||
    fail "the recorded job read 224,097 B; the replay read $(json "$W/job.json" 'd["replay"]["bytes"]')"
  [ "$(json "$W/job.json" 'd["trace"]["read_bytes"]')" = $((110000 * 2 + 4096 + 1)) ] || fail "the trace's read bytes"
  echo "ok: a job recorded by ioprobe record replayed with its exact 224,097 B"
else
  echo "note: no libioprobe_record.so beside $IOPROBE: the recorded-job case is skipped"
fi
# 7. Bad input named for what it is (exit 2), before any work.
expect_usage() {  # WHAT PATTERN ARGS...
  local what=$1 pat=$2 rc=0
  shift 2
  "$IOPROBE" replay "$@" --quiet >"$W/out7.txt" 2>&1 || rc=$?
  [ "$rc" = 2 ] || { cat "$W/out7.txt"; fail "$what: exit $rc, expected 2"; }
  grep -q "$pat" "$W/out7.txt" || { cat "$W/out7.txt"; fail "$what: the message does not say '$pat'"; }
}
expect_usage "a trace that is a directory" "is a directory" "$MNT" --dir "$MNT/d7"
expect_usage "a trace that is a device" "character device" /dev/zero --dir "$MNT/d7"
printf 'x' >"$MNT/plain"
expect_usage "a --dir that is a file" "'$MNT/plain' is a regular file, not a directory" "$TRACE" --dir "$MNT/plain"
[ -e "$MNT/d7" ] && fail "a refused replay created its --dir"
echo "ok: a trace that is a directory or a device, a --dir that is a file: exit 2, saying so"

# 8. A trace whose file sizes exceed the tmpfs: refused before any write (exit 1), naming the need.
sed 's/"size":[0-9]*/"size":100000000000000/' "$TRACE" >"$W/big.trace"
rc=0
"$IOPROBE" replay "$W/big.trace" --dir "$MNT/d8" --quiet >"$W/out8.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$W/out8.txt"; fail "a layout beyond the free space: exit $rc, expected 1"; }
grep -q "not enough space in '$MNT/d8'.*need .*available" "$W/out8.txt" || { cat "$W/out8.txt"; fail "the refusal"; }
[ -z "$(find "$MNT/d8" -type f 2>/dev/null)" ] || fail "a refused layout left files: $(find "$MNT/d8" -type f)"
echo "ok: a layout beyond the free space refused (exit 1) before any write"

# 9. Two replays at once onto one new --dir: the second waits for the first's layout, both succeed.
rc1=0 rc2=0
"$IOPROBE" replay "$TRACE" --dir "$MNT/d9" --as-fast-as-possible >"$W/out9a.txt" 2>&1 & p1=$!
"$IOPROBE" replay "$TRACE" --dir "$MNT/d9" --as-fast-as-possible >"$W/out9b.txt" 2>&1 & p2=$!
wait $p1 || rc1=$?
wait $p2 || rc2=$?
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || { cat "$W/out9a.txt" "$W/out9b.txt"; fail "two replays onto one --dir: exit $rc1 and $rc2"; }
echo "ok: two replays at once onto one new --dir both succeed"
echo PASS
