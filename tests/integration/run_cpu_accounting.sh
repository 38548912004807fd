#!/usr/bin/env bash
# Every run's JSON has results.cpu{user_s, sys_s, per_sample_us} and they count all
# threads of the process: with --cpu-per-sample the worker threads burn a known amount of CPU
# (measured by their own thread CPU clocks), which user_s + sys_s must include; per_sample_us is
# (user_s + sys_s) x 1e6 / samples; and the loader's figure cannot exceed what the kernel charged
# the whole process (wait4 rusage, taken from outside).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-it-XXXXXX)
trap 'rm -rf "$work"' EXIT

out="$work/run.json"
# 200 samples x 2000 µs of CPU work on 2 worker threads = 0.4 s of worker CPU at least.
python3 - "$IOPROBE" "$work" "$out" > "$work/outer.txt" 2> "$work/err.txt" <<'PY' || fail "run exited non-zero: $(cat "$work/err.txt")"
import os, subprocess, sys
exe, work, out = sys.argv[1:4]
p = subprocess.Popen([exe, "run", "--quiet", "--dir", os.path.join(work, "ds"), "--files", "200", "--dirs", "4",
                      "--file-size", "8KB", "--file-size-dist", "fixed", "--workers", "2", "--batch-size", "16",
                      "--cache", "warm", "--cpu-per-sample", "2000", "--gpu-samples-per-s", "1e9", "--json", out],
                     stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(1)
print(ru.ru_utime + ru.ru_stime)
PY
outer=$(cat "$work/outer.txt")
user=$(json "$out" "d['results']['cpu']['user_s']")
sys=$(json "$out" "d['results']['cpu']['sys_s']")
per=$(json "$out" "d['results']['cpu']['per_sample_us']")
samples=$(json "$out" "d['results']['samples']")
work_s=$(json "$out" "sum(w['cpu_work_s'] for w in d['results']['workers'])")
[ "$samples" = 200 ] || fail "samples $samples, expected 200"
python3 - "$user" "$sys" "$per" "$samples" "$work_s" "$outer" <<'PY' || exit 1
import sys
user, sys_, per, samples, work, outer = map(float, sys.argv[1:])
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
if user < 0 or sys_ < 0: fail(f"negative cpu: user_s {user} sys_s {sys_}")
total = user + sys_
want = total * 1e6 / samples
if abs(per - want) > 0.01 * want + 0.01: fail(f"per_sample_us {per} != (user_s+sys_s)*1e6/samples = {want:.3f}")
if work < 0.4 * 0.99: fail(f"workers' cpu_work_s {work} < 200 x 2000 µs: --cpu-per-sample not spent")
if total < work * 0.98: fail(f"user_s+sys_s {total:.3f} < the worker threads' own CPU work {work:.3f}: not all threads counted")
if total > outer + 0.05: fail(f"user_s+sys_s {total:.3f} > the whole process's CPU from wait4 {outer:.3f}")
print(f"ok: user_s {user:.3f} + sys_s {sys_:.3f} >= worker CPU work {work:.3f}, <= process total {outer:.3f}; "
      f"per_sample_us {per:.1f}")
PY
