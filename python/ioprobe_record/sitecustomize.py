"""Python side of `ioprobe record`: DataLoader markers without a change to the job's code.

`ioprobe record` puts this directory first on PYTHONPATH, so Python imports this file at start-up
(before the job's code). It then runs the sitecustomize that was there before it (the next one on
sys.path, e.g. Debian's /etc/python3.X/sitecustomize.py), so nothing the environment set up is lost.

It never imports torch itself. When the job imports torch.utils.data.dataloader, an import hook
wraps, in that module:
  - _BaseDataLoaderIter.__next__: a batch_wait_begin mark before the call and batch_wait_end after
    it (value = the batch's number in this process, counted from 0), and epoch_end when the
    iterator is exhausted: the time the training loop waited for each batch, and between them
    the training step;
  - DataLoader.__iter__: epoch_begin (value = the epoch's number in this process);
  - torch.utils.data._utils.worker._worker_loop: worker_start (value = the worker id) in each
    worker process, before it reads anything, so the trace can tell which process is worker N.
Marks go to the interposer (libioprobe_record.so, already loaded through LD_PRELOAD; its path is in
$IOPROBE_RECORD_LIB) through its exported C function ioprobe_record_mark(kind, value), which puts
them in the calling thread's buffer with the same clock as the recorded calls.

At interpreter exit (atexit, which also runs when an uncaught KeyboardInterrupt ends the job:
Python then kills itself with SIGINT, so the interposer's exit-time flush never runs) it calls
ioprobe_record_flush() so every thread's records reach the per-process file.
"""

import atexit

import functools
import importlib
import importlib.abc
import importlib.util
import os
import sys

# trace::MarkKind's order (src/trace/trace.hpp).
_BATCH_WAIT_BEGIN, _BATCH_WAIT_END, _WORKER_START, _EPOCH_BEGIN, _EPOCH_END = range(5)
_TARGET = "torch.utils.data.dataloader"
_mark_fn = None
_counts = {"batch": 0, "epoch": 0}


def _mark(kind, value):
    global _mark_fn
    if _mark_fn is None:
        try:
            import ctypes

            lib = ctypes.CDLL(os.environ["IOPROBE_RECORD_LIB"])
            fn = lib.ioprobe_record_mark
            fn.argtypes = [ctypes.c_int, ctypes.c_longlong]
            fn.restype = None
            _mark_fn = fn
        except (KeyError, OSError, AttributeError):
            _mark_fn = lambda kind, value: None  # not under ioprobe record: marks go nowhere
    _mark_fn(kind, value)


def _flush_at_exit():
    try:
        import ctypes

        ctypes.CDLL(os.environ["IOPROBE_RECORD_LIB"]).ioprobe_record_flush()
    except (KeyError, OSError, AttributeError):
        pass  # not under ioprobe record


def _patch(module):
    iter_cls = getattr(module, "_BaseDataLoaderIter", None)
    if iter_cls is not None and not getattr(iter_cls.__next__, "_ioprobe", False):
        orig_next = iter_cls.__next__

        @functools.wraps(orig_next)
        def __next__(self):
            n = _counts["batch"]
            _mark(_BATCH_WAIT_BEGIN, n)
            try:
                batch = orig_next(self)
            except StopIteration:
                _mark(_BATCH_WAIT_END, n)
                _mark(_EPOCH_END, _counts["epoch"] - 1)
                raise
            _mark(_BATCH_WAIT_END, n)
            _counts["batch"] = n + 1
            return batch

        __next__._ioprobe = True
        iter_cls.__next__ = __next__

    loader_cls = getattr(module, "DataLoader", None)
    if loader_cls is not None and not getattr(loader_cls.__iter__, "_ioprobe", False):
        orig_iter = loader_cls.__iter__

        @functools.wraps(orig_iter)
        def __iter__(self):
            _mark(_EPOCH_BEGIN, _counts["epoch"])
            _counts["epoch"] += 1
            return orig_iter(self)

        __iter__._ioprobe = True
        loader_cls.__iter__ = __iter__

    worker = sys.modules.get("torch.utils.data._utils.worker")
    loop = getattr(worker, "_worker_loop", None)
    if loop is not None and not getattr(loop, "_ioprobe", False):

        # functools.wraps keeps the module and qualified name, so a spawned worker's pickled
        # target still resolves (to this wrapper, installed in the child by its own start-up).
        @functools.wraps(loop)
        def _worker_loop(*args, **kwargs):
            wid = kwargs.get("worker_id", args[10] if len(args) > 10 else -1)
            _mark(_WORKER_START, int(wid) if isinstance(wid, int) else -1)
            return loop(*args, **kwargs)

        _worker_loop._ioprobe = True
        worker._worker_loop = _worker_loop


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            _patch(module)
        except Exception as e:  # a torch version with other names: record without marks
            sys.stderr.write("ioprobe record: DataLoader marks off (%s: %s)\n" % (type(e).__name__, e))


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def _chain_sitecustomize():
    """Runs the sitecustomize this one shadows (the next on sys.path), if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.get("sitecustomize")
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        del sys.modules["sitecustomize"]
        if importlib.util.find_spec("sitecustomize") is not None:
            importlib.import_module("sitecustomize")
    except Exception as e:
        sys.stderr.write("ioprobe record: the environment's sitecustomize failed: %s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if ours is not None:
            sys.modules["sitecustomize"] = ours


if os.environ.get("IOPROBE_RECORD_LIB"):
    atexit.register(_flush_at_exit)
if _TARGET in sys.modules:
    _patch(sys.modules[_TARGET])
else:
    sys.meta_path.insert(0, _Finder())
_chain_sitecustomize()
