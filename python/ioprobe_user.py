"""The user's code and data for `ioprobe calibrate`'s driver (beside ioprobe_calibrate.py): loading
FILE.py:FUNC, listing and reading --data's files, and checking what the factory returns (its
__len__, and that the DataLoader's collate accepts its samples) before any measured pass. Each
refusal names the user's file or path and what to do, and exits 2 (fail()).
"""
import importlib.util
import json
import os
import platform
import sys
import traceback

import ioprobe_batch

PROG = "ioprobe calibrate"
FACTORY = ["", ""]  # FILE.py and FUNC, once load_user_code() has them: the refusals name them


def prefixed(kind, msg):
    """`msg` as ioprobe writes a message on stderr: "ioprobe calibrate: KIND: " before its first line
    and "ioprobe calibrate:   " before each further one (a traceback's), so every line has the prefix."""
    first, *rest = str(msg).split("\n")
    return "\n".join([f"{PROG}: {kind}: {first}"] + [f"{PROG}:   {line}" for line in rest if line])


def fail(msg, code=2):
    print(prefixed("error", msg), file=sys.stderr, flush=True)
    sys.exit(code)


def note(msg):
    """A warning about the user's code or data: the calibration goes on."""
    print(prefixed("warning", msg), file=sys.stderr, flush=True)


def load_user_code(path, func_name):
    if not os.path.isfile(path):
        fail(f"--dataset-factory {path}: no such file; give FILE.py:FUNC with the path of your Dataset's module")
    FACTORY[:] = [path, func_name]
    name = "ioprobe_user_dataset"
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own imports of sibling modules
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # workers started by fork see it; pickled references resolve
        spec.loader.exec_module(mod)
    except ModuleNotFoundError as e:
        fail(f"{path}: importing it failed: {e}; install the module it needs for {sys.executable} "
             f"(or pass --python with the interpreter your training uses)")
    except Exception as e:  # noqa: BLE001 - any error in the user's module is reported with its place
        fail(f"{path}: importing it raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
             f"fix the module so that `python3 {path}` imports cleanly")
    fn = getattr(mod, func_name, None)
    if fn is None or not callable(fn):
        have = sorted(k for k, v in vars(mod).items() if callable(v) and not k.startswith("_"))
        fail(f"{path}: defines no function '{func_name}' (callables there: {', '.join(have) or 'none'}); "
             f"give --dataset-factory {path}:NAME with the function that returns your Dataset")
    collate = getattr(mod, "collate_fn", None)
    if collate is not None and not callable(collate):
        fail(f"{path}: collate_fn is defined but not callable; make it a function or remove it")
    return fn, collate


def list_files(root, limit):
    if not os.access(root, os.R_OK | os.X_OK):
        fail(f"--data {root}: cannot read it (permission denied); run as a user who may read it, or give --data a "
             f"readable directory")
    out, unreadable, broken = [], [], []
    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable.append):
        dirnames.sort()
        for n in sorted(filenames):
            if n.startswith(".ioprobe"):
                continue
            p = os.path.join(dirpath, n)
            # Symbolic links to files are read, as `ioprobe run --data` reads them; dangling or
            # looping links are skipped and counted.
            if os.path.isfile(p):
                out.append(p)
                if len(out) >= limit:
                    break
            elif os.path.islink(p):
                broken.append(p)
        if len(out) >= limit:
            break
    if broken:
        note(f"skipped {len(broken)} symbolic link(s) of --data that lead to no file (first: {broken[0]})")
    if unreadable:
        note(f"skipped {len(unreadable)} director{'y' if len(unreadable) == 1 else 'ies'} of --data it could not "
             f"read (first: {unreadable[0].filename}: {unreadable[0].strerror}); their files are not in the "
             f"calibration")
    if not out:
        fail(f"--data {root}: no files to calibrate on{' (only links that lead to no file)' if broken else ''}; give "
             f"the directory of the files your Dataset reads")
    return out


def warm(paths):
    """Reads every file once so that the measured runs find them in the page cache. Returns bytes."""
    total = 0
    for p in paths:
        try:
            with open(p, "rb", buffering=0) as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    total += len(b)
        except OSError as e:
            fail(f"--data: cannot read {p}: {e.strerror}; run as a user who may read every file of --data, or give "
                 f"a directory whose files are readable")
    return total


def default_collate_of(torch):
    """torch's default_collate (public from torch 1.11, in torch.utils.data._utils.collate before)."""
    try:
        from torch.utils.data import default_collate
    except ImportError:
        from torch.utils.data._utils.collate import default_collate
    return default_collate


def check_len(ds, paths):
    """len(ds), refusing 0 in words (torch's sampler would say num_samples=0)."""
    n = len(ds)
    if n <= 0:
        fail(f"{FACTORY[0]}: the Dataset's __len__ returned {n} for {len(paths)} paths given to {FACTORY[1]}(paths) "
             f"(the first: {paths[0]}): a DataLoader has nothing to load (torch's sampler would fail with "
             f"num_samples={n}); check that the Dataset keeps the paths it is given (a filter on the file names' "
             f"extension, a list read from another directory)", 2)
    return n


def check_samples(a, ds, n, collate, torch, paths, progress):
    """The first samples, collated as a DataLoader worker collates them: a field the collate refuses
    is named with the DataLoader's own error, before any pass."""
    progress.step(f"your Dataset's __getitem__ for samples 0..{n - 1} and {'your collate_fn' if collate else 'torch default_collate'}"
                  f" of them")
    samples = []
    for i in range(n):
        try:
            samples.append(ds[i])
        except Exception as e:  # noqa: BLE001
            fail(f"{a.factory}: the Dataset's __getitem__({i}) raised {type(e).__name__}: {e}\n"
                 f"{traceback.format_exc(limit=-3)}fix __getitem__ for the file {paths[i]}", 2)
    check_collate(a, samples, collate, torch, "Dataset's", "return", "from __getitem__ (None and other objects are "
                  "refused)")


def check_collate(a, samples, collate, torch, whose, verb, where):
    """Refuses, exit 2, samples the DataLoader's collate refuses, naming the field with its error."""
    refused = ioprobe_batch.collate_refusal(samples, collate or default_collate_of(torch), collate is None, torch)
    if refused:
        field, err = refused
        what = "your collate_fn" if collate else "torch's default_collate (the DataLoader's collate_fn)"
        fail(f"{a.factory}: {what} refuses {field} of the {whose} samples, as a DataLoader would: {err}; {verb} "
             f"tensors, numpy arrays, numbers, strings, or dicts/lists/tuples of them {where}, or define collate_fn "
             f"in {os.path.basename(a.factory)} for them", 2)


def check_stream(a, ds, collate, torch, paths, progress):
    """An IterableDataset's first two samples, from iter() in this process, collated as a DataLoader
    worker collates them: its iterator's errors and a field the collate refuses are named before any
    pass, as check_samples does for a map-style Dataset; an empty stream is refused in words."""
    progress.step(f"your IterableDataset's first 2 samples and {'your collate_fn' if collate else 'torch default_collate'}"
                  f" of them")
    samples = []
    try:
        for sample in ds:
            samples.append(sample)
            if len(samples) == 2:
                break
    except Exception as e:  # noqa: BLE001
        fail(f"{a.factory}: iterating the IterableDataset raised {type(e).__name__}: {e}\n"
             f"{traceback.format_exc(limit=-3)}fix its __iter__ (it was given {len(paths)} paths, the first "
             f"{paths[0]})", 2)
    if not samples:
        fail(f"{a.factory}: the IterableDataset yielded no sample over the {len(paths)} paths given to "
             f"{FACTORY[1]}(paths) (the first: {paths[0]}): a DataLoader has nothing to load; check that it "
             f"iterates the paths it is given", 2)
    check_collate(a, samples, collate, torch, "IterableDataset's", "yield", "from __iter__")


def interpreter(torch):
    """The interpreter and torch the figures were measured with (the result's first fields)."""
    return {"python": sys.executable, "python_version": platform.python_version(), "torch_version": torch.__version__,
            "cuda_available": torch.cuda.is_available()}


def write_result(path, res):
    """The driver's result, one JSON object, to `path` (--result-out), else to stdout."""
    result = json.dumps(res)
    if not path:
        print(result, flush=True)
        return
    try:
        with open(path, "w") as f:
            f.write(result + "\n")
    except OSError as e:
        fail(f"--result-out {path}: {e.strerror}", 1)
