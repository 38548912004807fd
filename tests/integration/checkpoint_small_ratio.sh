#!/usr/bin/env bash
# checkpoint at a few MiB: the save and the raw write take a few ms, so checkpoint / raw swings run
# to run (0.5-0.8 at 4 MiB here); the report keeps the figure but says it is not meaningful at this
# size and which --size to use (JSON comparison.ratio_meaningful false, comparison.ratio_note).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-ckratio-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$IOPROBE" checkpoint --quiet --dir "$work/ck" --size 4MiB --json "$work/r.json" > "$work/r.txt" 2>&1 \
  || fail "checkpoint failed: $(cat "$work/r.txt")"
[ "$(json "$work/r.json" "d['checkpoint']['comparison'].get('available')")" = True ] || skip "no raw baseline here"
[ "$(json "$work/r.json" "d['checkpoint']['comparison']['ratio_meaningful']")" = False ] || fail "ratio_meaningful is not false at 4 MiB"
grep -q "checkpoint / raw = " "$work/r.txt" || fail "the ratio itself is gone"
grep -q "note: .*this ratio is not meaningful at this size; use --size [0-9]*[MG]iB or more" "$work/r.txt" \
  || fail "no note on the ratio at 4 MiB: $(grep -A2 'checkpoint / raw' "$work/r.txt")"
"$IOPROBE" report "$work/r.json" | grep -q "not meaningful at this size" || fail "report FILE lacks the note"
echo "ok: $(grep 'note:' "$work/r.txt" | head -1)"
