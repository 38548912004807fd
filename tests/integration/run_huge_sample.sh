#!/usr/bin/env bash
# ioprobe_test: one very large file must not wedge a run. With a 1 TiB sparse
# file as the only sample in --data:
#  - a warm and a cold --duration 2s run return within duration + 2.5 s (the stop takes effect
#    between read requests inside the file), read no sample, exit 1 with a verdict that says
#    why (not "see the errors above"), write --json, show the real size in the dataset line and
#    warn about the sample's size first;
#  - the progress line counts bytes as they arrive: a nonzero rate before any sample completes;
#  - SIGINT inside the read returns promptly with a partial result (exit 130, JSON partial=true).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-huge-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/data"
truncate -s 1T "$work/data/huge.bin" 2> /dev/null || skip "cannot create a 1 TiB sparse file in /var/tmp"
[ "$(stat -c %b "$work/data/huge.bin")" -lt 2048 ] || skip "the filesystem does not keep the file sparse"

now() { date +%s.%N; }
for cache in warm cold; do
  t0=$(now)
  "$IOPROBE" run --data "$work/data" --cache $cache --duration 2s --json "$work/$cache.json" > "$work/$cache.txt" \
    2> "$work/$cache.err"
  rc=$?
  t=$(python3 -c "print(f'{$(now) - $t0:.2f}')")
  python3 -c "import sys; sys.exit(0 if $t <= 4.5 else 1)" || fail "$cache run took $t s for --duration 2s"
  [ $rc = 1 ] || fail "$cache run read no sample but exited $rc; stderr: $(cat "$work/$cache.err")"
  python3 - "$work/$cache.json" <<'PY' || fail "$cache: result wrong: $(grep verdict "$work/$cache.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
r, ing = d['results'], d['ingest']
assert r['samples'] == 0 and r['errors'] == 0, (r['samples'], r['errors'])
assert ing['verdict'] == 'failed', ing['verdict']
assert 'errors above' not in ing['verdict_text'] and 'duration reached' in ing['verdict_text'], ing['verdict_text']
assert d["dataset"]["bytes"] == 1 << 40, d['dataset']['bytes']
assert any('larger than 1.00 GiB' in w and '1.00 TiB' in w for w in d['warnings']), d['warnings']
PY
  grep -q "^  files .*1 file, 1.00 TiB" "$work/$cache.txt" || fail "$cache: the dataset line does not say 1.00 TiB: $(grep -A2 '^Dataset' "$work/$cache.txt")"
  echo "ok: $cache --duration 2s on a 1 TiB sample: returned in $t s, exit 1, $(grep -m1 "^  verdict" "$work/$cache.txt" | cut -c1-120)"
done

# Progress counts bytes as they arrive: a non-terminal progress line is printed every 10 s, so
# run 11 s and look for a nonzero rate while no sample has completed.
"$IOPROBE" run --data "$work/data" --cache cold --duration 11s > /dev/null 2> "$work/progress.err"
grep "reading: 0 samples" "$work/progress.err" | grep -qv " 0.00 MB/s" \
  || fail "progress shows no bytes while the huge sample is read: $(cat "$work/progress.err")"
echo "ok: progress while reading the sample: $(grep 'reading:' "$work/progress.err" | head -1)"

t0=$(now)
timeout --preserve-status -s INT 2 "$IOPROBE" run --quiet --data "$work/data" --cache warm --duration 60s \
  --json "$work/int.json" > "$work/int.txt" 2> "$work/int.err"
rc=$?
t=$(python3 -c "print(f'{$(now) - $t0:.2f}')")
[ $rc = 130 ] || fail "SIGINT inside the read: exit $rc, expected 130; stderr: $(cat "$work/int.err")"
python3 -c "import sys; sys.exit(0 if $t <= 4.0 else 1)" || fail "SIGINT after 2 s took until $t s"
[ "$(json "$work/int.json" "d['partial']")" = True ] || fail "SIGINT: JSON partial is not true"
grep -q INTERRUPTED "$work/int.txt" || fail "SIGINT: text not marked INTERRUPTED"
echo "ok: SIGINT 2 s into the read: exit 130 after $t s, partial JSON written"
