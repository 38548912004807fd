#!/usr/bin/env bash
# A run that --duration ends inside an epoch: that epoch's row (text and JSON) says it was cut
# short by the duration, its samples/s is over the time it ran, and whole-epoch figures do not
# count it as a completed epoch.
# Dataset: 400 files of 4 KiB, batches of 4 at a 50 ms step: an epoch takes about 5 s, the run 2 s.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-cut-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$IOPROBE" run --quiet --dir "$work/ds" --files 400 --file-size 4KiB --file-size-dist fixed --workers 2 --batch-size 4 \
  --step-time 50ms --duration 2s --json "$work/r.json" > "$work/r.txt" 2> "$work/r.err" || fail "run failed: $(cat "$work/r.err")"
python3 - "$work/r.json" <<'PY' || fail "JSON figures of the cut epoch are wrong"
import json, sys
d = json.load(open(sys.argv[1])); r = d['results']
assert r['stop_reason'] == 'duration reached', r['stop_reason']
assert r['epochs_completed'] == 0, r['epochs_completed']
assert 0 < r['samples'] < 400, f"samples {r['samples']}: the epoch was to be cut short"
e = r['epochs']
assert len(e) == 1, e
assert e[0].get('partial') is True, f"the cut epoch is not marked partial: {e[0]}"
assert e[0].get('cut_by') == 'duration reached', e[0].get('cut_by')
assert abs(e[0]['elapsed_s'] - r['elapsed_s']) < 0.5, (e[0]['elapsed_s'], r['elapsed_s'])
assert abs(e[0]['samples_per_s'] - e[0]['samples'] / e[0]['elapsed_s']) < 1e-6 * e[0]['samples_per_s'] + 1e-9
# A whole epoch's bytes are the dataset's (its manifest), not those delivered before the stop.
assert d['dataset']['bytes'] == 400 * 4096, d['dataset']['bytes']
print(f"ok: epoch 1 cut at {e[0]['elapsed_s']:.2f} s after {e[0]['samples']} samples ({e[0]['samples_per_s']:.0f} samples/s)")
PY
grep -q "epoch 1 (cut short)" "$work/r.txt" || fail "text lacks 'epoch 1 (cut short)': $(cat "$work/r.txt")"
grep -q "cut short by the stop (duration reached)" "$work/r.txt" || fail "text does not say the duration cut it"
grep -q "0 epoch(s) completed" "$work/r.txt" || fail "text counts the cut epoch as completed"
"$IOPROBE" report "$work/r.json" | grep -q "epoch 1 (cut short)" || fail "report FILE does not show the cut epoch"
echo "ok: the --duration cut epoch is marked in text, JSON and report"
