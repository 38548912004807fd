#!/bin/bash
# A checkpoint is compared with the disk's own write speed, and "staged" is told apart from
# "durable" (users have seen saves several times slower than dd to the same volume, with the log
# blurring the two). On a disk-backed filesystem (not tmpfs), uncompressed saves with and without
# fsync, sync and --async, each with the raw sequential write of the same directory measured in the same run:
#  - raw write bandwidth (with fsync) next to the checkpoint's, with the ratio checkpoint / raw;
#  - time split into phases (stage, compress, write wait, fsync); time to staged and time to
#    durable separate (async: staged before durable; sync: training blocked until durable);
#  - effective bandwidth = logical bytes / time to durable, from the JSON;
#  - without fsync: labelled "not durable (page cache)" and no comparison or bound drawn from it.
# 32 MiB of state in 8 MiB chunks (1 GiB / 64 MiB scaled down to run in seconds).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
base=${IOPROBE_DISK_TMPDIR:-/var/tmp}
[ "$(stat -f -c %T "$base" 2>/dev/null)" = tmpfs ] && skip "$base is tmpfs; staged vs durable needs a disk (set IOPROBE_DISK_TMPDIR)"
work=$(mktemp -d "$base/ioprobe-c4.XXXXXX") || skip "cannot create a directory in $base"
trap 'rm -rf "$work"' EXIT
size=$((32 << 20))
# The documents match reports/result.schema.json (where python3-jsonschema is installed).
schema_ok() {
  [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null || { echo "note: schema check not run"; return 0; }
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$1" || fail "$1 does not match reports/result.schema.json"
}

for fsync in true false; do
  for mode in sync async; do
    name=$mode-fsync-$fsync
    extra=(); [ $mode = async ] && extra=(--async --step-time 20ms)
    "$IOPROBE" checkpoint --quiet --dir "$work/$name" --size 32MiB --chunk-size 8MiB --compress none --fsync $fsync \
      "${extra[@]}" --raw-baseline on --json "$work/$name.json" > "$work/$name.txt" 2> "$work/$name.err" \
      || fail "$name: exit $?: $(cat "$work/$name.err")"
    echo "== $name"; cat "$work/$name.txt"
    python3 - "$work/$name.json" "$work/$name.txt" $fsync $mode $size <<'PY' || fail "$name: checks failed"
import json, sys
doc = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
fsync, mode, size = sys.argv[3] == "true", sys.argv[4], int(sys.argv[5])
c = doc["checkpoint"]; s = c["save"]; raw = c["raw_write"]; cmp = c["comparison"]
def expect(cond, what):
    if not cond:
        print("check failed:", what); sys.exit(1)
    print("ok:", what)
expect(doc["partial"] is False and s["ok"], "the save completed")
expect(s["logical_bytes"] == size, f"logical bytes = {size:,}")
expect(doc["target"]["memory_backed"] is False, "a disk, not RAM")
ph = s["phases_max_over_ranks_s"]
expect(set(ph) >= {"stage", "compress", "write_wait", "fsync"}, "phases: stage, compress, write wait, fsync")
expect(ph["compress"] == 0, "no compression time with --compress none")
eff = size / s["time_to_durable_s"]
expect(abs(s["write_bytes_per_s"] - eff) <= 1e-6 * eff,
       f"effective bandwidth {s['write_bytes_per_s'] / 1e6:.1f} MB/s = logical bytes / time to durable {s['time_to_durable_s']:.4f} s")
expect("time to staged" in text and ("time to durable" in text) == fsync, "time to staged and time to durable printed apart")
if not fsync:
    expect("time to published (NOT durable: no fsync)" in text, "no-fsync: the end is 'published', not 'durable'")
if mode == "async":
    expect(0 < s["time_to_staged_s"] < s["time_to_durable_s"],
           f"async: staged at {s['time_to_staged_s']:.4f} s, before durable at {s['time_to_durable_s']:.4f} s")
    expect(s["async"]["training_blocked_s"] == s["time_to_staged_s"], "async: training blocked only until staged")
else:
    expect(s["time_to_staged_s"] == 0 and "sync: training blocked until" in text, "sync: training blocked throughout")
expect(raw["available"] and raw["fsync"] is True and raw["bytes"] >= size, "raw sequential write measured, with fsync")
expect("raw sequential write, same target, same run" in text, "raw write printed beside the checkpoint")
if fsync:
    expect(s["durable"] is True and s["durability"].startswith("durable"), "labelled durable")
    expect(ph["fsync"] > 0, "fsync time measured")
    r = cmp["checkpoint_over_raw"]
    expect(abs(r - s["write_bytes_per_s"] / raw["write_bytes_per_s"]) <= 1e-9 * r, f"checkpoint / raw = {r:.3f}")
    expect(f"checkpoint / raw = {r:.3f}" in text, "the ratio is printed")
    expect(cmp["bound"] == "write", "uncompressed: write-bound")
else:
    expect(s["durable"] is False and s["durability"] == "not durable (page cache)", "labelled not durable (page cache)")
    expect("NOT DURABLE (page cache)" in text, "the text says NOT DURABLE")
    expect(ph["fsync"] == 0, "no fsync time")
    expect(cmp["available"] is False and cmp["checkpoint_over_raw"] is None and "bound" not in cmp and
           "goal_bytes_per_s" not in cmp, "no comparison, goal or bound drawn from a non-durable save")
    expect("checkpoint / raw =" not in text and "-bound" not in text and "goal" not in text,
           "the text draws no ratio, goal or bound from it")
PY
    schema_ok "$work/$name.json"
    [ -z "$(ls -A "$work/$name" 2>/dev/null)" ] || fail "$name: files left in the target: $(ls -A "$work/$name")"
  done
done
echo PASS
