#!/usr/bin/python3
"""The Python side of `ioprobe calibrate`: runs the user's own Dataset in real PyTorch DataLoaders
and measures what each stage of the loader costs on this host. ioprobe runs it; it is not meant to
be run by hand (but may be, for debugging: it prints one JSON object on stdout).

The Dataset comes from FILE.py:FUNC, where FUNC(paths: list[str]) returns a torch Dataset over
those files: map-style (__getitem__ and __len__; loaded with shuffle=True) or an IterableDataset
(its own order; it splits its stream across workers itself, with get_worker_info, as it must in
training); a module-level `collate_fn`, when FILE.py defines one, is the DataLoader's collate_fn
(else torch's default_collate). The files are read once before any measurement so that they sit
in the page cache: the figures are CPU costs, not storage waits.

Measured, for num_workers in --workers (0, 1, 2 by default); samples are counted from the batch
sampler (a batch of B indices is B samples, whatever the collate_fn returns), or for an
IterableDataset as each worker collates them (the collate hands back the batch and its count, which
the main process unwraps); rates and main-process figures over the batches from the first to the
last (worker start-up and the first batch left out):
  worker CPU per sample   steady CPU time of the worker processes (each one's process CPU clock, all
                          threads) per sample, from the end of each worker's 2nd collate to the end of
                          its last: __getitem__, collate, and putting the batch into shared memory
    its parts             over the same window: the worker loop thread's own CPU clock (thread_time:
                          __getitem__ and collate); the multiprocessing.Queue feeder thread's own CPU
                          clock (QueueFeederThread: pickling the batch, moving each tensor's storage
                          into shared memory, writing the pipe while the loop already builds its next
                          batch); and the rest of the process clock, its other threads: chiefly
                          multiprocessing's resource sharer, which hands each tensor's file descriptor
                          to the main process, one round trip per tensor as it unpickles the batch
                          (torch's file_descriptor sharing strategy). The window holds the loop's batches 3..last and the
                          feeder's puts of about batches 2..last-but-one: as many puts as batches when
                          the feeder keeps up, and when it lags it is busy through the whole window, so
                          the window's CPU is still its steady cost; the two parts add up to the total
  worker first batches    each worker's CPU from its worker_init_fn to the end of the pass beyond that
                          steady cost: one-time costs of a fresh worker (feeder thread, first
                          allocations, lazy imports), paid once per worker per epoch
  in-process CPU/sample   num_workers=0: the same work in the main thread (no IPC)
  main CPU per batch      user+sys of the main process (getrusage RUSAGE_SELF) per batch: receiving,
                          unpickling and attaching the batch's shared memory; per-batch spread from
                          the main thread's CPU clock around each next()
  bytes per batch         bytes of the tensors in a batch (what crosses to the main process through
                          shared memory); the batch's parts with no tensor (strings, Python numbers, None
                          a collate_fn allows) are named in no_tensor_bytes (ioprobe_batch.py)
  tensors per batch       tensors in a batch: with torch's file_descriptor sharing strategy each is
                          one round trip of the main process with the worker's resource sharer
  worker start-up         from iter(loader) to each worker's worker_init_fn, seconds
  worker exit CPU         a worker's CPU after its last batch (shutdown and exit), from RUSAGE_CHILDREN
                          once the workers are reaped, less their clocks at the last batch, seconds
  worker start-up CPU     a worker's CPU from its fork to worker_init_fn plus its first batches' one-time
                          CPU plus its exit CPU, seconds; main start-up CPU: the main thread's CPU in iter() (the forks)
  oversubscribed passes   --oversubscribe P1,P2 (worker processes per CPU, each above 1): passes at
                          num_workers = P x K with this process, and so its workers, bound to K of its
                          CPUs (--oversubscribe-cpus; sched_setaffinity), over the files (repeated as
                          needed) for 3 and then 6 batches per worker: the worker figures above at that
                          crowding (rows marked oversubscribed, with cpus and workers_per_cpu), and the
                          workers' whole-life CPU (fork to exit, RUSAGE_CHILDREN: worker_life_cpu_s) over
                          the pass's pass_samples; no pin pass
  pin memory              per batch: tensor.pin_memory() where CUDA is available; without CUDA torch
                          cannot pin, and the figure is a copy of the batch into an mlock'ed buffer
                          (the same bytes moved into page-locked memory), marked as such

A FUNC that takes a parameter named num_threads is a thread pipeline's factory instead (threads of
this process sharing its GIL, no DataLoader): ioprobe_threads.py says what is measured and derived.

Before any pass the first two samples are collated as a DataLoader worker collates them: a field
the collate refuses is named with the DataLoader's own error (ioprobe_batch.py), and a Dataset whose
__len__ is 0 is refused in those words. Progress goes to stderr: each step as it starts, and every
--progress-every seconds while it lasts, its samples done (ioprobe_progress.py); SIGUSR1 makes this
process and its DataLoader workers write every thread's Python stack to stderr (ioprobe sends it
when calibrate's --timeout passes). The user's code's prints go to stdout, line-buffered; the result
goes to --result-out FILE when given (ioprobe shows the prints, marked), else to stdout.

--paths-out FILE: the files used, each path's bytes followed by a NUL, written once they are in the
page cache (ioprobe then measures its own read of the same files: cli/calibrate_read.hpp).

Exit codes: 0 done; 2 the user's code or data is unusable (the message names the file and what to
do); 1 a measurement failed; 128+N interrupted by signal N (SIGINT from Ctrl-C, or SIGINT/SIGTERM
sent on by ioprobe): the driver ends quietly, without a traceback and without a result.
"""
import argparse
import ctypes
import itertools
import os
import resource
import signal
import statistics
import sys
import threading
import time
import traceback
import warnings

import ioprobe_batch  # what of a batch is tensors (beside this file)
import ioprobe_gil  # the feeder's GIL share
import ioprobe_progress  # progress on stderr, stacks on SIGUSR1
import ioprobe_threads  # a thread pipeline instead of a DataLoader
from ioprobe_user import (PROG, check_len, check_samples, check_stream, default_collate_of, fail, interpreter,
                          list_files, load_user_code, note, warm, write_result)

_TICK = os.sysconf("SC_CLK_TCK")
NO_TORCH = 3  # ioprobe then tries its next interpreter (calibrate/driver.hpp kDriverNoTorch)


_LIBC = ctypes.CDLL(None, use_errno=True)


def proc_cpu_s(pid):
    """CPU seconds of process pid, all its threads, the exited ones too: its process CPU clock
    (clock_getcpuclockid), the clock time.process_time() reads inside that process; else
    /proc/PID/stat's utime + stime (ticks)."""
    clk = ctypes.c_int()
    if _LIBC.clock_getcpuclockid(pid, ctypes.byref(clk)) == 0:
        try:
            return time.clock_gettime(clk.value)
        except OSError:
            pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def batch_sizes(n, batch):
    """Samples in each batch of a pass over n samples (drop_last=False): what the BatchSampler hands
    the workers, whatever shape the collate_fn gives the batch."""
    return [min(batch, n - i) for i in range(0, n, batch)]


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def rusage_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def spread(values):
    """mean, p10, p50, p90, min, max, n of a list of numbers."""
    v = sorted(values)
    if not v:
        return None
    q = lambda f: v[min(len(v) - 1, int(round(f * (len(v) - 1))))]  # noqa: E731
    return {"mean": statistics.fmean(v), "p10": q(0.1), "p50": q(0.5), "p90": q(0.9), "min": v[0], "max": v[-1],
            "n": len(v)}


class LockedBuffer:
    """A page-locked (mlock'ed) buffer that grows to the largest batch: the pin copy without CUDA."""

    def __init__(self, torch):
        self.torch = torch
        self.buf = None
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.locked = True

    def copy_in(self, tensors):
        need = sum(t.numel() * t.element_size() for t in tensors)
        if self.buf is None or self.buf.numel() < need:
            if self.buf is not None and self.locked:
                self.libc.munlock(ctypes.c_void_p(self.buf.data_ptr()), ctypes.c_size_t(self.buf.numel()))
            self.buf = self.torch.empty(max(need, 1), dtype=self.torch.uint8)
            if self.libc.mlock(ctypes.c_void_p(self.buf.data_ptr()), ctypes.c_size_t(self.buf.numel())) != 0:
                self.locked = False
        off = 0
        for t in tensors:
            n = t.numel() * t.element_size()
            self.buf[off:off + n].copy_(t.contiguous().view(-1).view(self.torch.uint8))
            off += n


def feeder_cpu_s():
    """CPU time (s) of this process's multiprocessing.Queue feeder thread (QueueFeederThread, one per
    DataLoader worker: its data queue's), from its own CPU clock; -1 when there is none (yet)."""
    for t in threading.enumerate():
        if t.name == "QueueFeederThread" and t.ident is not None:
            try:
                return time.clock_gettime(time.pthread_getcpuclockid(t.ident))
            except (OSError, AttributeError):
                return -1.0
    return -1.0


def measure(torch, make_ds, collate, paths, workers, batch, seed, pin, t_start_holder):
    if _interrupted_by:  # an interrupt a finalizer swallowed during the pass before
        raise KeyboardInterrupt
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info
    ds = make_ds(paths)
    # An IterableDataset's batches are counted as its workers collate them (the stream's length is
    # not known before it ends): each collate hands back (batch, samples in it), unwrapped here.
    iterable = isinstance(ds, IterableDataset)
    if not iterable:
        check_len(ds, paths)
    starts = torch.zeros(max(workers, 1), dtype=torch.float64).share_memory_()
    cpu0 = torch.full((max(workers, 1),), -1.0, dtype=torch.float64).share_memory_()

    # Per worker, written by the worker: batches collated, samples in them, its CPU clock after
    # its 2nd collate and after its latest (the process clock, and the loop thread's and the queue
    # feeder thread's own clocks at the same marks; the feeder's -1 when it was not found), and the
    # samples of its batches from the 3rd on.
    nbat, tot_n, win_n, mark_cpu, last_cpu, mark_loop, last_loop, mark_feed, last_feed = (
        torch.zeros(max(workers, 1), dtype=torch.float64).share_memory_() for _ in range(9))

    def init_fn(wid):
        # A Ctrl-C reaches the whole process group: the main process stops the pass and shuts its
        # workers down, so the workers themselves ignore it (no traceback from each of them).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.excepthook = _quiet_connection_errors
        starts[wid] = time.time()
        cpu0[wid] = time.process_time()  # this worker's CPU clock before its first sample

    user_collate = collate if collate is not None else default_collate_of(torch)

    def timed_collate(samples):
        out = user_collate(samples)
        if iterable:
            out = (out, len(samples))
        info = get_worker_info()
        if info is not None:
            w = info.id
            nbat[w] += 1
            tot_n[w] += len(samples)
            if nbat[w] == 2:
                mark_loop[w] = time.thread_time()
                mark_cpu[w] = time.process_time()
                mark_feed[w] = feeder_cpu_s()
            elif nbat[w] > 2:
                win_n[w] += len(samples)
            last_loop[w] = time.thread_time()
            last_cpu[w] = time.process_time()
            last_feed[w] = feeder_cpu_s()
        return out

    g = torch.Generator()
    g.manual_seed(seed)
    kw = dict(batch_size=batch, num_workers=workers, drop_last=False, collate_fn=timed_collate)
    if not iterable:  # an IterableDataset has no sampler: its own order (a shuffle buffer, if any)
        kw.update(shuffle=True, generator=g)
    if workers > 0:
        kw["worker_init_fn"] = init_fn
        # The hooks above are closures over this pass's shared tensors: only forked workers have
        # them (spawn and forkserver pickle them, and refuse); fork is Linux's default before Python 3.14.
        kw["multiprocessing_context"] = "fork"
    loader = DataLoader(ds, **kw)
    kids0 = children_cpu_s()
    t_iter = time.time()
    m0 = time.thread_time()
    it = iter(loader)  # forks and starts the workers
    main_startup = time.thread_time() - m0
    main_batch_cpu, pin_batch_cpu, batch_bytes, batch_tensors = [], [], [], []
    sizes = [] if iterable else batch_sizes(len(ds), batch)
    snap = {}
    nb = 0 if iterable else len(loader)
    if not iterable and nb != len(sizes):
        fail(f"the DataLoader made {nb} batches of {len(ds)} samples at batch size {batch}, not {len(sizes)}", 1)
    k = 0
    locked = LockedBuffer(torch) if pin == "mlock" else None
    while True:
        c0 = time.thread_time()
        try:
            b = next(it)
        except StopIteration:
            break
        c1 = time.thread_time()
        if _interrupted_by:  # the KeyboardInterrupt landed in a finalizer, which swallows it: stop here
            raise KeyboardInterrupt
        k += 1
        if iterable:
            b, n_b = b
            sizes.append(n_b)
        PROGRESS.advance(sizes[k - 1] if k <= len(sizes) else 0)
        ts, bare = ioprobe_batch.split_batch(b, torch)
        for field, holds in bare:
            NO_TENSOR_BYTES.setdefault(field, holds)
        nbytes = ioprobe_batch.tensor_bytes(ts)
        if k > 1:
            main_batch_cpu.append((c1 - c0) * 1e6)
            batch_bytes.append(nbytes)
            batch_tensors.append(len(ts))
        if pin:
            p0 = time.thread_time()
            if pin == "cuda":
                for t in ts:
                    t.pin_memory()
            else:
                locked.copy_in(ts)
            if k > 1:
                pin_batch_cpu.append((time.thread_time() - p0) * 1e6)
        if k == 1 or k == nb or (iterable and k > 1):
            # At the last batch every worker has fetched, collated and put all its batches. A
            # stream's last batch is known only at its end: each batch's marks replace the one
            # before, and its workers' CPU is their clocks at their last collate (below).
            wcpu = [proc_cpu_s(w.pid) for w in getattr(it, "_workers", [])] if k == nb else []
            snap["t1" if k > 1 else "t0"] = (time.perf_counter(), k, rusage_s(), wcpu)
    # The iterator shut its workers down at StopIteration (joined, so reaped): their whole lives'
    # CPU, fork to exit, is now in this process's RUSAGE_CHILDREN.
    exited = all(w.exitcode is not None for w in getattr(it, "_workers", []))
    del it, loader
    kids1 = children_cpu_s()
    if "t0" not in snap or "t1" not in snap:
        fail(f"only {k} batch(es) of {batch}: too few files for a steady state; give --samples (or --data) "
             f"with at least 3 batches of files", 2)
    (ta, ka, ra, _), (tb, kb, rb, wb) = snap["t0"], snap["t1"]
    if iterable:
        wb = last_cpu.tolist()[:workers] if workers > 0 else []
    steady_samples = sum(sizes[ka:kb])
    pin_s = sum(pin_batch_cpu) / 1e6
    res = {
        "num_workers": workers, "batches": kb - ka, "samples": steady_samples,
        "dataset_samples": sum(sizes) if iterable else len(ds),
        "samples_per_s": steady_samples / (tb - ta) if tb > ta else 0.0,
        # The main process's CPU, the pin copy (done here, in the main thread) taken out.
        "main_cpu_per_batch_us": ((rb - ra) - pin_s) * 1e6 / (kb - ka),
        "main_thread_cpu_per_batch_us": spread(main_batch_cpu),
        "bytes_per_batch": spread(batch_bytes),
        "tensors_per_batch": spread(batch_tensors),
    }
    if workers > 0:
        if len(wb) != workers or min(cpu0.tolist()[:workers]) < 0:
            fail(f"num_workers={workers}: {len(wb)} worker processes seen, or one never ran worker_init_fn", 1)
        if min(nbat.tolist()[:workers]) < 3:
            fail(f"num_workers={workers}: a worker collated {int(min(nbat.tolist()[:workers]))} batch(es), fewer "
                 f"than the 3 its steady cost needs; give --samples (or --data) with at least {3 * workers} "
                 f"batches of files", 2)
        # Steady cost: from the end of each worker's 2nd collate to the end of its last, the fetch
        # and collate of its 3rd..last batches and the put of its 2nd..last-but-one (as many puts
        # as batches). Its first batches pay one-time costs (the queue's feeder thread, first
        # allocations, lazy imports): the CPU from worker_init_fn to the pass's end beyond the
        # steady cost of its samples is that worker's one-time CPU, paid once per worker per epoch.
        win = sum(last_cpu.tolist()[w] - mark_cpu.tolist()[w] for w in range(workers))
        per = win / sum(win_n.tolist()[:workers])
        res["worker_cpu_per_sample_us"] = per * 1e6
        # Its two parts over the same window: the loop thread (fetch + collate) and the rest of the
        # process (the Queue's feeder thread pickling and writing the batches, overlapped with the
        # loop). The same window, not the whole pass: the feeder's start-up and first put stay out,
        # and loop + put is the total exactly.
        loop = sum(last_loop.tolist()[w] - mark_loop.tolist()[w] for w in range(workers))
        loop = min(max(loop, 0.0), win)
        res["worker_loop_cpu_per_sample_us"] = loop / sum(win_n.tolist()[:workers]) * 1e6
        res["worker_put_cpu_per_sample_us"] = (win - loop) / sum(win_n.tolist()[:workers]) * 1e6
        # The put's own thread, when every worker's feeder thread was found at both marks: the
        # rest of the put is the worker's other threads (the resource sharer), which run beside it.
        if min(mark_feed.tolist()[:workers]) >= 0 and min(last_feed.tolist()[:workers]) >= 0:
            feed = sum(last_feed.tolist()[w] - mark_feed.tolist()[w] for w in range(workers))
            feed = min(max(feed, 0.0), win - loop)
            res["worker_feeder_cpu_per_sample_us"] = feed / sum(win_n.tolist()[:workers]) * 1e6
            res["worker_other_cpu_per_sample_us"] = (win - loop - feed) / sum(win_n.tolist()[:workers]) * 1e6
        whole = [e - s for e, s in zip(wb, cpu0.tolist())]
        res["worker_cpu_pass_per_sample_us"] = sum(whole) * 1e6 / sum(sizes)
        first = [max(0.0, c - per * n) for c, n in zip(whole, tot_n.tolist())]
        res["worker_first_batches_cpu_s"] = spread(first)
        # A worker's CPU after its last batch (the shutdown: its exit, the interpreter's teardown,
        # freeing its memory): the whole lives' CPU less what each had burned by the last batch,
        # shared equally (RUSAGE_CHILDREN sums them); 0 when a worker was not reaped.
        exit_s = max(0.0, (kids1 - kids0) - sum(wb)) / workers if exited else 0.0
        res["worker_exit_cpu_s"] = exit_s
        res["pass_samples"] = sum(sizes)
        if exited:
            res["worker_life_cpu_s"] = kids1 - kids0  # all the workers, fork to exit
        # A fresh worker's one-time CPU: fork to worker_init_fn (its CPU clock starts at the fork),
        # its first batches' one-time costs and its exit; and the main thread's CPU in iter() (the forks).
        res["worker_startup_cpu_s"] = spread([c0 + f + exit_s for c0, f in zip(cpu0.tolist(), first)])
        res["main_startup_cpu_s"] = main_startup
        st = [s - t_iter for s in starts.tolist()[:workers]]
        res["worker_startup_s"] = spread(st)
    else:
        res["inprocess_cpu_per_sample_us"] = ((rb - ra) - pin_s) * 1e6 / steady_samples
    if pin:
        res["pin_cpu_per_batch_us"] = spread(pin_batch_cpu)
        if locked is not None and not locked.locked:
            res["pin_note"] = "mlock failed (RLIMIT_MEMLOCK): the copy went to ordinary memory"
    return res


# Per level, two passes of different lengths (batches per worker): their workers' whole-life CPU
# (fork to exit) gives the CPU per sample (the difference) and the one-time CPU per worker (the
# rest), as a real epoch pays them; a short pass's windowed start-up figure varied by 0.1-0.9 s.
CROWDED_LENGTHS = (3, 6)
MIN_BATCHES = 6  # the steady windows need 3 batches per worker at num_workers=2


def crowded_rows(a, torch, make_ds, collate, paths, rows_before):
    """The oversubscribed passes (--oversubscribe): num_workers = P x K on K CPUs for each level P."""
    levels = [int(x) for x in a.oversubscribe.split(",") if x.strip()]
    if not levels:
        return []
    allowed = sorted(os.sched_getaffinity(0))
    k = max(1, min(a.oversubscribe_cpus, len(allowed)))
    rows = []
    for per, rep in [(per, rep) for per in levels for rep in range(len(CROWDED_LENGTHS))]:
        w = per * k
        n = CROWDED_LENGTHS[rep] * w * a.batch_size
        files = n
        if rows_before[0]["dataset_samples"] != len(paths):
            # Files that hold several samples each (shards, Arrow tables; a stream's counted in its
            # first pass): the files, repeated as needed, that hold n samples, a whole number per
            # worker (a stream deals whole files to its workers).
            files = -(-n * len(paths) // rows_before[0]["dataset_samples"])
            files = -(-files // w) * w
        run_paths = (paths * -(-files // len(paths)))[:files]
        PROGRESS.step(f"pass {next(PASS_NO)} of {a.passes}: num_workers={w} on {k} CPU(s) ({per} worker processes "
                      f"per CPU), length {rep + 1} of {len(CROWDED_LENGTHS)}: {CROWDED_LENGTHS[rep]} batches per "
                      f"worker ({n} samples over the files)", n)
        os.sched_setaffinity(0, allowed[:k])
        try:
            with warnings.catch_warnings():
                # torch warns that num_workers exceeds the CPUs: the point of this pass.
                warnings.filterwarnings("ignore", message=".*worker processes in total.*")
                r = measure(torch, make_ds, collate, run_paths, w, a.batch_size, a.seed + rep, None, None)
        except SystemExit:
            raise
        except Exception as e:  # noqa: BLE001
            fail(f"{a.factory}: the DataLoader (num_workers={w} on {k} CPUs) raised {type(e).__name__}: {e}\n"
                 f"{traceback.format_exc(limit=-4)}fix the Dataset or collate_fn", 2)
        finally:
            os.sched_setaffinity(0, allowed)
        rows.append(dict(r, pin_memory=False, oversubscribed=True, cpus=k, workers_per_cpu=per))
    return rows


def check_split(rows):
    """Warns when an IterableDataset yields more samples with workers than without: it does not split
    its stream across them (each worker iterates every file, as it would in training, where the
    batches then repeat)."""
    alone = next((r["dataset_samples"] for r in rows if r["num_workers"] == 0), 0)
    for r in rows:
        w, n = r["num_workers"], r["dataset_samples"]
        if w > 0 and alone and n > alone * 1.5:
            note(f"your IterableDataset yielded {n} samples at num_workers={w} against {alone} at num_workers=0: "
                 f"it does not split its stream across the workers (each read every file; in training the batches "
                 f"would repeat {n / alone:.1f}x); split it with torch.utils.data.get_worker_info() or webdataset's "
                 f"split_by_worker. The figures per sample stand")
            return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--factory", required=True, help="FILE.py")
    ap.add_argument("--func", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--samples", type=int, default=0, help="files used [16 batches]")
    ap.add_argument("--workers", default="0,1,2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oversubscribe", default="", help="worker processes per CPU also measured, e.g. 2,4 [none]")
    ap.add_argument("--oversubscribe-cpus", type=int, default=2, help="CPUs those passes run on [2]")
    ap.add_argument("--paths-out", default="", help="write the files used here, NUL-separated")
    ap.add_argument("--result-out", default="", help="write the result (one JSON object) here [stdout]")
    ap.add_argument("--progress-every", type=float, default=5.0, help="seconds between a step's progress lines [5]")
    ap.add_argument("--next-python", default="",
                    help="the interpreter ioprobe tries when this one has no torch (its message is then a warning)")
    a = ap.parse_args()
    global PROGRESS
    PROGRESS = ioprobe_progress.Progress(PROG, a.progress_every)
    # The user's prints reach ioprobe as they are made, not at exit (ioprobe shows them, marked).
    sys.stdout.reconfigure(line_buffering=True)
    try:
        import torch
    except ImportError as e:
        if a.next_python:  # ioprobe tries that one next: not the end of the command
            note(f"{sys.executable} cannot import torch ({e}); trying {a.next_python}")
            sys.exit(NO_TORCH)
        fail(f"{sys.executable} cannot import torch ({e}); install PyTorch for it (Debian: apt-get install "
             f"python3-torch) or pass --python with the interpreter your training uses", NO_TORCH)
    PROGRESS.step(f"importing {a.factory}")
    make_ds, collate = load_user_code(a.factory, a.func)
    limit = a.samples or 16 * a.batch_size
    paths = list_files(a.data, limit)
    PROGRESS.step(f"reading {len(paths)} files of {a.data} into the page cache")
    data_bytes = warm(paths)
    if a.paths_out:
        try:
            with open(a.paths_out, "wb") as f:
                f.write(b"".join(os.fsencode(p) + b"\0" for p in paths))
        except OSError as e:
            fail(f"--paths-out {a.paths_out}: {e.strerror}", 1)
    if ioprobe_threads.is_pipeline(make_ds):
        rows, figures = ioprobe_threads.calibrate(a, make_ds, paths, PROGRESS)
        write_result(a.result_out, dict(interpreter(torch), collate="the pipeline's own", dataset_kind="thread-pipeline",
                             files=len(paths), data_bytes=data_bytes, rows=rows, threads=figures,
                             batch_size=max(1, rows[0]["batch_size"]),
                             pin_method="a thread pipeline's batches are not pinned by calibrate"))
        return
    PROGRESS.step(f"calling your Dataset factory {a.func}(paths) of {a.factory} with {len(paths)} paths")
    try:
        ds = make_ds(list(paths))
    except Exception as e:  # noqa: BLE001
        fail(f"{a.factory}: {a.func}(paths) raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
             f"fix {a.func} so that it returns a torch Dataset over the given file paths", 2)
    iterable = isinstance(ds, torch.utils.data.IterableDataset)
    if not iterable and (not hasattr(ds, "__getitem__") or not hasattr(ds, "__len__")):
        fail(f"{a.factory}: {a.func}(paths) returned a {type(ds).__name__}, neither a map-style Dataset "
             f"(__getitem__ and __len__) nor a torch IterableDataset (__iter__): calibrate measures your "
             f"Dataset in real DataLoaders; return a torch.utils.data.Dataset or IterableDataset over the "
             f"paths (a pipeline that is not a DataLoader: ioprobe record measures its I/O as it runs)", 2)
    # 3 steady batches per worker at num_workers=2: a map-style Dataset's are its files, checked
    # here, before any pass; a stream's samples are known after its first pass (below).
    n_samples = 0 if iterable else check_len(ds, paths)
    if not iterable and n_samples < MIN_BATCHES * a.batch_size:
        if n_samples != len(paths):
            fail(f"{a.factory}: the Dataset holds {n_samples} samples over the {len(paths)} files of --data "
                 f"{a.data}, fewer than {MIN_BATCHES} batches of --batch-size {a.batch_size} (3 per worker at "
                 f"num_workers=2), {MIN_BATCHES * a.batch_size} samples; give more files (--samples counts files) "
                 f"or a smaller --batch-size", 2)
        if a.samples and a.samples < MIN_BATCHES * a.batch_size:
            fail(f"--samples {a.samples}: calibration needs at least {MIN_BATCHES} batches of --batch-size "
                 f"{a.batch_size} (3 per worker at num_workers=2), {MIN_BATCHES * a.batch_size} samples; give "
                 f"--samples {MIN_BATCHES * a.batch_size} or more, or a smaller --batch-size", 2)
        fail(f"--data {a.data}: {len(paths)} files, fewer than {MIN_BATCHES} batches of {a.batch_size} (3 per worker "
             f"at num_workers=2); give a directory with more files or a smaller --batch-size", 2)
    if iterable:
        check_stream(a, ds, collate, torch, paths, PROGRESS)
    else:
        check_samples(a, ds, min(n_samples, 2), collate, torch, paths, PROGRESS)
    pin = "cuda" if torch.cuda.is_available() else "mlock"
    rows = []
    levels = [x for x in a.oversubscribe.split(",") if x.strip()]
    a.passes = 2 * len(a.workers.split(",")) + len(CROWDED_LENGTHS) * len(levels)
    for w in [int(x) for x in a.workers.split(",")]:
        for p in (None, pin):
            PROGRESS.step(f"pass {next(PASS_NO)} of {a.passes}: num_workers={w}{' pin_memory' if p else ''}: one pass "
                          f"over {len(paths)} files", len(paths))
            try:
                rows.append(dict(measure(torch, make_ds, collate, paths, w, a.batch_size, a.seed, p, None),
                                 pin_memory=bool(p), cpus=len(os.sched_getaffinity(0))))
                if iterable and rows[-1]["dataset_samples"] < MIN_BATCHES * a.batch_size:
                    n = rows[-1]["dataset_samples"]
                    fail(f"{a.factory}: the IterableDataset yielded {n} samples over the {len(paths)} files of "
                         f"--data {a.data}, fewer than {MIN_BATCHES} batches of --batch-size {a.batch_size} (3 per "
                         f"worker at num_workers=2), {MIN_BATCHES * a.batch_size} samples; give more files (--samples "
                         f"counts files) or a smaller --batch-size", 2)
            except SystemExit:
                raise
            except Exception as e:  # noqa: BLE001
                fail(f"{a.factory}: the DataLoader (num_workers={w}) raised {type(e).__name__}: {e}\n"
                     f"{traceback.format_exc(limit=-4)}fix the Dataset or collate_fn", 2)
    if iterable:
        check_split(rows)
    rows += crowded_rows(a, torch, make_ds, collate, paths, rows)
    PROGRESS.step("the queue feeder's GIL share: pickling batches beside a thread running Python")
    gil, gil_method = ioprobe_gil.measure(torch, ds, collate or default_collate_of(torch), a.batch_size, len(paths),
                                          iterable)
    if _interrupted_by:
        raise KeyboardInterrupt
    write_result(a.result_out, dict(interpreter(torch), **{
        "pin_method": "tensor.pin_memory() (cudaHostAlloc and copy)" if pin == "cuda" else
        "copy into an mlock'ed buffer (torch without CUDA cannot pin memory)",
        "collate": "collate_fn of the module" if collate is not None else "torch default_collate",
        "dataset_kind": "iterable" if iterable else "map-style",
        "files": len(paths), "data_bytes": data_bytes, "batch_size": a.batch_size, "rows": rows,
        "feeder_gil": gil, "feeder_gil_method": gil_method,
        "no_tensor_bytes": [{"field": f, "holds": h} for f, h in NO_TENSOR_BYTES.items()],
    }))


PROGRESS = None  # ioprobe_progress.Progress, made in main()
PASS_NO = itertools.count(1)
NO_TENSOR_BYTES = {}  # field of a batch -> what it held, for the parts with no tensor (no tensor bytes)
_interrupted_by = 0
_excepthook = sys.excepthook


def _quiet_connection_errors(exc_type, exc, tb):
    """A worker's sys.excepthook, which multiprocessing's resource sharer thread calls for its own
    errors: when the main process goes away in the middle of a handshake (Ctrl-C), the connection
    error says nothing new; anything else is reported as usual."""
    if issubclass(exc_type, (EOFError, OSError)):
        return
    _excepthook(exc_type, exc, tb)


def _on_interrupt(signum, frame):
    # Ctrl-C reaches this process from the terminal and, sent on, from ioprobe as well: the first
    # signal ends the driver, any more are ignored so the unwinding prints no second traceback.
    global _interrupted_by
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _interrupted_by = signum
    # Raised inside a finalizer (a weakref callback, a DataLoader iterator's __del__) the interrupt
    # is reported as "Exception ignored in ..." and dropped; the driver checks _interrupted_by at
    # each batch and pass instead, and nothing of the unwinding is printed.
    sys.unraisablehook = lambda unraisable: None
    raise KeyboardInterrupt


if __name__ == "__main__":
    ioprobe_progress.stack_dump_signal()
    signal.signal(signal.SIGINT, _on_interrupt)
    signal.signal(signal.SIGTERM, _on_interrupt)
    try:
        main()
    except KeyboardInterrupt:
        # No traceback and no result: ioprobe writes no document and exits 130 / 143.
        sys.exit(128 + (_interrupted_by or signal.SIGINT))
