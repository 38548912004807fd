#!/usr/bin/env bash
# Under `taskset -c 0`, --workers 4 reports 1 allowed CPU (sched_getaffinity,
# not the online count), warns that 4 workers share 1 CPU, and shows each worker's actual mask.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
command -v taskset > /dev/null || skip "taskset not installed"
work=$(mktemp -d /var/tmp/ioprobe-aff-XXXXXX)
trap 'rm -rf "$work"' EXIT
taskset -c 0 "$IOPROBE" run --quiet --dir "$work/ds" --files 200 --file-size 64KiB --workers 4 \
   --gpu-samples-per-s 1000000 --json "$work/a.json" > "$work/a.txt" 2>&1 || fail "run failed: $(cat "$work/a.txt")"
python3 - "$work/a.json" <<'PY' || fail "affinity report wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['host']['cpus_allowed'] == 1, d['host']['cpus_allowed']
ws = d['results']['workers']
assert len(ws) == 4 and all(w['cpu_list'] == '0' for w in ws), [w['cpu_list'] for w in ws]
warn = [w for w in d['warnings'] if '4 worker threads share 1 allowed CPUs' in w]
assert warn, d['warnings']
print(f"ok: cpus_allowed 1 of {d['host']['cpus_online']} online; worker masks {[w['cpu_list'] for w in ws]}; '{warn[0]}'")
PY
grep -q "4 worker(s) on CPUs 0" "$work/a.txt" || fail "text lacks the workers' CPU set"
