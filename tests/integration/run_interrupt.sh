#!/usr/bin/env bash
# SIGINT/SIGTERM mid-run give a partial result: exit 130/143, valid JSON
# with partial=true, elapsed near the signal time and bytes from delivered batches only, text
# report marked INTERRUPTED; an interrupted generation is detected and regenerated next run.
# Dataset: IOPROBE_INT_FILES files of 1 MiB on tmpfs (default 4,096 = 4 GiB).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
files=${IOPROBE_INT_FILES:-4096}
avail=$(df --output=avail -B1 /dev/shm | tail -1)
[ "$avail" -gt $(( (files + 256) * 1048576 )) ] || files=512
work=$(mktemp -d /dev/shm/ioprobe-int-XXXXXX)
trap 'rm -rf "$work"' EXIT
ds="$work/ds"
"$IOPROBE" gen --quiet --dir "$ds" --files "$files" --file-size 1MiB --file-size-dist fixed > /dev/null || fail "gen failed"

check_partial() {  # $1 signal, $2 expected exit code
  local sig=$1 want=$2 out="$work/$1.json" txt="$work/$1.txt" rc
  timeout --preserve-status -s "$sig" 5 "$IOPROBE" run --quiet --dir "$ds" --files "$files" --file-size 1MiB --file-size-dist fixed --workers 4 \
      --duration 60s --json "$out" > "$txt" 2> "$work/$sig.err"
  rc=$?
  [ "$rc" = "$want" ] || fail "$sig: exit $rc, expected $want; stderr: $(cat "$work/$sig.err")"
  python3 -m json.tool "$out" > /dev/null || fail "$sig: JSON invalid or missing; stderr: $(cat "$work/$sig.err")"
  [ "$(json "$out" "d['partial']")" = True ] || fail "$sig: partial is not true"
  grep -q INTERRUPTED "$txt" || fail "$sig: text report not marked INTERRUPTED"
  python3 - "$out" "$sig" <<'PY' || fail "$sig: figures inconsistent"
import json, sys
d = json.load(open(sys.argv[1])); r = d['results']
e = r['elapsed_s']
# timeout starts its clock before ioprobe starts; startup (probe, manifest check) takes < 1 s here.
assert 3.5 <= e <= 5.5, f"elapsed {e} s, expected about 5 s (signal after 5 s, minus startup)"
assert r['samples'] > 0, "no samples before the signal"
assert r['bytes'] == r['samples'] * 1048576, f"bytes {r['bytes']} != samples {r['samples']} x 1 MiB"
assert 'interrupted' in r['stop_reason'] and sys.argv[2] in r['stop_reason'], r['stop_reason']
tl = sum(p['bytes'] for p in r['timeline'])
assert tl == r['bytes'], f"timeline bytes {tl} != results.bytes {r['bytes']}"
assert abs(r['bytes_per_s'] - r['bytes'] / e) < 1e-6 * r['bytes_per_s'] + 1, "bytes_per_s != bytes / elapsed"
print(f"ok: SIG{sys.argv[2]}: {r['samples']} samples, {r['bytes']} B in {e:.2f} s, stop_reason '{r['stop_reason']}'")
PY
}
check_partial INT 130
check_partial TERM 143

# Interrupted generation: the manifest stays incomplete and the next run regenerates. Many small
# files (about 5 s of work here, one open+close each) so that the signal lands mid-generation even
# on a fast, idle machine (64 KiB files on tmpfs finished in 0.44 s before it arrived).
ds2="$work/ds2"
"$IOPROBE" gen --dir "$ds2" --files 200000 --file-size 4KiB --file-size-dist fixed > "$work/gen.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -n "$(ls "$ds2" 2>/dev/null | grep -v '^\.' | head -1)" ] && break; sleep 0.05; done
sleep 0.1
kill -INT $pid; wait $pid; rc=$?
[ "$rc" = 130 ] || fail "interrupted gen exited $rc, expected 130: $(cat "$work/gen.txt")"
grep -q "incomplete" "$work/gen.txt" || fail "interrupted gen did not say incomplete: $(cat "$work/gen.txt")"
[ "$(json "$ds2/.ioprobe-dataset.json" "d['complete']")" = False ] || fail "manifest says complete after interrupt"
"$IOPROBE" gen --quiet --dir "$ds2" --files 200000 --file-size 4KiB --file-size-dist fixed > "$work/gen2.txt" 2>&1 || fail "regen failed"
grep -q "regenerated (previous generation incomplete)" "$work/gen2.txt" || fail "next gen did not regenerate: $(cat "$work/gen2.txt")"
n=$(find "$ds2" -type f ! -name '.ioprobe-*' | wc -l)
[ "$n" = 200000 ] && [ "$(sum_sizes "$ds2")" = $((200000 * 4096)) ] || fail "regenerated set has $n files"
echo "ok: interrupted gen exit 130, manifest incomplete, next gen regenerated 200,000 files"

# A second SIGINT quits at once (no drain, no report).
timeout --preserve-status -s INT 8 "$IOPROBE" run --quiet --dir "$ds" --files "$files" --file-size 1MiB --file-size-dist fixed --workers 4 --duration 60s \
   --step-time 10s > /dev/null 2>&1 &
pid=$!
sleep 3; kill -INT $pid; sleep 0.2; kill -INT $pid 2>/dev/null
t0=$(date +%s%N); wait $pid; rc=$?; t1=$(date +%s%N)
[ "$rc" = 130 ] || fail "double SIGINT: exit $rc"
echo "ok: second SIGINT exited 130 in $(( (t1 - t0) / 1000000 )) ms"
