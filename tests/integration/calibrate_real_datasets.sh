#!/bin/bash
# ioprobe calibrate on Datasets as people write them: samples with non-tensor fields (a dict with a
# path string, an int label, a tuple holding a numpy array, a string and a list) are measured as
# torch's default_collate batches them, the bytes from the batch's tensors and the parts without
# tensor bytes named; a field default_collate refuses is named with the DataLoader's own error
# (and a module's collate_fn that accepts it is used); a Dataset whose __len__ is 0 is said so; the
# user's prints on stdout are shown marked and counted; progress names the step running; --timeout
# ends a factory that never returns, and a worker stuck in __getitem__, with each process's Python
# stack and the step, exit 124, no document. Skips (77) where no python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=$(torch_python) || exit 77
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calreal.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 200); do head -c 2000 /dev/urandom > "$W/data/f$i.bin"; done

cat > "$W/real_ds.py" <<'PYEOF'
import time
import numpy as np
import torch
from torch.utils.data import Dataset, get_worker_info

class Fields(Dataset):
    """A sample as people write it: 256 float32 (1,024 B), its path, an int label, and a tuple of a
    4-float32 numpy array, a string and a list of an int and a float."""
    def __init__(self, paths):
        self.paths = paths
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            b = f.read(256)
        return {"image": torch.frombuffer(bytearray(b), dtype=torch.uint8).float(), "path": self.paths[i],
                "label": 3, "meta": (np.zeros(4, dtype=np.float32), "jpeg", [1, 2.5])}

def fields(paths):
    print(f"fields: {len(paths)} paths")  # the user's print on stdout
    return Fields(paths)

class WithNone(Fields):
    def __getitem__(self, i):
        return {"image": torch.zeros(4), "meta": (1, {"crop": None})}

def with_none(paths):
    return WithNone(paths)

class Ragged(Fields):
    def __getitem__(self, i):
        return {"image": torch.zeros(4 + i % 2)}

def ragged(paths):
    return Ragged(paths)

def empty(paths):
    return Fields([p for p in paths if p.endswith(".jpg")])

def forever(paths):
    time.sleep(100000)

class StuckWorker(Fields):
    def __getitem__(self, i):
        info = get_worker_info()
        if info is not None:
            time.sleep(100000)
        return torch.zeros(4)

def stuck_worker(paths):
    return StuckWorker(paths)
PYEOF
# The same None field, with a collate_fn of the module that keeps it: accepted, as a DataLoader would.
cat > "$W/own_collate.py" <<'PYEOF'
import torch
from torch.utils.data import Dataset

class WithNone(Dataset):
    def __init__(self, paths):
        self.paths = paths
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        return {"image": torch.zeros(4), "crop": None}

def make(paths):
    return WithNone(paths)

def collate_fn(samples):
    return {"image": torch.stack([s["image"] for s in samples]), "crop": [s["crop"] for s in samples]}
PYEOF
cal() { "$IOPROBE" calibrate --data "$W/data" --batch-size 32 --samples 192 --python "$PY" --oversubscribe none "$@"; }

# (a) non-tensor fields: measured; bytes per batch from the tensors: image 32 x 1,024 + label 32 x 8
# (int64) + the numpy array 32 x 16 + the list's int and float 2 x 32 x 8 = 34,048 B.
cal --dataset-factory "$W/real_ds.py:fields" --json "$W/fields.json" > "$W/fields.out" 2> "$W/fields.err" \
  || fail "fields: exit $?: $(cat "$W/fields.err")"
[ "$(json "$W/fields.json" 'd["figures"]["bytes_per_batch"]["value"]')" = "34048.0" ] \
  || fail "fields: bytes per batch $(json "$W/fields.json" 'd["figures"]["bytes_per_batch"]')"
json "$W/fields.json" 'd["figures"]["no_tensor_bytes"]' | grep -qF "[{'field': \"batch['path']\", 'holds': 'list of 32 str'}, {'field': \"batch['meta'][1]\", 'holds': 'tuple of 32 str'}]" \
  || fail "fields: parts without tensor bytes: $(json "$W/fields.json" 'd["figures"].get("no_tensor_bytes")')"
grep -qF "no tensor bytes in       batch['path'] (list of 32 str), batch['meta'][1]" "$W/fields.out" \
  || fail "fields: the text does not name the parts without tensor bytes: $(cat "$W/fields.out")"
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
    "$W/fields.json" "${IOPROBE_SOURCE_DIR:-$(dirname "$0")/../..}/reports/calibration.schema.json" || fail "fields: schema"
fi
# (c) its print reached stderr marked, and was counted; the report alone is on stdout.
grep -qxF "ioprobe calibrate: [stdout of your code] fields: 192 paths" "$W/fields.err" \
  || fail "fields: the user's print is not shown marked: $(cat "$W/fields.err")"
grep -q "your code printed [0-9]* line(s) .* on stdout; all shown above after '\[stdout of your code\] '" "$W/fields.err" \
  || fail "fields: no word of the user's stdout: $(cat "$W/fields.err")"
grep -q "fields: 192 paths" "$W/fields.out" && fail "fields: the user's print is in the report"
# (b) progress: each step named as it starts, the passes counted.
grep -q "^ioprobe calibrate: \[[0-9.]* s\] reading 192 files of .* into the page cache" "$W/fields.err" \
  && grep -q "^ioprobe calibrate: \[[0-9.]* s\] calling your Dataset factory fields(paths) of .*real_ds.py with 192 paths" "$W/fields.err" \
  && grep -q "^ioprobe calibrate: \[[0-9.]* s\] pass 3 of 6: num_workers=1: one pass over 192 files" "$W/fields.err" \
  || fail "fields: the steps are not named: $(cat "$W/fields.err")"
echo "ok: non-tensor fields measured, their parts named; stdout marked; steps named"

# A field default_collate refuses: named with the DataLoader's own error, exit 2, before any pass.
refused() {  # NAME FACTORY FIELD ERROR
  cal --dataset-factory "$2" > "$W/$1.out" 2> "$W/$1.err"; local rc=$?
  [ $rc = 2 ] || fail "$1: exit $rc, not 2: $(cat "$W/$1.err")"
  grep -qF "refuses $3 of the Dataset's samples, as a DataLoader would: $4" "$W/$1.err" \
    || fail "$1: the field or the DataLoader's error is not named: $(cat "$W/$1.err")"
  grep -q "pass 1 of" "$W/$1.err" && fail "$1: refused only after a pass"
  echo "ok: $1 -> $(grep refuses "$W/$1.err")"
}
refused none "$W/real_ds.py:with_none" "sample['meta'][1]['crop']" \
  "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>"
refused ragged "$W/real_ds.py:ragged" "sample['image']" "RuntimeError: stack expects each tensor to be equal size"
cal --dataset-factory "$W/own_collate.py:make" --json "$W/own.json" > /dev/null 2> "$W/own.err" \
  || fail "a collate_fn that keeps None: exit $?: $(cat "$W/own.err")"
json "$W/own.json" 'd["figures"]["no_tensor_bytes"], d["figures"]["bytes_per_batch"]["value"]' \
  | grep -qxF "([{'field': \"batch['crop']\", 'holds': 'list of 32 NoneType'}], 512.0)" \
  || fail "own collate_fn: $(json "$W/own.json" 'd["figures"]["no_tensor_bytes"], d["figures"]["bytes_per_batch"]')"
# (c) __len__ 0 in words, not torch's sampler error.
cal --dataset-factory "$W/real_ds.py:empty" > /dev/null 2> "$W/empty.err"; rc=$?
[ $rc = 2 ] && grep -qF "real_ds.py: the Dataset's __len__ returned 0 for 192 paths given to empty(paths)" "$W/empty.err" \
  && ! grep -q "Traceback" "$W/empty.err" || fail "__len__ 0: exit $rc: $(cat "$W/empty.err")"

# (b) --timeout: a factory that never returns; a worker stuck in __getitem__.
timeout_case() {  # NAME FACTORY STEP STACK_LINE
  local t0=$SECONDS rc
  cal --dataset-factory "$2" --timeout 8s --json "$W/$1.json" > "$W/$1.out" 2> "$W/$1.err"; rc=$?
  [ $rc = 124 ] || fail "$1: exit $rc, not 124: $(cat "$W/$1.err")"
  [ $((SECONDS - t0)) -lt 40 ] || fail "$1: took $((SECONDS - t0)) s with --timeout 8s"
  grep -q "still: $3" "$W/$1.err" || fail "$1: no progress line while it hung: $(cat "$W/$1.err")"
  grep -q "Current thread 0x[0-9a-f]* (most recent call first)" "$W/$1.err" && grep -q "$4" "$W/$1.err" \
    || fail "$1: no stack with the user's line: $(cat "$W/$1.err")"
  grep -q "stopped: --timeout 8.00 s passed while the calibration was at: $3" "$W/$1.err" \
    && grep -q "give a longer --timeout" "$W/$1.err" || fail "$1: no step and hint: $(cat "$W/$1.err")"
  [ -e "$W/$1.json" ] && fail "$1: a document was written"
  pgrep -f "real_ds.py --func" > /dev/null && fail "$1: a process of the driver was left running: $(pgrep -af 'real_ds.py --func')"
  echo "ok: $1 -> $(tail -1 "$W/$1.err" | cut -c1-160)"
}
timeout_case factory "$W/real_ds.py:forever" "calling your Dataset factory forever(paths)" 'real_ds.py", line [0-9]* in forever'
timeout_case worker "$W/real_ds.py:stuck_worker" "pass 3 of 6: num_workers=1: one pass over 192 files: 0 of 192 samples done" \
  'real_ds.py", line [0-9]* in __getitem__'
grep -q "^ioprobe calibrate: -- process [0-9]*: started by the driver (a DataLoader worker" "$W/worker.err" \
  || fail "worker: the worker's stack is not labelled: $(cat "$W/worker.err")"
# --timeout's value: refused when it is not a duration; documented in --help.
cal --dataset-factory "$W/real_ds.py:fields" --timeout soon > /dev/null 2> "$W/e.txt"
[ $? = 2 ] && grep -q -- "--timeout" "$W/e.txt" || fail "--timeout soon: $(cat "$W/e.txt")"
"$IOPROBE" calibrate --help | tr -s ' \n' ' ' | grep -q -- "--timeout arg .*0: no limit.* exits 124 \[10m\]" \
  || fail "--help does not document --timeout"
echo "PASS"
