#!/bin/bash
# run, tune and capacity with --calibration state how the calibration changed the prediction: the
# modelled CPU ceiling with the calibration's costs beside the same model without them (a run's
# defaults: no CPU ceiling), labelled "modelled", in the text and in calibration_effect. The
# calibration is tests/fixtures/calibration/sample.json: the unit tests' sample calibration
# (tests/unit/calibration_fixture.hpp sample_calibration, as calibration_to_json writes it), so no
# Python or torch is needed. A run without --calibration has neither.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
CAL="${IOPROBE_SOURCE_DIR:-$(dirname "$0")/../..}/tests/fixtures/calibration/sample.json"
[ -f "$CAL" ] || fail "no calibration fixture at $CAL"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
W=$(mktemp -d /dev/shm/ioprobe-caleffect-XXXXXX)
trap 'rm -rf "$W"' EXIT
ds=(--dataset imagenet-like --files 256 --file-size 4KiB --file-size-dist fixed --dirs 1 --dir "$W/ds" --cache warm
    --batch-size 64)
"$IOPROBE" gen --quiet "${ds[@]}" > /dev/null || fail "gen failed"

"$IOPROBE" run "${ds[@]}" --workers 2 --calibration "$CAL" --gpu-samples-per-s 1e9 --json "$W/run.json" \
  > "$W/run.txt" 2>&1 || fail "run --calibration exit $?: $(cat "$W/run.txt")"
python3 - "$W/run.json" <<'PY' || fail "run: calibration_effect wrong"
import json, sys
d = json.load(open(sys.argv[1])); e = d["ingest"]["calibration_effect"]
assert e["label"] == "modelled", e
assert e["setting"]["num_workers"] == 2 and e["setting"]["ranks"] == 1 and e["setting"]["batch_size"] == 64, e["setting"]
assert e["calibrated_ceiling_samples_per_s"] > 0 and e["calibrated_bound"] != "none", e
assert e["uncalibrated_ceiling_samples_per_s"] is None and e["uncalibrated_bound"] == "none", e
l = d["loader"]
# The calibrated worker's serial CPU per sample is the run's own loop + GIL share of the put + other threads.
want = l["cpu_per_sample_us"] + l["worker_put_cpu_per_sample_us"] * l["worker_put_gil_share"] + l["worker_other_cpu_per_sample_us"]
assert abs(e["calibrated"]["worker_us_per_sample"] - want) < 1e-6 * max(1, want), (e["calibrated"], want)
print(f"ok: run: modelled ceiling {e['calibrated_ceiling_samples_per_s']:.0f} samples/s ({e['calibrated_bound']}) "
      f"with the calibration, none without; delivered {d['ingest']['delivered_samples_per_s']:.0f}")
PY
grep -qE "^  calibration effect +modelled, not measured: CPU ceiling at 1 rank\(s\) x 2 worker\(s\) on [0-9]+ CPU\(s\): with the calibration [0-9,]+ samples/s \(bound: [a-zA-Z ]+;.*\), without it no CPU ceiling \(0 µs CPU per sample modelled\); the run delivered [0-9,]+ samples/s \(measured\) = [0-9]+% of the calibrated ceiling" \
  "$W/run.txt" || fail "run text lacks the calibration effect line: $(grep -A1 'calibration' "$W/run.txt")"

# Without --calibration: no such section, no such line.
"$IOPROBE" run "${ds[@]}" --workers 2 --gpu-samples-per-s 1e9 --json "$W/plain.json" > "$W/plain.txt" 2>&1 \
  || fail "run exit $?: $(cat "$W/plain.txt")"
json "$W/plain.json" '"calibration_effect" in d["ingest"]' | grep -qx False || fail "calibration_effect without --calibration"
grep -q "calibration effect" "$W/plain.txt" && fail "a calibration effect line without --calibration"

# The saved document renders the same line.
"$IOPROBE" report "$W/run.json" > "$W/report.txt" 2>&1 || fail "report exit $?"
grep -q "^  calibration effect   modelled, not measured" "$W/report.txt" || fail "report lacks the line"

# tune: at the recommended num_workers.
"$IOPROBE" tune "${ds[@]}" --calibration "$CAL" --gpu-samples-per-s 1e9 --workers 1,2 --prefetch-factors 2 \
  --repeats 1 --point-time 2s --budget 60s --json "$W/tune.json" > "$W/tune.txt" 2>&1
rc=$?; [ $rc = 0 ] || [ $rc = 1 ] || fail "tune --calibration exit $rc: $(cat "$W/tune.txt")"
python3 - "$W/tune.json" <<'PY' || fail "tune: calibration_effect wrong"
import json, sys
d = json.load(open(sys.argv[1])); e = d["tune"]["calibration_effect"]; r = d["recommendation"]
assert e["label"] == "modelled" and e["uncalibrated_ceiling_samples_per_s"] is None, e
if r["valid"]:
    assert e["setting"]["num_workers"] == d["points"][r["point"]]["num_workers"], (e["setting"], r)
print(f"ok: tune: modelled at num_workers {e['setting']['num_workers']}: {e['calibrated_ceiling_samples_per_s']:.0f} samples/s")
PY
grep -qE "^  effect +modelled, not measured: CPU ceiling at 1 rank\(s\) x [12] worker\(s\).*, without it no CPU ceiling" "$W/tune.txt" \
  || fail "tune text lacks the line: $(head -20 "$W/tune.txt")"

# capacity: at the GPU ranks found fed.
"$IOPROBE" capacity "${ds[@]}" --workers 2 --calibration "$CAL" --gpu-samples-per-s 200 --point-time 2s --repeats 1 \
  --max-gpus 2 --budget 60s --json "$W/cap.json" > "$W/cap.txt" 2>&1
rc=$?; [ $rc = 0 ] || [ $rc = 1 ] || fail "capacity --calibration exit $rc: $(cat "$W/cap.txt")"
python3 - "$W/cap.json" <<'PY' || fail "capacity: calibration_effect wrong"
import json, sys
d = json.load(open(sys.argv[1])); c = d["capacity"]; e = c["calibration_effect"]
assert e["label"] == "modelled" and e["uncalibrated_ceiling_samples_per_s"] is None, e
assert e["setting"]["ranks"] == max(1, c["gpus_fed"]), (e["setting"], c["gpus_fed"])
print(f"ok: capacity: modelled at {e['setting']['ranks']} rank(s): {e['calibrated_ceiling_samples_per_s']:.0f} samples/s")
PY
grep -qE "^  effect +modelled, not measured: CPU ceiling at [0-9]+ rank\(s\) x 2 worker\(s\).*, without it no CPU ceiling" "$W/cap.txt" \
  || fail "capacity text lacks the line: $(head -20 "$W/cap.txt")"
echo PASS
