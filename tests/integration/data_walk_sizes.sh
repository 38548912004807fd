#!/usr/bin/env bash
# A --data directory is walked by name, without a stat per file. capacity's per-GPU demand said
# "0.00 MB/s" and its dataset "0 B" (tune: "sizes not indexed") where run reported the dataset's
# size from a stat'ed sample. All three now take the bytes per sample from one plan: 2,500 files
# of 4,096 B, more than the 1,000 stat'ed, so the size is an estimate and says so.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_dir walk
mkdir "$W/own"
python3 - "$W/own" <<'PY' || fail "cannot write the files"
import os, sys
for i in range(2500):
    with open(os.path.join(sys.argv[1], f"s{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(4096))
PY
common=(--quiet --data "$W/own" --batch-size 64 --workers 1 --cache warm --gpu-samples-per-s 1000)
"$IOPROBE" run "${common[@]}" --json "$W/run.json" > "$W/run.txt" 2>&1 || fail "run failed: $(cat "$W/run.txt")"
"$IOPROBE" capacity "${common[@]}" --point-time 2s --repeats 1 --max-gpus 1 --budget 60s --json "$W/cap.json" \
  > "$W/cap.txt" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || fail "capacity exited $rc: $(cat "$W/cap.txt")"
"$IOPROBE" tune "${common[@]}" --prefetch-factors 1 --numa none --repeats 1 --point-time 2s --budget 60s \
  --json "$W/tune.json" > "$W/tune.txt" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || fail "tune exited $rc: $(cat "$W/tune.txt")"
python3 - "$W/run.json" "$W/cap.json" "$W/tune.json" <<'PY' || fail "the three disagree on the dataset's size"
import json, sys
run, cap, tune = (json.load(open(p)) for p in sys.argv[1:4])
for name, d in (("run", run), ("capacity", cap), ("tune", tune)):
    ds = d["dataset"]
    assert ds["bytes"] == 2500 * 4096, f"{name}: dataset.bytes {ds['bytes']}, expected {2500 * 4096}"
    assert "estimated from the sizes of" in ds.get("bytes_basis", ""), f"{name}: no bytes_basis: {ds}"
assert cap["demand"]["sample_bytes"] == 4096, f"capacity: demand.sample_bytes {cap['demand']['sample_bytes']}"
assert tune["demand"]["sample_bytes"] == 4096, f"tune: demand.sample_bytes {tune['demand']['sample_bytes']}"
assert tune["demand"]["required_bytes_per_s"] == 1000 * 4096, tune["demand"]["required_bytes_per_s"]
PY
"$IOPROBE" report "$W/cap.json" > "$W/cap_text.txt" || fail "report of cap.json failed"
grep -q "4.10 MB/s (3.91 MiB/s); fed at" "$W/cap_text.txt" || fail "capacity text: per-GPU demand not 4.10 MB/s: $(grep 'per GPU' "$W/cap_text.txt")"
grep -q "(estimated from the sizes of" "$W/cap_text.txt" || fail "capacity text: no estimate label: $(grep target "$W/cap_text.txt")"
echo "PASS: run, capacity and tune give a walked dataset 10,240,000 B, 4,096 B per sample"
