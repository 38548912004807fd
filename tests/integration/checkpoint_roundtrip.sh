#!/bin/bash
# End to end on the build machine's disk: save (zstd + byte grouping, odd chunk size) with
# --keep, restore and verify, JSON valid; then a flipped byte caught by a second restore run
# is not possible through the CLI (it always saves first), so corruption is a unit test.
set -u
IOPROBE=$1
DIR=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckpt-it.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$IOPROBE" checkpoint --dir "$DIR/ck" --size 24MiB --ranks 2 --chunk-size 3000001 --compress zstd:1 --byte-group \
  --io-size 1MiB --restore --keep --json "$DIR/r.json" --raw-baseline on >"$DIR/out" 2>&1 || { cat "$DIR/out"; fail "exit $?"; }
cat "$DIR/out"
python3 -m json.tool "$DIR/r.json" >/dev/null || fail "JSON invalid"
python3 - "$DIR/r.json" <<'PY' || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["checkpoint"]
assert d["kind"] == "checkpoint" and d["partial"] is False
s = c["save"]
assert s["ok"] and s["durable"], s
assert s["logical_bytes"] == 24 * 2**20, s["logical_bytes"]
assert 1.05 < s["ratio"] < 1.5, s["ratio"]
assert c["restore"]["ok"] and c["restore"]["logical_bytes"] == 24 * 2**20
assert c["comparison"]["checkpoint_over_raw"] > 0
PY
[ -f "$DIR/ck/__0_0.distcp" ] && [ -f "$DIR/ck/__1_0.distcp" ] || fail "--keep did not keep the shards"
ls "$DIR/ck" | grep -q ioprobe-tmp && fail "temporary file left"
grep -q "checkpoint / raw" "$DIR/out" || fail "no checkpoint/raw ratio printed"

# Never overwrite: a second run into the same directory refuses (exit 2).
"$IOPROBE" checkpoint --dir "$DIR/ck" --size 1MiB --raw-baseline off >/dev/null 2>"$DIR/err"
rc=$?
[ $rc = 2 ] || fail "overwrite not refused (exit $rc)"
grep -q "never overwrites" "$DIR/err" || fail "overwrite message"

# Without fsync the result is labelled not durable.
"$IOPROBE" checkpoint --dir "$DIR/nf" --size 4MiB --fsync false --raw-baseline off >"$DIR/out2" 2>&1 || fail "no-fsync run"
grep -q "NOT DURABLE" "$DIR/out2" || fail "no-fsync run not labelled"
# Presets: MLPerf Storage v2.0 checkpoint sizes at 14 B/param: 8.03B x 14 = 112,420,000,000 B in all
# (before --params was rounded to a whole count, 8.03 x 1e9 = 8,029,999,999.999999 lost 112 B).
"$IOPROBE" checkpoint --model llama3-8b --plan | grep -q "112,420,000,000 B) in all" || fail "llama3-8b preset size"
"$IOPROBE" checkpoint --model llama3-70b --ranks 2 --plan | grep -q "this host: 2 rank" || fail "--ranks must override the preset"
echo ok
