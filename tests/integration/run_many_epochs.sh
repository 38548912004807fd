#!/usr/bin/env bash
# A --duration run over a small dataset makes many short epochs: the text report prints a bounded
# number of epoch rows (the first ones, a "... K more epochs" line, the last) while the JSON keeps
# every epoch.
# Dataset: 40 files of 4 KiB (5 batches of 8), read for 2 s: hundreds of epochs.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-epochs-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$IOPROBE" run --quiet --dir "$work/ds" --files 40 --file-size 4KiB --file-size-dist fixed --workers 2 --batch-size 8 \
  --duration 2s --json "$work/r.json" > "$work/r.txt" 2> "$work/r.err" || fail "run failed: $(cat "$work/r.err")"
epochs=$(json "$work/r.json" "len(d['results']['epochs'])")
completed=$(json "$work/r.json" "d['results']['epochs_completed']")
[ "$epochs" -ge 20 ] || skip "only $epochs epochs in 2 s on this machine; the bound is not exercised"
[ "$epochs" -ge "$completed" ] && [ "$epochs" -le $((completed + 1)) ] || fail "JSON has $epochs epochs for $completed completed"
rows=$(grep -c '^  epoch [0-9]' "$work/r.txt")
[ "$rows" -le 10 ] || fail "text prints $rows epoch rows for $epochs epochs (at most 10 expected)"
grep -q "\.\.\. $((epochs - 10)) more epochs" "$work/r.txt" || fail "text lacks the '... $((epochs - 10)) more epochs' line: $(grep epoch "$work/r.txt" | head -20)"
grep -q "^  epoch $epochs[ (]" "$work/r.txt" || fail "the last epoch ($epochs) is not shown"
[ "$(wc -l < "$work/r.txt")" -le 80 ] || fail "text report is $(wc -l < "$work/r.txt") lines"
echo "ok: $epochs epochs: $rows rows in the text, all $epochs in the JSON"
