"""Progress of `ioprobe calibrate`'s driver on stderr (beside ioprobe_calibrate.py), so that the
user sees which step of theirs is running while their own code runs: each step as it starts, with
the time since the driver started, and every `every` seconds while one lasts, how many of its
samples are done and how long it has run. A step whose samples stop advancing (a factory or
__getitem__ that hangs) keeps being named, with its count standing still.

stack_dump_signal(): SIGUSR1 makes this process and the DataLoader workers it forks (they inherit
the handler) write every thread's Python stack to stderr (faulthandler.dump_traceback): ioprobe
sends it when --timeout expires, before it ends them.
"""
import faulthandler
import signal
import sys
import threading
import time

DUMP_SIGNAL = signal.SIGUSR1  # ioprobe's side: calibrate/driver.cpp kStackDumpSignal


def stack_dump_signal():
    """Registers DUMP_SIGNAL to dump all threads' stacks to stderr; the handler is C code, so it
    runs even when the main thread is stuck in an extension that never returns to Python."""
    faulthandler.register(DUMP_SIGNAL, file=sys.stderr, all_threads=True)


class Progress:
    """The step running now and its samples done; a daemon thread repeats it every `every` s."""

    def __init__(self, prog, every=5.0):
        self.prog = prog
        self.every = every
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.text = ""
        self.total = 0
        self.done = 0
        self.step_t0 = self.t0
        self.said = self.t0
        threading.Thread(target=self._repeat, name="ioprobe-progress", daemon=True).start()

    def _say(self, msg):
        print(f"{self.prog}: [{time.monotonic() - self.t0:.1f} s] {msg}", file=sys.stderr, flush=True)

    def step(self, text, total=0):
        """A new step starts: `text` names it (what of the user's code runs), `total` its samples (0: not counted)."""
        with self.lock:
            self.text, self.total, self.done = text, total, 0
            self.step_t0 = self.said = time.monotonic()
        self._say(text)

    def advance(self, n):
        """n more samples of the step are done."""
        with self.lock:
            self.done += n

    def _repeat(self):
        while True:
            time.sleep(min(1.0, self.every))
            with self.lock:
                now = time.monotonic()
                if not self.text or now - self.said < self.every:
                    continue
                self.said = now
                count = f"{self.done} of {self.total} samples done, " if self.total else ""
                msg = f"  still: {self.text}: {count}{now - self.step_t0:.0f} s in this step"
            self._say(msg)
