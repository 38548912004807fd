#!/usr/bin/env bash
# ioprobe_test: the page-cache budget and per-epoch cache labels. A warm run
# of a 256 MiB dataset inside a memory cgroup limited to 128 MiB (cgroup v1 memory controller,
# or v2 memory.max):
#  - says before the run that the dataset does not fit the budget, naming the cgroup file;
#  - labels each epoch by its measured residency (target.epoch_source), the text likewise;
#  - its verdict never says "measured from the page cache" while residency says otherwise.
# Root only (creates a cgroup); skips where no memory cgroup can be made.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to create a memory cgroup"
work=$(mktemp -d /var/tmp/ioprobe-budget-XXXXXX)
cg=
trap '[ -n "$cg" ] && rmdir "$cg" 2>/dev/null; rm -rf "$work"' EXIT
if [ -w /sys/fs/cgroup/memory/cgroup.procs ]; then
  cg=/sys/fs/cgroup/memory/ioprobe-budget-$$ version=v1 file=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  cg=/sys/fs/cgroup/ioprobe-budget-$$ version=v2 file=memory.max
else
  skip "no writable memory cgroup (v1 memory controller or v2 with memory in subtree_control)"
fi
mkdir "$cg" 2> /dev/null || { cg=; skip "cannot create a memory cgroup"; }
echo $((128 << 20)) > "$cg/$file" 2> /dev/null || skip "cannot set $cg/$file"
common=(--files 1024 --file-size 256KiB --file-size-dist fixed --workers 2 --batch-size 64
        --gpu-samples-per-s 1000000)
"$IOPROBE" gen --quiet "${common[@]}" --dir "$work/ds" > /dev/null || fail "gen failed"
# Start from a cold cache: pages cached by gen are charged to gen's cgroup, not the test's.
sync
python3 - "$work/ds" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" \
  "$IOPROBE" run "${common[@]}" --dir "$work/ds" --cache warm --epochs 3 --json "$work/w.json" \
  > "$work/w.txt" 2> "$work/w.err" || fail "warm run in the cgroup failed: $(cat "$work/w.err")"
grep -q "cache: the dataset (256.00 MiB.*does not fit in the page-cache budget (128.00 MiB.*cgroup $version $file" \
  "$work/w.err" || fail "no preflight line naming the budget: $(cat "$work/w.err")"
python3 - "$work/w.json" "$version" <<'PY' || fail "labels wrong: $(grep -E 'resident|verdict' "$work/w.txt")"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
f, s = t['epoch_resident_fraction'], t['epoch_source']
assert len(f) == 3 and len(s) == 3, (f, s)
label = lambda x: 'page cache' if x >= 0.95 else 'device' if x <= 0.05 else 'mixed'
assert s == [label(x) for x in f], (f, s)
assert s[0] == 'device', f"evicted before the run: epoch 1 should come from the device: {f}"
assert max(f) < 0.95, f"a 256 MiB dataset cannot stay cached in 128 MiB: {f}"
b = t['cache_budget']
assert b['fits'] is False and b['bytes'] == 128 << 20 and sys.argv[2] in b['source'], b
assert any('does not fit' in w and 'partly from the device' in w for w in d['warnings']), d['warnings']
v = d['ingest']['verdict_text']
assert 'measured from the page cache' not in v, v
print(f"ok: resident before epochs {[round(x * 100) for x in f]}% -> {s}; budget {b['source']}; verdict: ...{v[-90:]}")
PY
grep -q "epoch 1: [0-9]*% (from the device)" "$work/w.txt" || fail "text lacks the epoch label: $(grep resident "$work/w.txt")"
if [ "$(json "$work/w.json" "d['target']['epoch_source'][1]")" = mixed ]; then
  grep -q "epoch 2: [0-9]*% (mixed: partly page cache, partly device)" "$work/w.txt" \
    || fail "text lacks the mixed label: $(grep resident "$work/w.txt")"
fi
