#!/bin/bash
# ioprobe calibrate under PyTorch 2.x: the isolated .venv-torch2 at the top of the source tree
# (tools/setup --torch2-venv: torch from PyPI, Debian's torch 1.13 not visible) runs the driver on a
# tiny map-style Dataset and a tiny IterableDataset that splits its files across the workers. For
# both, the document names that interpreter and its torch 2.x version (also in the text), the
# kind of Dataset, every pass (num_workers 0-2, with and without the pin copy) with its steady
# batches and samples, the worker's CPU split by thread (the queue feeder's thread found under 2.x),
# the bytes and tensors of a batch and the start-up figures; nothing of torch's is warned on stderr;
# `run --calibration` takes the document. Skips (77) where .venv-torch2 is missing.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
ROOT=${IOPROBE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=$ROOT/.venv-torch2/bin/python
if [ ! -x "$PY" ]; then
  echo "SKIP: no $PY (tools/setup --torch2-venv makes it: PyTorch 2.x from PyPI, about 5.4 GB)"
  exit 77
fi
# setup removes a venv whose install failed: one that is here must hold torch 2.x. Its installed
# release, read without importing torch (seconds on a loaded host): torch.__version__ adds a local
# label (2.15.0+cu132).
TORCH=$("$PY" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>&1) || fail "$PY has no torch: $TORCH"
case $TORCH in 2.*) ;; *) fail "$PY has torch $TORCH, not 2.x" ;; esac
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate-torch2.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 96); do head -c 4096 /dev/urandom > "$W/data/f$i.bin"; done

# Each sample: 256 float32 values (1024 B) from its file; default_collate stacks 16 into 16 KiB.
cat > "$W/tiny2.py" <<'PYEOF'
import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info


def sample(path):
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read(256)), dtype=torch.uint8).float()


class Files(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return sample(self.paths[i])


class Stream(IterableDataset):
    """Every num_workers-th file per worker, as a sharded stream deals them."""

    def __init__(self, paths):
        self.paths = paths

    def __iter__(self):
        info = get_worker_info()
        for p in self.paths[info.id::info.num_workers] if info else self.paths:
            yield sample(p)


def make(paths):
    return Files(paths)


def make_stream(paths):
    return Stream(paths)
PYEOF

check() {  # WHAT EXPRESSION SHOWN: EXPRESSION (over d, the document $doc) must be True, else SHOWN is printed
  json "$doc" "$2" | grep -qx True || fail "$kind under torch $TORCH: $1: $(json "$doc" "$3")"
}
# 96 files, batch 16: 6 batches a pass, the fewest calibrate takes; the rates are over batches 2-6.
for kind in map-style iterable; do
  func=make
  [ $kind = iterable ] && func=make_stream
  doc=$W/$kind.json
  "$IOPROBE" calibrate --dataset-factory "$W/tiny2.py:$func" --data "$W/data" --batch-size 16 --samples 96 \
    --oversubscribe none --python "$PY" --json "$doc" > "$W/$kind.txt" 2> "$W/$kind.err" \
    || fail "$kind: calibrate under torch $TORCH exit $?: $(tail -5 "$W/$kind.err")"
  check "the interpreter" "d['python']['executable'] == '$PY'" 'd["python"]'
  check "the torch version" "d['python']['torch_version'].split('+')[0] == '$TORCH'" 'd["python"]'
  check "the Dataset's kind" "d['code']['dataset'] == '$kind' and d['code']['collate'] == 'torch default_collate'" 'd["code"]'
  check "the passes" "sorted((r['num_workers'], r['pin_memory']) for r in d['rows']) == [(0, False), (0, True), (1, False), (1, True), (2, False), (2, True)]" \
    '[(r["num_workers"], r["pin_memory"]) for r in d["rows"]]'
  check "the steady batches" "all((r['batches'], r['samples'], r['dataset_samples']) == (5, 80, 96) for r in d['rows'])" \
    '[(r["num_workers"], r["batches"], r["samples"], r["dataset_samples"]) for r in d["rows"]]'
  check "the worker passes' samples" "all(r['pass_samples'] == 96 for r in d['rows'] if r['num_workers'])" \
    '[r.get("pass_samples") for r in d["rows"]]'
  check "the batch" "d['figures']['bytes_per_batch']['value'] == 16384 and d['figures']['tensors_per_batch']['value'] == 1 and not d['figures']['no_tensor_bytes']" \
    '(d["figures"]["bytes_per_batch"], d["figures"]["tensors_per_batch"])'
  check "the CPU figures" "all(d['figures'][k]['value'] > 0 for k in ('worker_cpu_per_sample_us', 'inprocess_cpu_per_sample_us', 'main_cpu_per_batch_us', 'worker_startup_s'))" \
    '{k: d["figures"][k] for k in ("worker_cpu_per_sample_us", "inprocess_cpu_per_sample_us", "main_cpu_per_batch_us", "worker_startup_s")}'
  # The split needs the multiprocessing.Queue feeder thread's own clock in each worker.
  check "the worker's CPU by thread" "d['figures']['worker_cpu_split']['measured'] and 'other_per_sample_us' in d['figures']['worker_cpu_split'] and d['figures']['startup_cpu']['measured']" \
    '(d["figures"]["worker_cpu_split"], d["figures"]["startup_cpu"])'
  check "the pin figure" "d['figures']['pin_memory']['measured'] and d['figures']['pin_memory']['cpu_per_batch_us']['value'] > 0" \
    'd["figures"]["pin_memory"]'
  grep -qE "torch $TORCH(\+[a-z0-9.]+)?, (no )?CUDA" "$W/$kind.txt" \
    || fail "$kind: the text does not name torch $TORCH: $(grep '^  python' "$W/$kind.txt")"
  # torch 2.x's deprecation and user warnings would reach the user's terminal through the driver.
  if grep -i "warning\|Traceback" "$W/$kind.err" | grep -v "^ioprobe calibrate: \[stdout of your code\]" | grep -q .; then
    fail "$kind: stderr under torch $TORCH has warnings: $(grep -i -A2 "warning\|Traceback" "$W/$kind.err" | head -8)"
  fi
  if python3 -c 'import jsonschema' 2>/dev/null; then
    python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
      "$doc" "$ROOT/reports/calibration.schema.json" || fail "$kind: schema"
  fi
done
grep -q "tiny2.py:make_stream (IterableDataset, torch default_collate)" "$W/iterable.txt" || fail "the text does not name the IterableDataset"
# A torch 2.x calibration drives a run like a 1.13 one: its worker cost reaches the run's document.
"$IOPROBE" run --data "$W/data" --batch-size 16 --workers 2 --cache warm --gpu-samples-per-s 1e9 --quiet \
  --calibration "$W/map-style.json" --json "$W/run.json" > /dev/null 2> "$W/run.err" || fail "run --calibration: $(tail -3 "$W/run.err")"
json "$W/run.json" 'abs(d["loader"]["cpu_per_sample_us"] - '"$(json "$W/map-style.json" 'd["figures"]["worker_cpu_split"]["loop_per_sample_us"]["value"]')"') < 1e-6' \
  | grep -qx True || fail "run did not take the torch $TORCH calibration's loop cost: $(json "$W/run.json" 'd["loader"]["cpu_per_sample_us"]')"
echo "PASS (torch $TORCH)"
