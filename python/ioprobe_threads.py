"""A thread pipeline in `ioprobe calibrate` (beside ioprobe_calibrate.py): N threads of ONE process,
sharing ONE interpreter's GIL, map a decode over the files and build the batches in that process
(torchdata.nodes ParallelMapper(method="thread"), SPDL, a concurrent.futures ThreadPoolExecutor);
no worker processes, so no pickling of batches, no shared memory, no file descriptors passed.

The user's FILE.py:FUNC is a thread pipeline when FUNC takes a parameter named `num_threads`:

    def make_pipeline(paths, num_threads[, batch_size]):  # -> an iterable of batches

called once per pass with the files and the thread count (and --batch-size when it takes
`batch_size`). A batch is a list of samples, a tensor or array (its first dimension), or a dict or
tuple of such fields (its first field's length): that is how its samples are counted. A factory
that raises, returns something that is not iterable, yields something that is not a batch (None, a
string, a number, an empty list) or fewer than 3 batches is refused with the reason (exit 2).

Measured, for each thread count (--workers' counts above 0, 1 and 2 by default, then each
--oversubscribe level P as P x K threads on K CPUs, --oversubscribe-cpus, with sched_setaffinity):
one pass over the files, from the factory's call to the end of its last batch (thread start-up
included: a pipeline that reads ahead, e.g. one that submits every file to its pool at once, does
much of its work before its first batch, so leaving the first batch out would count that work's
samples but not its time):
  cpu_per_sample_us   the process's CPU time (time.process_time: every thread, the main one too)
                      per sample
  samples_per_s       samples per second of wall time
  parallelism         samples_per_s x cpu_per_sample: the CPUs the pipeline kept busy on average

What the emulation needs is derived from them:
  CPU per sample      the mean of the rows' cpu_per_sample_us (min, max over the rows)
  GIL share s         the share of each sample's CPU that holds the GIL. ioprobe's emulation
                      (loader/worker_gil.hpp, all the threads on one lock) hands the lock from turn
                      to turn without loss, so N threads run at most min(N, CPUs, 1/s) samples' CPU
                      at once: Amdahl's law with the serial part s run one at a time (its speedup
                      bound 1/s), the parallel rest on as many CPUs as there are threads. The
                      pipeline's speedup at N threads, S = parallelism(N) / parallelism(1) (CPU per
                      sample x rate, so a costlier sample at N threads counts), is then
                      min(N, CPUs, 1/s), so s = 1/S where S is below min(N, CPUs): the lowest 1/S
                      over the rows of 2 or more threads, bounded to 0..1 (min, max over those
                      rows). The speedup, not the parallelism itself, because on a host that other
                      processes share the pipeline gets a part of each CPU, at 1 thread as at N.
                      Where the pipeline ran nearly as many samples at once as it had threads or
                      CPUs (S >= 0.9 x min(N, CPUs)) the GIL did not limit it and s = 1/S is an upper
                      bound (cpu_bound: true), which still reproduces the measured rate. Amdahl's
                      1/(s + (1 - s)/N) for the speedup at N would fit a smaller s (0.25 where the
                      pipeline ran 1.6x faster at 2 threads) with which the emulation's lock would
                      let 2 threads run 2x: the figure is fitted to the model that burns it. Not
                      measured without a row of 2 or more threads (--workers 1 and --oversubscribe
                      none): s = 1.
"""
import inspect
import os
import statistics
import time
import traceback

from ioprobe_user import fail, note

MIN_BATCHES = 3  # fewer batches give no rate worth the name
SHORT_PASS_S = 0.25  # a pass shorter than this, s, gets a note: its figures are mostly noise (chosen by us)


def is_pipeline(fn):
    """Whether FUNC is a thread pipeline's factory: it takes a parameter named num_threads."""
    try:
        return "num_threads" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def batch_len(b):
    """Samples in a batch (the module docstring's rule), or None when `b` is not a batch."""
    shape = getattr(b, "shape", None)
    if shape is not None and not callable(shape):
        return int(shape[0]) if len(shape) >= 1 else None
    if isinstance(b, dict):
        return batch_len(next(iter(b.values()))) if b else None
    if isinstance(b, (list, tuple)) and b:
        first = b[0]
        fields = isinstance(first, (list, tuple, dict)) or getattr(first, "shape", None) is not None
        if isinstance(b, tuple) and fields:  # (images, labels): the fields of one batch
            return batch_len(first)
        return len(b)
    return None


def one_pass(a, fn, paths, n, progress):
    """One pass of the pipeline at n threads: its row (module docstring)."""
    kw = {"batch_size": a.batch_size} if "batch_size" in inspect.signature(fn).parameters else {}
    call = f"{a.func}(paths, num_threads={n}{', batch_size=%d' % a.batch_size if kw else ''})"
    first = (time.perf_counter(), time.process_time())
    try:
        pipe = fn(list(paths), n, **kw)
    except Exception as e:  # noqa: BLE001
        fail(f"{a.factory}: {call} raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
             f"fix {a.func} so that it returns an iterable of batches over the given file paths", 2)
    try:
        it = iter(pipe)
    except TypeError:
        fail(f"{a.factory}: {call} returned an object of type {type(pipe).__name__}, not an iterable of batches: calibrate measures a "
             f"thread pipeline by iterating what its factory returns; return a generator or an iterable (e.g. "
             f"`yield` each batch) over the paths", 2)
    sizes, last = [], None
    try:
        for b in it:
            k = batch_len(b)
            if not k:
                what = type(b).__name__ + (" (empty)" if k == 0 or (hasattr(b, "__len__") and not len(b)) else "")
                fail(f"{a.factory}: {call} yielded an object of type {what} as its batch {len(sizes) + 1}, not a batch: calibrate "
                     f"counts a batch's samples as a list's length, a tensor's or array's first dimension, or a dict's "
                     f"or tuple's first field's; yield batches of samples", 2)
            sizes.append(k)
            progress.advance(k)
            last = (time.perf_counter(), time.process_time())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"{a.factory}: iterating {call} raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-4)}"
             f"fix the pipeline", 2)
    finally:
        close = getattr(it, "close", None)
        if callable(close):
            close()  # a generator's `with ThreadPoolExecutor()` ends here: its threads are joined
    if len(sizes) < MIN_BATCHES:
        fail(f"{a.factory}: {call} yielded {len(sizes)} batch(es) over {len(paths)} files, fewer than the "
             f"{MIN_BATCHES} a steady rate needs; give more files (--samples) or a smaller batch", 2)
    window = sum(sizes)
    wall, cpu = last[0] - first[0], last[1] - first[1]
    rate = window / wall if wall > 0 else 0.0
    per = cpu / window * 1e6
    if wall < SHORT_PASS_S:
        note(f"the pass at num_threads={n} took {wall * 1e3:.0f} ms: too short for steady figures (the host's noise "
             f"and the pipeline's start-up weigh on it); give more files (--samples) for passes of a second or more")
    return {"num_threads": n, "batches": len(sizes), "samples": window, "wall_s": wall, "pass_samples": sum(sizes),
            "samples_per_batch": statistics.fmean(sizes),
            # The batch size the pipeline makes: its most common batch (a last, partial batch does not count).
            "batch_size": max(statistics.multimode(sizes)), "samples_per_s": rate, "cpu_per_sample_us": per,
            "parallelism": rate * per / 1e6}


def derive(rows):
    """The emulation's figures from the rows (the module docstring's derivation)."""
    cpu = [r["cpu_per_sample_us"] for r in rows]
    out = {"cpu_per_sample_us": {"value": statistics.fmean(cpu), "min": min(cpu), "max": max(cpu)}}
    one = next((r["parallelism"] for r in rows if r["num_threads"] == 1 and r["parallelism"] > 0), 0.0)
    multi = [r for r in rows if r["num_threads"] >= 2 and r["parallelism"] > 0]
    if not multi or not one:
        out.update(gil_share={"value": 1.0, "min": 1.0, "max": 1.0}, gil_measured=False, cpu_bound=False,
                   gil_method="not measured: no pass with 1 and with 2 or more threads (all of each sample's CPU "
                              "holds the GIL)")
        return out
    shares = [min(1.0, one / r["parallelism"]) for r in multi]
    best = max(multi, key=lambda r: r["parallelism"])
    speedup = best["parallelism"] / one
    bound = speedup >= 0.9 * min(best["num_threads"], best["cpus"])
    out.update(gil_share={"value": min(shares), "min": min(shares), "max": max(shares)}, gil_measured=True,
               cpu_bound=bound,
               gil_method=f"1 / the speedup over 1 thread (samples/s x CPU per sample), {speedup:.2f}x at "
                          f"{best['num_threads']} threads on {best['cpus']} CPU(s)" +
                          (": it filled the threads or CPUs, so the GIL share is at most this" if bound else ""))
    return out


def calibrate(a, fn, paths, progress):
    """Every pass (module docstring) and the derived figures: (rows, figures)."""
    counts = [int(x) for x in a.workers.split(",") if x.strip() and int(x) > 0] or [1, 2]
    allowed = sorted(os.sched_getaffinity(0))
    k = max(1, min(a.oversubscribe_cpus, len(allowed)))
    plan = [(n, None) for n in counts]
    plan += [(int(p) * k, k) for p in a.oversubscribe.split(",") if p.strip()]
    rows = []
    for i, (n, cpus) in enumerate(plan):
        where = f" on {cpus} CPU(s) ({n // cpus} threads per CPU)" if cpus else ""
        progress.step(f"pass {i + 1} of {len(plan)}: your thread pipeline at num_threads={n}{where}: one pass over "
                      f"{len(paths)} files", len(paths))
        if cpus:
            os.sched_setaffinity(0, allowed[:cpus])
        try:
            r = one_pass(a, fn, paths, n, progress)
        finally:
            os.sched_setaffinity(0, allowed)
        r.update(cpus=cpus or len(allowed), oversubscribed=bool(cpus), pin_memory=False)
        rows.append(r)
    one = next((r for r in rows if r["num_threads"] == 1), None)
    if one and one["parallelism"] < 0.5:
        note(f"at 1 thread your pipeline kept {one['parallelism']:.2f} of a CPU busy: it waited on something other than "
             f"its CPU (storage, a sleep, other processes on this host), which calibrate does not measure; the GIL "
             f"share from its speedup is then not its GIL's")
    if rows[0]["pass_samples"] != len(paths):
        note(f"your pipeline yielded {rows[0]['pass_samples']} samples over {len(paths)} files (calibrate counts a "
             f"batch's samples by its length); the figures are per sample counted so")
    return rows, derive(rows)
