#!/bin/bash
# ioprobe calibrate with a tiny thread pipeline (FUNC(paths, num_threads) yields batches built by a
# ThreadPoolExecutor in the driver's process): the document's kind and figures (CPU per sample,
# its GIL share within 0..1, one row per thread count), `run --calibration` taking them as the
# thread model (one GIL for the workers, no feeder, sharer or main-process costs) and saying so,
# and the refusal, with the reason, of factories calibrate cannot measure. Skips (77) where no
# python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=$(torch_python) || exit 77
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate-threads.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 250); do head -c $((4000 + 10#$i * 13)) /dev/urandom > "$W/data/f$i.bin"; done

cat > "$W/pipe.py" <<'PYEOF'
from concurrent.futures import ThreadPoolExecutor

def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    return bytes(b ^ 0x5A for b in data[:512])  # Python-side work: holds the GIL

def make_pipeline(paths, num_threads, batch_size=32):
    with ThreadPoolExecutor(max_workers=num_threads) as ex:
        batch = []
        for s in ex.map(decode, paths):
            batch.append(s)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

def not_iterable(paths, num_threads):
    return 42

def single_samples(paths, num_threads):
    for p in paths:
        yield None
PYEOF

"$IOPROBE" calibrate --dataset-factory "$W/pipe.py:make_pipeline" --data "$W/data" --batch-size 32 --samples 250 \
  --oversubscribe 2 --python "$PY" --json "$W/cal.json" > "$W/out.txt" 2> "$W/err.txt" \
  || { cat "$W/err.txt"; fail "calibrate exit $?"; }
grep -q "thread pipeline" "$W/out.txt" || fail "the text does not name the thread pipeline: $(cat "$W/out.txt")"
grep -q "of it under the GIL" "$W/out.txt" || fail "no GIL share in the text: $(cat "$W/out.txt")"
[ "$(json "$W/cal.json" 'd["code"]["dataset"]')" = thread-pipeline ] || fail "kind: $(json "$W/cal.json" 'd["code"]')"
# 250 files in batches of 32: seven full batches and a partial one of 26; the batch size is the full one.
[ "$(json "$W/cal.json" 'd["batch_size"]')" = 32 ] || fail "batch size: $(json "$W/cal.json" 'd["batch_size"]')"
json "$W/cal.json" 'sorted(r["num_threads"] for r in d["rows"])' | grep -qxF "[1, 2, $((2 * $(nproc) < 4 ? 2 * $(nproc) : 4))]" \
  || fail "rows: $(json "$W/cal.json" '[r["num_threads"] for r in d["rows"]]')"
json "$W/cal.json" 'all(r["samples_per_s"] > 0 and r["pass_samples"] == 250 for r in d["rows"])' | grep -qx True \
  || fail "rows' rates or samples: $(json "$W/cal.json" 'd["rows"]')"
T='d["figures"]["threads"]'
json "$W/cal.json" "$T"'["cpu_per_sample_us"]["value"] > 0 and 0 < '"$T"'["gil_share"]["value"] <= 1' | grep -qx True \
  || fail "thread figures: $(json "$W/cal.json" "$T")"
json "$W/cal.json" "$T"'["gil_measured"]' | grep -qx True || fail "GIL share not measured: $(json "$W/cal.json" "$T")"
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
    "$W/cal.json" "${IOPROBE_SOURCE_DIR:-$(dirname "$0")/../..}/reports/calibration.schema.json" || fail "schema"
fi

# run takes it as the thread model: the loop burns the pipeline's CPU per sample, no feeder, sharer
# or main-process cost, and the run says which model it used.
"$IOPROBE" run --data "$W/data" --calibration "$W/cal.json" --batch-size 32 --workers 2 --cache warm \
  --gpu-samples-per-s 1e9 --json "$W/run.json" > "$W/run.txt" 2>&1 || { cat "$W/run.txt"; fail "run --calibration exit $?"; }
grep -q "model: a thread pipeline" "$W/run.txt" || fail "run does not say it used the thread model: $(cat "$W/run.txt")"
json "$W/run.json" 'abs(d["loader"]["cpu_per_sample_us"] - '"$(json "$W/cal.json" "$T"'["cpu_per_sample_us"]["value"]')"') < 1e-6' \
  | grep -qx True || fail "CPU per sample not taken: $(json "$W/run.json" 'd["loader"]')"
json "$W/run.json" 'd["loader"].get("worker_put_cpu_per_sample_us", 0) == 0 and d["loader"].get("worker_other_cpu_per_sample_us", 0) == 0 and d["loader"]["main_cpu_per_batch_us"] == 0' \
  | grep -qx True || fail "a DataLoader cost in the thread model: $(json "$W/run.json" 'd["loader"]')"
json "$W/run.json" 'd["results"]["samples"] == 250' | grep -qx True || fail "samples: $(json "$W/run.json" 'd["results"]["samples"]')"

# Factories calibrate cannot measure: refused (exit 2) with the reason.
for f in not_iterable:"not an iterable of batches" single_samples:"not a batch"; do
  func=${f%%:*} why=${f#*:}
  rc=0
  "$IOPROBE" calibrate --dataset-factory "$W/pipe.py:$func" --data "$W/data" --batch-size 32 --samples 250 \
    --python "$PY" --json "$W/bad.json" > /dev/null 2> "$W/err.txt" || rc=$?
  [ "$rc" = 2 ] || fail "$func: exit $rc, not 2: $(cat "$W/err.txt")"
  grep -q "$why" "$W/err.txt" || fail "$func: the reason is not given: $(cat "$W/err.txt")"
  [ ! -e "$W/bad.json" ] || fail "$func: a document was written"
done
echo PASS
