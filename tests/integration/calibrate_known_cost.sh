#!/bin/bash
# ioprobe calibrate measures a Dataset whose CPU cost is known: each __getitem__ burns 2 ms of its
# thread's CPU time (a busy loop on the thread CPU clock, so the figure does not depend on the
# host's load) and the collate_fn returns one flat tensor of the batch's samples and their lengths
# (a sample is 1000 floats: the batch's first tensor does not tell the number of samples). The
# worker and the in-process CPU per sample must come out at 2 ms plus the loader's own small
# overhead: at least 1.9 ms (less means work was missed) and at most 2.8 ms. The first sample in
# each process burns 50 ms more: a fresh worker's one-time CPU, reported apart as its start-up CPU
# (at least 50 ms, its fork and first batches included), not spread over the samples.
# 12 batches, so the shortest steady window (one worker: its batches 3-12) holds 160 samples: a
# one-time CPU cost of ~50 ms inside a worker's window (a loaded CI machine once gave a row 2,843 µs
# at 6 batches, 64 samples in that window; a full garbage collection in a forked worker alone costs
# ~30 ms) moves a row by ~310 µs, not ~780. Skips (77) where no python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=$(torch_python) || exit 77
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate-cost.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 192); do head -c 4096 /dev/urandom > "$W/data/f$i.bin"; done

cat > "$W/busy_ds.py" <<'PYEOF'
import os
import time

import torch
from torch.utils.data import Dataset

BURN_S = 0.002
FIRST_S = 0.05  # once per process: a fresh worker's one-time cost


class Busy(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        t0 = time.thread_time()
        burn = BURN_S
        if getattr(self, "pid", None) != os.getpid():
            self.pid = os.getpid()
            burn += FIRST_S
        while time.thread_time() - t0 < burn:
            pass
        return torch.zeros(1000)


def make(paths):
    return Busy(paths)


def collate_fn(batch):
    return torch.cat(batch), torch.tensor([len(t) for t in batch])
PYEOF

"$IOPROBE" calibrate --dataset-factory "$W/busy_ds.py:make" --data "$W/data" --batch-size 16 --samples 192 \
  --python "$PY" --json "$W/cal.json" > "$W/out.txt" 2> "$W/err.txt"
rc=$?
[ $rc = 0 ] || fail "calibrate exit $rc: $(cat "$W/err.txt")"
within() {  # WHAT VALUE
  json "$W/cal.json" "1900 <= $2 <= 2800" | grep -qx True || fail "$1 is $(json "$W/cal.json" "$2") µs, not 2000 µs (1900-2800)"
}
within "worker CPU per sample" 'd["figures"]["worker_cpu_per_sample_us"]["value"]'
# The burn is in __getitem__, on the worker loop's thread; the flat batch pickles cheaply, so the
# feeder thread's part is small, and the two add up to the total.
json "$W/cal.json" 'd["figures"]["worker_cpu_split"]["measured"]' | grep -qx True || fail "worker CPU split not measured"
within "worker loop CPU per sample" 'd["figures"]["worker_cpu_split"]["loop_per_sample_us"]["value"]'
json "$W/cal.json" 'd["figures"]["worker_cpu_split"]["put_per_sample_us"]["value"] < 500' | grep -qx True \
  || fail "worker put CPU per sample: $(json "$W/cal.json" 'd["figures"]["worker_cpu_split"]') (a flat batch of 16 samples)"
within "in-process CPU per sample" 'd["figures"]["inprocess_cpu_per_sample_us"]["value"]'
for r in 0 1 2 3 4 5; do
  within "row $r's CPU per sample" "[r.get('worker_cpu_per_sample_us', r.get('inprocess_cpu_per_sample_us')) for r in d['rows']][$r]"
done
json "$W/cal.json" 'all(r["worker_startup_cpu_s"]["n"] == r["num_workers"] for r in d["rows"] if r["num_workers"])' \
  | grep -qx True || fail "no start-up CPU per worker"
json "$W/cal.json" 'd["figures"]["startup_cpu"]["measured"] and 0.048 <= d["figures"]["startup_cpu"]["worker_s"]["min"] < 1.0' \
  | grep -qx True || fail "worker start-up CPU: $(json "$W/cal.json" 'd["figures"].get("startup_cpu")') (50 ms burned once per worker)"
json "$W/cal.json" 'd["figures"]["startup_cpu"]["main_s"]["value"] > 0' | grep -qx True || fail "main start-up CPU"
# 12 batches of 16: the rows' rates are over batches 2-12, 176 samples, whatever the batch's shape.
json "$W/cal.json" 'sorted(set((r["batches"], r["samples"]) for r in d["rows"] if not r.get("oversubscribed")))' | grep -qxF "[(11, 176)]" \
  || fail "samples counted: $(json "$W/cal.json" '[(r["batches"], r["samples"]) for r in d["rows"]]')"
# The crowded levels (num_workers 4 and 8 on 2 CPUs, or 2 and 4 on 1): 3 and 6 batches per worker,
# their steady batches counted; a worker's CPU per sample there is still at least the 2 ms burned.
json "$W/cal.json" 'sorted(set((r["num_workers"], r["pass_samples"]) for r in d["rows"] if r.get("oversubscribed")))' \
  | python3 -c 'import ast,sys; v=ast.literal_eval(sys.stdin.read()); sys.exit(not (len(v) == 4 and all(n == 3 * 16 * w or n == 6 * 16 * w for w, n in v)))' \
  || fail "crowded passes: $(json "$W/cal.json" '[(r["num_workers"], r.get("pass_samples")) for r in d["rows"] if r.get("oversubscribed")]')"
json "$W/cal.json" 'all(p["worker_cpu_per_sample_us"]["value"] >= 1900 for p in d["figures"]["oversubscription"]["points"])' \
  | grep -qx True || fail "crowded CPU per sample below the 2 ms burned: $(json "$W/cal.json" 'd["figures"]["oversubscription"]')"
# One thread burning 2 ms per sample delivers at most 500 samples/s in the main process.
json "$W/cal.json" 'all(r["samples_per_s"] <= 500 for r in d["rows"] if r["num_workers"] == 0)' | grep -qx True \
  || fail "num_workers=0 rates above 500 samples/s: $(json "$W/cal.json" '[r["samples_per_s"] for r in d["rows"]]')"
echo "PASS"
