#!/usr/bin/python3
"""The real side of tools/bench-calibration: one epoch of a real DataLoader over the user's Dataset
(FILE.py:FUNC, loaded as `ioprobe calibrate` loads it; a thread pipeline's FUNC(paths, num_threads,
batch_size) at --workers threads instead) and one JSON line: samples, elapsed_s,
samples_per_s (iter() to the last batch, worker start-up included), steady_samples_per_s (first
batch to the last), first_batch_s (iter() to the first batch: worker start-up and one batch),
cpu_s (CPU seconds, user + system, of this process and its worker processes over the epoch, from
getrusage: the workers are joined at the epoch's end, so their time is in RUSAGE_CHILDREN).

--pin-apart (an experiment, not used by tools/bench-calibration): the main process on the first
allowed CPU, every worker on the others, so that no worker shares a CPU with the main process (the
scheduler otherwise places the three processes of a 2-worker loader on 2 CPUs as it likes).

usage: bench_calibration_epoch.py --factory FILE.py --func FUNC --data DIR --workers N --batch-size B
       [--samples N] [--pin-apart]
"""
import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import ioprobe_calibrate as drv  # noqa: E402
import ioprobe_threads  # noqa: E402


def batch_samples(b, torch):
    """Samples in a batch: (data, labels) and (flat, lengths) pairs count their second tensor; a
    dict of columns (a table's rows, default_collate's batch of dict samples) its first column; a
    list from an identity collate its items; a stacked tensor its first dimension."""
    if isinstance(b, dict):
        return len(next(iter(b.values())))
    if isinstance(b, (tuple, list)) and len(b) == 2 and isinstance(b[1], torch.Tensor):
        return len(b[1])
    return len(b)


def data_loader(a, torch, make, collate, paths, init):
    from torch.utils.data import DataLoader
    g = torch.Generator()
    g.manual_seed(a.seed)
    kw = dict(batch_size=a.batch_size, shuffle=True, num_workers=a.workers, generator=g, worker_init_fn=init)
    if collate is not None:
        kw["collate_fn"] = collate
    return DataLoader(make(paths), **kw)


def cpu_s():
    """User + system CPU seconds of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--factory", required=True)
    ap.add_argument("--func", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--samples", type=int, default=1 << 30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pin-apart", action="store_true")
    a = ap.parse_args()
    init = None
    if a.pin_apart:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            sys.exit(f"bench_calibration_epoch.py: --pin-apart needs 2 or more allowed CPUs, this process has {cpus}")
        os.sched_setaffinity(0, {cpus[0]})

        def init(_worker_id):
            os.sched_setaffinity(0, set(cpus[1:]))
    import torch
    make, collate = drv.load_user_code(a.factory, a.func)
    paths = drv.list_files(a.data, a.samples)
    if ioprobe_threads.is_pipeline(make):  # a thread pipeline: --workers threads, its own batches
        loader = make(paths, a.workers, batch_size=a.batch_size)
        count = ioprobe_threads.batch_len
    else:
        loader = data_loader(a, torch, make, collate, paths, init)
        count = lambda b: batch_samples(b, torch)  # noqa: E731
    c0 = cpu_s()
    t0 = time.perf_counter()
    t1 = None
    n = n1 = 0
    for b in loader:
        n += count(b)
        if t1 is None:
            t1, n1 = time.perf_counter(), n
    t2 = time.perf_counter()
    c2 = cpu_s()
    print(json.dumps({"cpu_s": c2 - c0, "samples": n, "elapsed_s": t2 - t0, "samples_per_s": n / (t2 - t0), "first_batch_s": t1 - t0,
                      "steady_samples_per_s": (n - n1) / (t2 - t1) if t2 > t1 else 0.0}), flush=True)


if __name__ == "__main__":
    main()
