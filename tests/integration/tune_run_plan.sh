#!/usr/bin/env bash
# Run and tune share one preflight (cli/run_plan.hpp prepare_run), so they cannot disagree on
# the demand. On a sharded set of 8 shards x 100 records of 4 KiB, a shard's bytes (409,600) taken
# for demand.sample_bytes instead of a record's (4,096) would make the demand in bytes/s 100x too high. Both must say 4,096 B per sample, and the same target and engine.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d /var/tmp/ioprobe-plan-XXXXXX)
trap 'rm -rf "$W"' EXIT
ds=(--quiet --dataset resnet50-tfrecord-like --files 8 --records-per-file 100 --record-size 4KiB --record-size-dist fixed
    --dir "$W/ds" --batch-size 16 --gpu-samples-per-s 1000)
"$IOPROBE" run "${ds[@]}" --workers 1 --json "$W/run.json" > "$W/run.txt" 2>&1 || fail "run failed: $(cat "$W/run.txt")"
"$IOPROBE" tune "${ds[@]}" --workers 1 --prefetch-factors 1 --numa none --repeats 1 --point-time 2s --budget 60s \
  --json "$W/tune.json" > "$W/tune.txt" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || fail "tune exited $rc: $(cat "$W/tune.txt")"  # 1: no setting meets the demand
python3 - "$W/run.json" "$W/tune.json" <<'PY' || fail "run and tune disagree"
import json, sys
run, tune = (json.load(open(p)) for p in sys.argv[1:3])
rb, tb = run['ingest']['sample_bytes'], tune['demand']['sample_bytes']
assert rb == 4096, f"run: ingest.sample_bytes {rb}, expected 4096 (one record)"
assert tb == 4096, f"tune: demand.sample_bytes {tb}, expected 4096 like run's {rb} (a shard is 409,600 B)"
assert tune['demand']['required_bytes_per_s'] == 1000 * 4096, tune['demand']['required_bytes_per_s']
for k in ('direct', 'engine', 'engine_reason', 'cache_detail', 'fs_type', 'path'):
    assert run['target'][k] == tune['target'][k], (k, run['target'][k], tune['target'][k])
assert len(run['targets']) == 1 and run['targets'][0]['files'] == 8, run['targets']
print(f"ok: run and tune both {rb} B per sample; target {run['target']['fs_type']}, {run['target']['engine']}, "
      f"direct={run['target']['direct']}")
PY
