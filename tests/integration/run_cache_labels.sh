#!/usr/bin/env bash
# Page-cache labels and tmpfs labelling.
#  Page cache: right after `gen`, `--cache warm --epochs 3` finds epoch 1 ~100% resident ("warm"); a cold
#      buffered run (`--direct off`) evicts before each epoch: ~0% resident ("cold").
#  tmpfs: `--cache cold` on /dev/shm (tmpfs; accepts O_DIRECT since 6.6) is labelled RAM, not a
#      device measurement; `--direct on` where O_DIRECT is refused stops with a clear message.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-cache-XXXXXX)
shm=
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
common=(--quiet --files 1024 --file-size 256KiB --file-size-dist fixed --workers 2 --batch-size 64
        --gpu-samples-per-s 1000000)

"$IOPROBE" gen "${common[@]}" --dir "$work/ds" > /dev/null || fail "gen failed"
"$IOPROBE" run "${common[@]}" --dir "$work/ds" --cache warm --epochs 3 --json "$work/warm.json" > "$work/warm.txt" \
  || fail "warm run failed: $(cat "$work/warm.txt")"
python3 - "$work/warm.json" <<'PY' || fail "warm labels wrong"
import json, sys
d = json.load(open(sys.argv[1])); f = d['target']['epoch_resident_fraction']
assert len(f) == 3, f
assert all(x >= 0.95 for x in f), f"epochs should be ~100% resident right after gen: {f}"
assert d['target']['epoch_source'] == ['page cache'] * 3, d['target']['epoch_source']
assert d['target']['cache_budget']['fits'] is True, d['target']['cache_budget']
assert 'measured from the page cache' in d['ingest']['verdict_text'], d['ingest']['verdict_text']
assert d['results']['bytes'] == 3 * 1024 * 262144, d['results']['bytes']
assert d['target']['residency_method'] in ('cachestat', 'mincore'), d['target']['residency_method']
print(f"ok: warm after gen: resident before epochs {[round(x*100) for x in f]}% [{d['target']['residency_method']}]")
PY
grep -q "epoch 1: 100% (from the page cache)" "$work/warm.txt" || fail "text lacks 'epoch 1: 100% (from the page cache)': $(grep resident "$work/warm.txt")"

"$IOPROBE" run "${common[@]}" --dir "$work/ds" --cache cold --direct off --epochs 3 --json "$work/cold.json" \
  > "$work/cold.txt" || fail "cold buffered run failed: $(cat "$work/cold.txt")"
python3 - "$work/cold.json" <<'PY' || fail "cold labels wrong"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']; f = t['epoch_resident_fraction']
assert t['direct'] is False and 'evicted' in t['cache_detail'], t['cache_detail']
assert len(f) == 3 and all(x <= 0.05 for x in f), f"evicted epochs should be ~0% resident: {f}"
assert t['epoch_source'] == ['device'] * 3, t['epoch_source']
assert d['results']['bytes'] == 3 * 1024 * 262144
print(f"ok: cold buffered (--direct off): resident before epochs {[round(x*100) for x in f]}%; {t['cache_detail']}")
PY
grep -q "epoch 1: 0% (from the device)" "$work/cold.txt" || fail "text lacks 'epoch 1: 0% (from the device)'"
out=$("$IOPROBE" run "${common[@]}" --dir "$work/ds" --cache warm --direct on 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "contradicts" || fail "--cache warm --direct on: exit $rc: $out"

# tmpfs: labelled RAM.
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs (page-cache part passed)"
shm=$(mktemp -d /dev/shm/ioprobe-c1-XXXXXX)
"$IOPROBE" run --quiet --dir "$shm/ds" --files 100 --file-size 1MiB --file-size-dist fixed --workers 2 \
   --cache cold --json "$shm/c1.json" > "$shm/c1.txt" 2> "$shm/c1.err"; rc=$?
if [ $rc = 0 ]; then
  python3 - "$shm/c1.json" <<'PY' || fail "tmpfs run not labelled as RAM"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
assert t['fs_type'] == 'tmpfs' and t['memory_backed'] is True, t
assert 'not a device measurement' in t['cache_detail'], t['cache_detail']
assert d['results']['samples'] == 100 and d['results']['bytes'] == 100 * 1048576
print(f"ok: tmpfs cold: direct={t['direct']}; {t['cache_detail']}")
PY
  grep -q "tmpfs.*RAM, not a device measurement" "$shm/c1.txt" || fail "text lacks the tmpfs RAM label"
else
  fail "cold run on tmpfs exited $rc: $(cat "$shm/c1.err")"
fi
# Where O_DIRECT is refused (tmpfs before 6.6), --direct on must stop with the reason (exit 2).
if [ "$(python3 -c "import json; print(json.load(open('$shm/c1.json'))['target']['direct'])")" = False ]; then
  out=$("$IOPROBE" run --quiet --dir "$shm/ds" --files 100 --file-size 1MiB --file-size-dist fixed --direct on 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "O_DIRECT not supported" || fail "--direct on where refused: exit $rc: $out"
  echo "ok: --direct on where O_DIRECT is refused: $out"
else
  echo "note: this kernel's tmpfs accepts O_DIRECT ($(uname -r)); the refusal path is covered where it is refused"
fi
