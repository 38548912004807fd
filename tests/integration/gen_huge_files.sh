#!/usr/bin/env bash
# A --files far beyond the filesystem, and Ctrl-C while a huge dataset is planned:
#  - imagenet-like with 30,000,000 files on a 16 MiB tmpfs is refused at once (it planned every
#    file first: ~16 s and gigabytes of memory), the need labelled as an estimate, and nothing is
#    left there;
#  - before the first file is written, generation says how many files and bytes go where;
#  - SIGINT while 30,000,000 files are planned (ramfs reports no size, so no refusal) ends it
#    within a few seconds with exit 130, saying nothing was written, and leaves no directory or
#    manifest behind (it was ignored until the planning ended, then a manifest was written).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_mount genhuge tmpfs size=16m

t0=$(date +%s%N)
"$IOPROBE" gen --dataset imagenet-like --files 30000000 --dir "$MNT/ds" > "$W/huge.out" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 1 ] || fail "30,000,000 files on 16 MiB: exit $rc, expected 1: $(cat "$W/huge.out")"
grep -qE "not enough space in .*need about [0-9.]+ TiB .*for 30,000,000 files of about .*estimated from the first 65,536 sizes drawn.*available" "$W/huge.out" ||
  fail "the refusal does not name the estimated need and what is available: $(cat "$W/huge.out")"
[ "$ms" -lt 5000 ] || fail "the refusal took $ms ms (it must come before the files are planned)"
[ -z "$(ls -A "$MNT")" ] || fail "left behind on the refused filesystem: $(ls -A "$MNT")"
echo "ok: refused in $ms ms: $(grep 'not enough' "$W/huge.out")"

"$IOPROBE" gen --dir "$MNT/small" --files 4 --file-size 1MiB --file-size-dist fixed > "$W/small.out" 2> "$W/small.err" ||
  fail "gen of 4 MiB failed: $(cat "$W/small.err")"
grep -q "writing the dataset: 4 files, 4.00 MiB (4,194,304 B) in '$MNT/small'" "$W/small.err" ||
  fail "no line naming the files, bytes and directory before writing: $(cat "$W/small.err")"
# tmpfs is RAM: the line says the share of the host's memory the dataset will hold.
grep -qE "that filesystem is RAM: the dataset will hold [0-9.]+% of this host's .* of memory" "$W/small.err" ||
  fail "a tmpfs dataset is not said to hold RAM: $(cat "$W/small.err")"
echo "ok: announced: $(grep 'writing the dataset' "$W/small.err")"

R=$W/ramfs
mkdir "$R" && mount -t ramfs ioprobe-genhuge-ramfs "$R" 2>/dev/null || skip "cannot mount ramfs (the tmpfs parts passed)"
trap 'umount "$R" 2>/dev/null; umount "$MNT" 2>/dev/null; rm -rf "$W"' EXIT
"$IOPROBE" gen --dataset imagenet-like --files 30000000 --dir "$R/ds" > "$W/int.out" 2>&1 &
pid=$!
sleep 1.5
kill -INT $pid
t0=$(date +%s%N)
wait $pid
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 130 ] || fail "SIGINT while planning: exit $rc, expected 130: $(cat "$W/int.out")"
[ "$ms" -lt 3000 ] || fail "SIGINT while planning: it took $ms ms to stop"
grep -q "before anything was written" "$W/int.out" || fail "does not say nothing was written: $(cat "$W/int.out")"
[ ! -e "$R/ds" ] || fail "left behind after SIGINT while planning: $(ls -A "$R/ds" | head)"
echo "ok: SIGINT while planning 30,000,000 files: exit 130 after $ms ms, nothing left"
