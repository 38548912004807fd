#!/bin/bash
# ioprobe calibrate when the Python side does not finish: an interpreter that exits non-zero
# without a word is named with its status and what to do (exit 2), one killed by a signal with the
# signal (exit 1); Ctrl-C (SIGINT to the process group, as a terminal sends it) and a SIGINT or
# SIGTERM sent to ioprobe alone end the driver quietly: exit 130 / 143, no Python traceback, no
# calibration document, an existing one left as it was, no temporary file (a second Ctrl-C, which
# quits at once, removes calibrate's temporary file list too). The interrupt part skips (77) where
# no python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calint.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/data" "$W/tmp"
export TMPDIR="$W/tmp"  # calibrate's temporary file list goes here: none may be left
for i in $(seq -w 1 200); do head -c 2000 /dev/urandom > "$W/data/f$i.bin"; done
# Each sample takes 50 ms: a pass over 192 files is about 10 s, so the signal lands mid-measurement.
cat > "$W/slow_ds.py" <<'PYEOF'
import time
import torch
from torch.utils.data import Dataset

class Slow(Dataset):
    def __init__(self, paths):
        self.paths = paths
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        time.sleep(0.05)
        with open(self.paths[i], "rb") as f:
            return torch.frombuffer(bytearray(f.read(256)), dtype=torch.uint8).float()

def make(paths):
    return Slow(paths)
PYEOF
cal=(calibrate --dataset-factory "$W/slow_ds.py:make" --data "$W/data" --batch-size 32 --samples 192)

# An interpreter that exits non-zero and prints nothing: named, with its status and what to do.
printf '#!/bin/sh\nexit 3\n' > "$W/silent3"; chmod +x "$W/silent3"
for py in /bin/false "$W/silent3"; do
  "$IOPROBE" "${cal[@]}" --python "$py" > "$W/out.txt" 2> "$W/err.txt"; rc=$?
  [ $rc = 2 ] || fail "--python $py: exit $rc, expected 2: $(cat "$W/err.txt")"
  grep -qF "$py exited with status" "$W/err.txt" || fail "--python $py: no interpreter and status: $(cat "$W/err.txt")"
  grep -q "printed nothing" "$W/err.txt" && grep -q "is a Python 3 with PyTorch" "$W/err.txt" \
    || fail "--python $py: the message does not say what happened and what to do: $(cat "$W/err.txt")"
  grep -q "see its messages above" "$W/err.txt" && fail "--python $py: points at messages that are not there"
  echo "ok: --python $py -> $(cat "$W/err.txt")"
done
# An interpreter that exits 0 without the driver's result: named, with what to do (exit 2).
"$IOPROBE" "${cal[@]}" --python /bin/true > "$W/out.txt" 2> "$W/err.txt"; rc=$?
[ $rc = 2 ] && grep -q "exited 0 without its result (it printed nothing)" "$W/err.txt" \
  || fail "--python /bin/true: exit $rc: $(cat "$W/err.txt")"
printf '#!/bin/sh\nkill -KILL $$\n' > "$W/killed"; chmod +x "$W/killed"
"$IOPROBE" "${cal[@]}" --python "$W/killed" > "$W/out.txt" 2> "$W/err.txt"; rc=$?
[ $rc = 1 ] || fail "killed python: exit $rc, expected 1: $(cat "$W/err.txt")"
grep -q "killed by signal 9 (SIGKILL)" "$W/err.txt" || fail "killed python: signal not named: $(cat "$W/err.txt")"
echo "ok: SIGKILL -> $(cat "$W/err.txt")"

PY=$(torch_python) || exit 77
# An existing calibration document must come through an interrupted calibrate untouched.
echo '{"kind": "calibration", "schema": "ioprobe.calibration/1"}' > "$W/cal.json"
before=$(md5sum < "$W/cal.json")
interrupt() {  # interrupt NAME SIGNAL WHOM EXPECTED_RC; WHOM: group (a terminal's Ctrl-C) or ioprobe (kill PID)
  local name=$1 sig=$2 whom=$3 want=$4 pid rc
  setsid "$IOPROBE" "${cal[@]}" --python "$PY" --json "$W/cal.json" > "$W/$name.out" 2> "$W/$name.err" &
  pid=$!
  for _ in $(seq 600); do grep -q "num_workers=" "$W/$name.err" 2>/dev/null && break; sleep 0.1; done
  grep -q "num_workers=" "$W/$name.err" || { kill -KILL -- -$pid; fail "$name: the driver never started measuring: $(cat "$W/$name.err")"; }
  sleep 1
  if [ "$whom" = group ]; then kill -"$sig" -- -"$pid"; else kill -"$sig" "$pid"; fi
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && { kill -KILL -- -$pid; fail "$name: still running 30 s after SIG$sig"; }
  wait "$pid"; rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$W/$name.err")"
  grep -q "Traceback" "$W/$name.err" && fail "$name: a Python traceback was printed: $(cat "$W/$name.err")"
  grep -q "interrupted; no calibration document was written" "$W/$name.err" || fail "$name: no word of it: $(cat "$W/$name.err")"
  [ "$(md5sum < "$W/cal.json")" = "$before" ] || fail "$name: the existing document was changed"
  ls -a "$W" | grep -q "ioprobe-tmp" && fail "$name: a temporary file was left: $(ls -a "$W")"
  [ -z "$(ls -A "$W/tmp")" ] || fail "$name: a temporary file was left in TMPDIR: $(ls -A "$W/tmp")"
  echo "ok: $name -> exit $rc: $(grep interrupted "$W/$name.err" | tail -1)"
}
interrupt ctrl-c INT group 130
interrupt sigint-to-ioprobe INT ioprobe 130
interrupt sigterm-to-ioprobe TERM ioprobe 143
# A second signal quits at once, without the usual cleanup: the temporary file list goes too. (A
# SIGTERM right after the SIGINT: the first alone ends calibrate within a fraction of a second, and
# the same signal twice within 100 ms from one sender counts as one.)
setsid "$IOPROBE" "${cal[@]}" --python "$PY" --json "$W/cal.json" > "$W/twice.out" 2> "$W/twice.err" &
pid=$!
for _ in $(seq 600); do grep -q "num_workers=" "$W/twice.err" 2>/dev/null && break; sleep 0.1; done
ls "$W/tmp" | grep -q "^ioprobe-calibrate-" || { kill -KILL -- -$pid; fail "twice: no temporary file list while running: $(ls -A "$W/tmp")"; }
kill -INT "$pid"; kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { kill -KILL -- -$pid; fail "twice: still running 10 s after the second signal"; }
wait "$pid"; rc=$?
kill -KILL -- -"$pid" 2>/dev/null  # the driver, if the quit left it behind
# Exit 128 + the second signal's number: the kernel may deliver the pending two in either order.
{ [ "$rc" = 130 ] || [ "$rc" = 143 ]; } && grep -q "second signal, exiting now" "$W/twice.err" \
  || fail "twice: exit $rc: $(cat "$W/twice.err")"
[ -z "$(ls -A "$W/tmp")" ] || fail "twice: a temporary file was left in TMPDIR: $(ls -A "$W/tmp")"
[ "$(md5sum < "$W/cal.json")" = "$before" ] || fail "twice: the existing document was changed"
echo "ok: SIGINT and SIGTERM -> exit $rc, no temporary file left"
