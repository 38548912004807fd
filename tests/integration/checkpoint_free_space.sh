#!/bin/bash
# Free space and the raw comparison on a small tmpfs (needs root): the preflight, the raw write
# after the save (needs the shard removed first, or is skipped with --keep), a raw baseline that
# cannot run, a failed save that claims no rate, and --json paths refused before any work.
set -u
IOPROBE=$1
SCHEMA=${IOPROBE_SOURCE_DIR:-}/reports/result.schema.json
if [ "$(id -u)" != 0 ]; then echo "skip: needs root to mount a small tmpfs"; exit 77; fi
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckpt-space.XXXXXX")
MNT=$W/mnt
mkdir "$MNT"
cleanup() { umount "$MNT" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
mnt() { mount -t tmpfs -o "$1" ioprobe-test "$MNT" || { echo "skip: cannot mount tmpfs"; exit 77; }; mkdir "$MNT/ck"; }
run() {  # ioprobe checkpoint options; sets rc, output in $W/out and $W/err
  rm -f "$W/r.json"
  "$IOPROBE" checkpoint --dir "$MNT/ck" --chunk-size 1MiB --io-size 1MiB --json "$W/r.json" "$@" >"$W/out" 2>"$W/err"
  rc=$?
  echo "--- ioprobe checkpoint $* -> exit $rc"; cat "$W/out" "$W/err"
}
schema_ok() {
  [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null || { echo "note: schema check not run"; return 0; }
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$SCHEMA" "$W/r.json" || fail "$1: JSON does not match reports/result.schema.json"
}
py() { python3 - "$W/r.json" || fail "$1: JSON content"; }
no_raw_files() { ls -A "$MNT/ck" | grep -q ioprobe-raw && fail "$1: raw file left: $(ls -A "$MNT/ck")"; true; }

# 1. 4 MiB on 8 MiB: the shard is removed before the second raw run, so both raw runs happen.
mnt size=8m
run --size 4MiB
[ $rc = 0 ] || fail "4MiB on 8m: exit $rc"
grep -q "checkpoint / raw = " "$W/out" || fail "4MiB on 8m: no comparison printed"
[ -z "$(ls -A "$MNT/ck")" ] || fail "4MiB on 8m: files left: $(ls -A "$MNT/ck")"
schema_ok "4MiB on 8m"
py "4MiB on 8m" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
assert c["save"]["ok"] and c["raw_write"]["available"], c["raw_write"]
assert len(c["raw_write"]["runs_bytes_per_s"]) == 2, c["raw_write"]
assert c["comparison"]["checkpoint_over_raw"] > 0
PY
umount "$MNT"

# 2. The same with --keep: no room for the raw run beside the kept shard; it is skipped with the
#    reason, the report is printed and written, the baseline is the run before the save, exit 0.
mnt size=8m
run --size 4MiB --keep
[ $rc = 0 ] || fail "--keep on 8m: exit $rc"
grep -q "ioprobe checkpoint: " "$W/out" || fail "--keep on 8m: no report on stdout"
grep -q "the run after the save did not run: not enough space" "$W/out" || fail "--keep on 8m: skip not explained"
[ -f "$MNT/ck/__0_0.distcp" ] || fail "--keep on 8m: shard not kept"
no_raw_files "--keep on 8m"
schema_ok "--keep on 8m"
py "--keep on 8m" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
assert c["save"]["ok"] and "not enough space" in c["raw_write"]["after_save_skipped"], c["raw_write"]
assert len(c["raw_write"]["runs_bytes_per_s"]) == 1 and c["comparison"]["checkpoint_over_raw"] > 0
PY
umount "$MNT"

# 3. Uncompressed state larger than the free space: refused up front, exit 1, needed vs free named.
mnt size=6m
run --size 16MiB --ranks 2
[ $rc = 1 ] || fail "16MiB on 6m: exit $rc, expected 1"
grep -q "not enough space in $MNT/ck: the checkpoint needs 16.0[0-9] MiB.* are free" "$W/err" || fail "16MiB on 6m: message"
[ -s "$W/out" ] && fail "16MiB on 6m: refused up front yet printed a report"
[ -z "$(ls -A "$MNT/ck")" ] || fail "16MiB on 6m: files left: $(ls -A "$MNT/ck")"
umount "$MNT"

# 4. A failed save (zstd: only ~1.1x, 64 MiB does not fit in 8 MiB): exit 1, what was done is
#    reported (bytes written, elapsed), no MB/s, ratio or size on disk; JSON nulls; no files left.
mnt size=8m
run --size 64MiB --ranks 3 --compress zstd:1
[ $rc = 1 ] || fail "failed save: exit $rc, expected 1"
grep -q "save FAILED" "$W/out" || fail "failed save: not labelled"
grep -q "reached the kernel" "$W/out" || fail "failed save: bytes written not shown"
grep -E "MB/s|ratio [0-9]|on disk [0-9]" "$W/out" && fail "failed save: a rate, ratio or size on disk is printed"
grep -q "raw sequential write: not measured: not enough space before the save" "$W/out" || fail "failed save: raw skip not explained"
[ -z "$(ls -A "$MNT/ck")" ] || fail "failed save: files left: $(ls -A "$MNT/ck")"
schema_ok "failed save"
py "failed save" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["checkpoint"]["save"]
assert not s["ok"] and 0 < s["written_bytes"] <= 8 * 2**20, s["written_bytes"]
for k in ("ratio", "bytes_on_disk", "throughput_min_rank_bytes_per_s", "write_bytes_per_s", "time_to_durable_s"):
    assert s[k] is None, (k, s[k])
assert all(r["write_bytes_per_s"] is None and r["bytes_on_disk"] is None for r in s["ranks"])
assert s["durable_bytes"] == 0 and s["duration_max_s"] > 0
PY
umount "$MNT"

# 5. --json paths that cannot be written: exit 2 naming the path, before any work (--dir not created).
bad_json() {  # $1 what, $2 path
  "$IOPROBE" checkpoint --dir "$W/never" --size 1MiB --json "$2" >"$W/out" 2>"$W/err"
  local rc=$?
  cat "$W/err"
  [ $rc = 2 ] || fail "--json $1: exit $rc, expected 2"
  grep -qF -- "--json '$2'" "$W/err" || fail "--json $1: message does not name the path"
  [ -e "$W/never" ] && fail "--json $1: work started (--dir created)"
  true
}
bad_json "a directory" "$W"
bad_json "in a missing directory" "$W/missing/r.json"
mount -t tmpfs -o ro,size=1m ioprobe-test "$MNT" || { echo "skip: cannot mount tmpfs"; exit 77; }
bad_json "on a read-only mount" "$MNT/r.json"
umount "$MNT"

# 6. Model-shape options with --size are refused (exit 2) before any work, not ignored.
"$IOPROBE" checkpoint --dir "$W/never" --size 1MiB --tp 3 >"$W/out" 2>"$W/err"
rc=$?
cat "$W/err"
[ $rc = 2 ] || fail "--tp with --size: exit $rc, expected 2"
grep -qF -- "--tp" "$W/err" || fail "--tp with --size: message does not name the option"
[ -e "$W/never" ] && fail "--tp with --size: work started (--dir created)"
echo ok
