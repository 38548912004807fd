"""Shared helpers of tools/bench-dataloader, tools/bench-smallfiles and tools/calibrate-dataloader.

Standard library only, so the drivers run under any python3; the PyTorch side (bench_dataloader.py)
runs under a python3 that imports torch (installed with apt-get python3-torch when missing).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PT_SCRIPT = os.path.join(HERE, "bench_dataloader.py")


def die(prog, msg, code=2):
    print(f"{prog}: {msg}", file=sys.stderr)
    sys.exit(code)


def note(prog, msg):
    print(f"{prog}: {msg}", file=sys.stderr, flush=True)


def find_ioprobe(prog, given):
    if given:
        if not os.access(given, os.X_OK):
            die(prog, f"--ioprobe {given}: not an executable file; build ioprobe (tools/build) or fix the path")
        return os.path.abspath(given)
    cands = [os.path.join(ROOT, "build", "ioprobe")]
    cands += sorted(os.path.join(ROOT, d, "ioprobe") for d in os.listdir(ROOT) if d.startswith("build"))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    w = shutil.which("ioprobe")
    if w:
        return w
    die(prog, "no ioprobe binary found; build it (tools/build) or pass --ioprobe PATH")


def _imports_torch(py):
    try:
        return subprocess.run([py, "-c", "import torch, numpy"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_torch_python(prog, given=None):
    """A python3 that imports torch; installs Debian's python3-torch with apt-get when none does."""
    cands = [given] if given else [sys.executable, "/usr/bin/python3", shutil.which("python3")]
    for py in cands:
        if py and _imports_torch(py):
            return py
    if given:
        die(prog, f"--python {given} cannot import torch and numpy")
    note(prog, "no python3 with torch found; installing python3-torch with apt-get (large, a few minutes)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "install", "-y", "-q", "python3-torch"], ["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "python3-torch"]):
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=False)
        if _imports_torch("/usr/bin/python3"):
            return "/usr/bin/python3"
    die(prog, "could not install python3-torch (apt-get install python3-torch failed); install PyTorch and "
              "pass --python PATH", 1)


def run_measured(prog, cmd, env=None):
    """Runs cmd; returns (stdout, user_s, sys_s) of its whole process tree (wait4: all threads,
    children the tree waited for). Dies with the command's stderr when it fails."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, etext = out.read(), err.read()
    if rc != 0:
        die(prog, f"command failed (exit {rc}): {' '.join(cmd)}\n{etext.strip()[-2000:]}", 1)
    return text, ru.ru_utime, ru.ru_stime


def drop_caches():
    """sync + echo 3 > /proc/sys/vm/drop_caches. Returns None when done, else the reason it was not."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return f"cannot drop the page cache ({e.strerror}; needs root): 'cold' rows may be partly warm"


def ioprobe_gen(prog, exe, data_dir, files, extra=()):
    cmd = [exe, "gen", "--dir", data_dir, "--files", str(files), "--quiet"] + list(extra)
    run_measured(prog, cmd)


def pytorch_epoch(prog, py, data_dir, workers, batch, seed=0, list_file=None):
    cmd = [py, PT_SCRIPT, "--dir", data_dir, "--workers", str(workers), "--batch-size", str(batch), "--seed", str(seed)]
    if list_file:
        cmd += ["--list", list_file]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    text, u, s = run_measured(prog, cmd, env=env)
    res = json.loads(text.strip().splitlines()[-1])
    res["tree_user_s"], res["tree_sys_s"] = u, s
    return res


def ioprobe_epoch(prog, exe, data_dir, files, workers, batch, cache, cpu_per_sample=0.0, seed=0, extra=(), workdir=None):
    """One epoch of `ioprobe run` over the generated dataset in data_dir, no GPU wait (cpu_per_sample
    None: no --cpu-per-sample, e.g. with a --calibration in extra). Returns the JSON document's
    results plus the whole process tree's CPU from wait4."""
    fd, jpath = tempfile.mkstemp(prefix="ioprobe-", suffix=".json", dir=workdir)
    os.close(fd)
    try:
        cost = [] if cpu_per_sample is None else ["--cpu-per-sample", f"{cpu_per_sample:.3f}"]
        cmd = [exe, "run", "--dir", data_dir, "--files", str(files), "--workers", str(workers), "--batch-size", str(batch),
               "--cache", cache] + cost + ["--gpu-samples-per-s", "1e9",
               "--seed", str(seed), "--quiet", "--json", jpath] + list(extra)
        _, u, s = run_measured(prog, cmd)
        with open(jpath) as f:
            doc = json.load(f)
    finally:
        os.unlink(jpath)
    res = doc["results"]
    res["tree_user_s"], res["tree_sys_s"] = u, s
    res["engine_used"] = doc.get("loader", {}).get("engine", "")
    return res


def make_tmpfs_dir(prog, base, name):
    """A new directory under base (a tmpfs, e.g. /dev/shm). Returns its path."""
    if not os.path.isdir(base):
        die(prog, f"--tmpfs-dir {base}: not a directory; pass a tmpfs mount point such as /dev/shm")
    return tempfile.mkdtemp(prefix=name + "-", dir=base)


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def cpu_times():
    """(wall seconds, steal seconds summed over CPUs) now: /proc/stat's 'cpu' line, 8th value (time
    a virtual machine's CPUs were ready but the hypervisor ran something else; proc(5)), in
    USER_HZ ticks. (wall, nan) where /proc/stat cannot be read."""
    import time
    wall = time.monotonic()
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return wall, int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return wall, float("nan")


def steal_pct(t0, t1):
    """Steal time between two cpu_times() readings, as % of the host's CPU time over that span
    (100 = every CPU stolen the whole time)."""
    span = (t1[0] - t0[0]) * (os.cpu_count() or 1)
    return 100 * (t1[1] - t0[1]) / span if span > 0 else float("nan")
