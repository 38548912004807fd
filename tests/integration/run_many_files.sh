#!/usr/bin/env bash
# Small files in one huge directory.
#  - 200,000 files of 512 B (102,400,000 B) in one directory, read by walking (--data) and with
#    --file-list: both count exactly 200,000 samples and 102,400,000 B; enumeration is reported
#    apart (dataset.enumerate_s) and is ~0 with --file-list; the verdict and per-file
#    open+close latency are reported.
#  - 1,000,000 zero-byte entries in one directory are enumerated exactly, in bounded memory
#    (max RSS), with no stat() per entry (strace counts); 250,000 by default, 1,000,000 with
#    IOPROBE_SLOW_TESTS=1 (or IOPROBE_BIGDIR_FILES=N).
# Runs on /dev/shm (tmpfs) so it stays fast; skips without it.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
work=$(mktemp -d /dev/shm/ioprobe-c6-XXXXXX)
trap 'rm -rf "$work"' EXIT

"$IOPROBE" gen --quiet --dir "$work/ds" --files 200000 --dirs 1 --file-size 512 --file-size-dist fixed > /dev/null \
  || fail "gen of 200,000 files failed"
find "$work/ds/c0000" -type f > "$work/list.txt"
[ "$(wc -l < "$work/list.txt")" = 200000 ] || fail "gen did not make 200,000 files in one directory"
common=(--quiet --workers 2 --batch-size 64 --shuffle --gpu-samples-per-s 100000000)
"$IOPROBE" run "${common[@]}" --data "$work/ds" --json "$work/walk.json" > "$work/walk.txt" 2>&1 \
  || fail "walk run failed: $(cat "$work/walk.txt")"
"$IOPROBE" run "${common[@]}" --file-list "$work/list.txt" --json "$work/list.json" > "$work/listrun.txt" 2>&1 \
  || fail "file-list run failed: $(cat "$work/listrun.txt")"
python3 - "$work/walk.json" "$work/list.json" <<'PY' || fail "small-file counts or bytes wrong"
import json, sys
for path, how in ((sys.argv[1], 'walk'), (sys.argv[2], 'file list')):
    d = json.load(open(path)); r = d['results']; ds = d['dataset']; i = d['ingest']
    assert r['samples'] == 200000 and r['bytes'] == 102400000 and r['errors'] == 0, (how, r['samples'], r['bytes'])
    assert ds['files'] == 200000, ds['files']
    assert 'enumerate_s' in ds and r['file_latency_us']['count'] == 200000
    assert i['verdict'] in ('metadata', 'CPU', 'storage'), i['verdict']
    print(f"ok: {how}: 200,000 samples, 102,400,000 B; enumerate {ds['enumerate_s']:.3f} s, read {r['elapsed_s']:.2f} s, "
          f"{r['files_per_s']:.0f} files/s, {r['bytes_per_s']/1e6:.1f} MB/s, open+close p50 "
          f"{r['open_close_latency_us']['p50']:.1f} µs of file p50 {r['file_latency_us']['p50']:.1f} µs; verdict {i['verdict']}")
    if how == 'file list':
        assert ds['enumerate_s'] < 2.0, f"--file-list enumeration took {ds['enumerate_s']} s"
PY

# 1,000,000 zero-byte entries: exact count, bounded memory, no stat per entry.
# 1,000,000 takes ~1-3 min on a small VM (creating the entries dominates): set IOPROBE_SLOW_TESTS=1.
n=${IOPROBE_BIGDIR_FILES:-$([ "${IOPROBE_SLOW_TESTS:-0}" = 1 ] && echo 1000000 || echo 250000)}
big="$work/big"
python3 - "$big" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2]); os.mkdir(d)
for i in range(n):
    os.close(os.open(f"{d}/{i:07d}", os.O_CREAT | os.O_WRONLY, 0o644))
PY
# --duration 1s: the walk enumerates every entry before the clock starts; the reads then stop.
strace -f --seccomp-bpf -qq -e trace=stat,lstat,newfstatat,statx -o "$work/strace.txt" \
  /usr/bin/time -f "%M" -o "$work/rss.txt" \
  "$IOPROBE" run --quiet --data "$big" --workers 2 --gpu-samples-per-s 100000000 --duration 1s --json "$work/big.json" \
  > "$work/big.txt" 2>&1 || fail "1M-entry run failed: $(tail -3 "$work/big.txt")"
files=$(json "$work/big.json" "d['dataset']['files']")
[ "$files" = "$n" ] || fail "enumerated $files entries, expected $n"
rss_kib=$(tail -1 "$work/rss.txt")
stats=$(grep -vc "AT_EMPTY_PATH\|+++\|---" "$work/strace.txt")
enum=$(json "$work/big.json" "round(d['dataset']['enumerate_s'], 2)")
echo "ok: $n zero-byte entries: enumerated $files in $enum s; max RSS $((rss_kib / 1024)) MiB; $stats stat calls by path"
# Bounded: the index holds ~30 B per path plus offsets; 1M entries must stay well under 256 MiB.
[ "$rss_kib" -lt $((256 * 1024)) ] || fail "max RSS $((rss_kib / 1024)) MiB for $n entries"
[ "$stats" -lt $((n / 100)) ] || fail "$stats stat calls for $n entries: a stat per entry?"
