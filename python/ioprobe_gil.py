"""What share of a DataLoader worker's queue-feeder CPU holds CPython's GIL (part of
`ioprobe calibrate`; ioprobe_calibrate.py calls feeder_gil_share).

A worker's feeder thread pickles each batch with multiprocessing's ForkingPickler; with torch's
reductions that moves every tensor's storage into shared memory (a copy, in C++), and for some of
that work torch lets go of the GIL. While it does, the worker's other threads (its loop, its
resource sharer answering the main process) can run Python. ioprobe's model burns the feeder's
CPU partly through the worker's lock (src/loader/worker_gil.hpp): this share.

How: the batches are pickled exactly as a worker's feeder pickles them (ForkingPickler.dumps,
torch.multiprocessing's reductions, the process's sharing strategy), once alone and once beside a
thread that runs pure Python (a counter). The counter advances only while it holds the GIL, so
over the pickling's wall window W the pickler held the GIL for W - counted / rate, where rate is
the counter's pace alone (measured around the trials). share = that held time / the pickling's
CPU time alone. The switch interval is set short (sys.setswitchinterval) during the trials so the
two threads trade the GIL at once, as a worker's threads do, which block in system calls every few
hundred µs. Time lost in the hand-overs counts as held: the share errs high (towards the model
without it, share 1).

It needs two CPUs (the counter runs beside the copy); on one it is not measured (None).
Each pickled batch is unpickled once measured, so the resource sharer hands back, and closes, the
file descriptors the pickling registered.
"""
import os
import statistics
import sys
import threading
import time

SWITCH_S = 50e-6  # the switch interval during the trials (CPython's default: 5 ms)
TRIALS = 3        # trials with the counter, each beside one alone


class _Counter:
    """A thread running pure Python, publishing its count every 64 turns of its loop."""

    def __init__(self):
        self.count = 0
        self.run = True
        self.thread = threading.Thread(target=self._spin, daemon=True)

    def _spin(self):
        n = 0
        while self.run:
            n += 1
            if not n & 63:
                self.count = n

    def __enter__(self):
        self.thread.start()
        time.sleep(0.005)
        return self

    def __exit__(self, *exc):
        self.run = False
        self.thread.join()


def _rate(counter, seconds=0.05):
    """Counts per second of the counter while this thread sleeps (the GIL is all the counter's)."""
    c0, t0 = counter.count, time.perf_counter()
    time.sleep(seconds)
    return (counter.count - c0) / (time.perf_counter() - t0)


def feeder_gil_share(make_batch, pickler, unpickle):
    """The feeder's GIL share, or None on fewer than 2 CPUs.

    make_batch() -> a fresh batch (not yet in shared memory); pickler(batch) -> bytes, as the
    worker's feeder pickles; unpickle(bytes) takes the pickled batch back (frees its descriptors).
    Returns {"value", "min", "max"} (fractions 0..1 over the trials), "cpu_us" (the pickling's CPU
    alone per batch, µs) and "trials"."""
    if len(os.sched_getaffinity(0)) < 2:
        return None
    old = sys.getswitchinterval()
    shares, cpus = [], []
    try:
        sys.setswitchinterval(SWITCH_S)
        for _ in range(TRIALS):
            b = make_batch()
            c0 = time.thread_time()
            blob = pickler(b)
            cpu = time.thread_time() - c0
            unpickle(blob)
            b = make_batch()
            with _Counter() as k:
                r0 = _rate(k)
                n0, t0 = k.count, time.perf_counter()
                blob = pickler(b)
                n1, t1 = k.count, time.perf_counter()
                r1 = _rate(k)
            unpickle(blob)
            rate = (r0 + r1) / 2
            held = max(0.0, (t1 - t0) - (n1 - n0) / rate) if rate > 0 else t1 - t0
            cpus.append(cpu)
            shares.append(min(1.0, held / cpu) if cpu > 0 else 1.0)
    finally:
        sys.setswitchinterval(old)
    return {"value": statistics.median(shares), "min": min(shares), "max": max(shares),
            "cpu_us": statistics.median(cpus) * 1e6, "trials": len(shares)}


def measure(torch, ds, collate, batch, n, iterable=False):
    """The feeder's GIL share on the Dataset's own batches (collate: the DataLoader's collate_fn),
    over its first n samples (an IterableDataset: its stream, started again at its end):
    (feeder_gil_share's figures or None, how it was measured or why not)."""
    import resource
    from multiprocessing.reduction import ForkingPickler
    from torch import multiprocessing as torch_mp  # torch's reductions for ForkingPickler, as in a worker
    # Each tensor of a pickled batch holds two descriptors until it is unpickled (its shared memory
    # and the resource sharer's duplicate): as many as a real worker's feeder holds for a batch.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # an unlimited hard limit is not a valid soft one: keep the soft
            pass
    starts = list(range(0, max(1, n - batch + 1), batch))
    k = [0]

    stream = [iter(ds)] if iterable else None

    def next_sample():
        try:
            return next(stream[0])
        except StopIteration:
            stream[0] = iter(ds)
            return next(stream[0])

    def make_batch():
        if iterable:
            return collate([next_sample() for _ in range(batch)])
        s = starts[k[0] % len(starts)]
        k[0] += 1
        return collate([ds[i] for i in range(s, min(n, s + batch))])

    try:
        g = feeder_gil_share(make_batch, ForkingPickler.dumps, ForkingPickler.loads)
    except Exception as e:  # noqa: BLE001  the share is a refinement: the rest of the calibration stands
        return None, f"pickling a batch beside a Python thread failed ({type(e).__name__}: {e})"
    if g is None:
        return None, "needs 2 CPUs (a thread runs Python beside the pickling); this process may use 1"
    return g, (f"batches pickled as a worker's feeder pickles them (ForkingPickler, torch's "
               f"{torch_mp.get_sharing_strategy()} sharing), alone and beside a thread running "
               f"Python, median of {g['trials']} trials; switch interval {SWITCH_S * 1e6:.0f} µs")
