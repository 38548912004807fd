#!/usr/bin/python3
"""The real PyTorch side of tools/bench-dataloader, tools/bench-smallfiles and tools/calibrate-dataloader.

Runs one epoch of a stock map-style torch.utils.data.DataLoader over the files of a directory and
prints one JSON line with what it measured:

  {"samples", "bytes", "batches", "elapsed_s", "samples_per_s",
   "main_user_s", "main_sys_s", "workers_user_s", "workers_sys_s", "cpu_per_sample_us",
   "steady_samples_per_s" (first batch to last), "interior_samples_per_s", "interior_batches",
   "interior_cpu_idle_frac" (see interior_rate), ...}

The Dataset is the simplest real one: __getitem__ opens the file, reads all of it into a new
uint8 tensor and closes it (one file per sample, as a map-style Dataset of image files does).
Files differ in size, so the collate function concatenates the batch into one flat tensor plus a
tensor of lengths; like default_collate (torch 1.13 _utils/collate.py) it allocates the output in
shared memory when it runs in a worker, so a batch crosses to the main process as one
shared-memory tensor (plus the small lengths tensor), never as a pickled copy.

Timing starts before iter(loader) (worker start-up included, as a user's epoch pays it with
persistent_workers=False) and ends after the last batch. CPU: getrusage of this process
(RUSAGE_SELF, all threads) over the epoch plus RUSAGE_CHILDREN (the worker processes, collected
when the loader joins them at the end of the epoch).

usage: bench_dataloader.py --dir DIR [--list FILE] --workers N --batch-size B [--seed S]
The file list is FILE (one path per line, relative to DIR) or, without --list, every regular file
under DIR except ioprobe's manifest, sorted.
"""
import argparse
import json
import os
import resource
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class FileBytes(Dataset):
    """One sample = the bytes of one file, as a 1-D uint8 tensor."""

    def __init__(self, root, paths):
        self.root = root
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(os.path.join(self.root, self.paths[i]), "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            t = torch.empty(size, dtype=torch.uint8)
            view = memoryview(t.numpy())
            got = 0
            while got < size:
                n = f.readinto(view[got:])
                if not n:
                    raise IOError(f"{self.paths[i]}: short read ({got} of {size} bytes)")
                got += n
        return t


def collate_flat(batch):
    """Concatenates a batch of variable-length byte tensors: (flat uint8 tensor, int64 lengths)."""
    lengths = torch.tensor([t.numel() for t in batch], dtype=torch.int64)
    out = None
    if get_worker_info() is not None:
        # What default_collate does in a worker: build the result directly in shared memory.
        total = int(lengths.sum())
        try:
            storage = batch[0].storage()._new_shared(total)
            out = batch[0].new(storage).resize_(total)
        except (AttributeError, TypeError):
            out = None  # other torch versions: torch.cat below, moved to shared memory when sent
    return torch.cat(batch, out=out), lengths


def list_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith(".ioprobe"):
                continue
            p = os.path.join(dirpath, name)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root))
    return out


def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime, r.ru_stime


_TICK = os.sysconf("SC_CLK_TCK")


def workers_cpu(it):
    """user+sys seconds of the iterator's worker processes so far (/proc/PID/stat, all threads),
    or 0.0 with num_workers=0; None when a worker's stat cannot be read."""
    total = 0.0
    for w in getattr(it, "_workers", []):
        try:
            with open(f"/proc/{w.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15)
        except (OSError, IndexError, ValueError):
            return None
    return total


def run_epoch(root, paths, workers, batch_size, seed, prefetch_factor=2):
    ds = FileBytes(root, paths)
    g = torch.Generator()
    g.manual_seed(seed)
    kw = dict(batch_size=batch_size, shuffle=True, num_workers=workers, collate_fn=collate_flat, generator=g)
    if workers > 0:
        kw["prefetch_factor"] = prefetch_factor
    loader = DataLoader(ds, **kw)
    nb = len(loader)
    s_u0, s_s0 = cpu(resource.RUSAGE_SELF)
    c_u0, c_s0 = cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    samples = nbytes = batches = 0
    steady = {}
    arrivals = []  # (perf_counter, samples so far) after each batch
    it = iter(loader)
    for flat, lengths in it:
        samples += lengths.numel()
        nbytes += flat.numel()
        batches += 1
        arrivals.append((time.perf_counter(), samples, cpu_idle_total()))
        if batches == 1 or batches == nb:
            # Snapshot after the first and the last batch (before the iterator shuts the workers down).
            steady["t1" if batches > 1 else "t0"] = (time.perf_counter(), samples, cpu(resource.RUSAGE_SELF),
                                                     workers_cpu(it))
    elapsed = time.perf_counter() - t0
    s_u1, s_s1 = cpu(resource.RUSAGE_SELF)
    del it, loader
    c_u1, c_s1 = cpu(resource.RUSAGE_CHILDREN)
    res = {
        "tool": "pytorch", "torch_version": torch.__version__, "workers": workers, "batch_size": batch_size,
        "samples": samples, "bytes": nbytes, "batches": batches, "elapsed_s": elapsed,
        "first_batch_s": steady["t0"][0] - t0 if "t0" in steady else 0.0,
        "samples_per_s": samples / elapsed if elapsed > 0 else 0.0,
        "main_user_s": s_u1 - s_u0, "main_sys_s": s_s1 - s_s0,
        "workers_user_s": c_u1 - c_u0, "workers_sys_s": c_s1 - c_s0,
    }
    total = res["main_user_s"] + res["main_sys_s"] + res["workers_user_s"] + res["workers_sys_s"]
    res["cpu_s"] = total
    res["cpu_per_sample_us"] = total * 1e6 / samples if samples else 0.0
    # Steady state: from the first batch to the last (worker start-up and the first batch excluded).
    if "t0" in steady and "t1" in steady:
        (ta, na, (mua, msa), wa), (tb, nb_, (mub, msb), wb) = steady["t0"], steady["t1"]
        n = nb_ - na
        res["steady_samples"] = n
        res["steady_samples_per_s"] = n / (tb - ta) if tb > ta else 0.0
        main_us = ((mub - mua) + (msb - msa)) * 1e6 / n if n else 0.0
        work_us = (wb - wa) * 1e6 / n if n and wa is not None and wb is not None else float("nan")
        res["steady_main_cpu_per_sample_us"] = main_us
        res["steady_worker_cpu_per_sample_us"] = work_us
        res["steady_cpu_per_sample_us"] = main_us + work_us
    else:  # a single batch: no steady state
        res["steady_samples"] = 0
        res["steady_samples_per_s"] = res["samples_per_s"]
        res["steady_main_cpu_per_sample_us"] = res["steady_worker_cpu_per_sample_us"] = float("nan")
        res["steady_cpu_per_sample_us"] = res["cpu_per_sample_us"]
    res.update(interior_rate(arrivals, workers * prefetch_factor if workers > 0 else 1))
    return res


def cpu_idle_total():
    """(idle + iowait, all) jiffies of the whole host from /proc/stat, or None where unreadable."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)
    except (OSError, ValueError, IndexError):
        return None


def interior_rate(arrivals, outstanding):
    """Samples/s between the batch after the first `outstanding` (workers x prefetch_factor) and
    the batch `outstanding` before the last: the loader's steady state with the same work in
    flight at both ends of the window.

    First-batch-to-last over-counts with many workers: the workers start together, so when the
    first batch arrives up to workers x prefetch_factor batches are already done or under way, yet
    only the first is left out of the window (docs/benchmarks/tune.md, "Tune against the real loader", has a
    measured example). At the epoch's end the
    workers run out of work one by one, which under-counts. Leaving `outstanding` batches out at
    both ends removes both. Falls back to first to last (interior_batches 0) when the epoch is too
    short to leave at least `outstanding` batches inside. Also the host's idle CPU share over the
    window (/proc/stat: idle + iowait over all), which tells a loader short of work from one short
    of CPU."""
    k0, k1 = outstanding, len(arrivals) - 1 - outstanding
    if k1 - k0 < max(outstanding, 2):
        if len(arrivals) >= 2 and arrivals[-1][0] > arrivals[0][0]:
            rate = (arrivals[-1][1] - arrivals[0][1]) / (arrivals[-1][0] - arrivals[0][0])
        else:
            rate = 0.0
        return {"interior_samples_per_s": rate, "interior_batches": 0, "interior_cpu_idle_frac": None}
    (ta, na, ca), (tb, nb, cb) = arrivals[k0], arrivals[k1]
    idle = (cb[0] - ca[0]) / (cb[1] - ca[1]) if ca and cb and cb[1] > ca[1] else None
    return {"interior_samples_per_s": (nb - na) / (tb - ta) if tb > ta else 0.0, "interior_batches": k1 - k0,
            "interior_cpu_idle_frac": idle}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--list", help="file with one path per line, relative to --dir")
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefetch-factor", type=int, default=2)
    a = ap.parse_args()
    if a.list:
        with open(a.list) as f:
            paths = [line.rstrip("\n") for line in f if line.strip()]
    else:
        paths = list_files(a.dir)
    if not paths:
        print(f"bench_dataloader.py: no files under {a.dir}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(run_epoch(a.dir, paths, a.workers, a.batch_size, a.seed, a.prefetch_factor)), flush=True)


if __name__ == "__main__":
    main()
