#!/bin/bash
# ioprobe raw on a filesystem too small for --size (a 32 MiB tmpfs; root): creating or extending
# the file is refused before any byte is written (exit 1, the bytes needed and free named), and an
# existing ioprobe file keeps its size and mark, so a later write run still needs no
# --allow-overwrite.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_mount raw-space tmpfs size=32m

"$IOPROBE" raw --filename "$MNT/new.bin" --size 1GiB --rw write >"$W/out" 2>&1; rc=$?
cat "$W/out"
[ $rc = 1 ] || fail "create 1 GiB on 32 MiB: exit $rc, expected 1"
grep -q "not enough space to create .*needs 1.00 GiB .* are free there" "$W/out" || fail "create: needed/free not named"
[ -z "$(ls -A "$MNT")" ] || fail "create: left behind: $(ls -A "$MNT")"

"$IOPROBE" raw --filename "$MNT/r.bin" --size 8MiB --rw write >"$W/out" 2>&1 || { cat "$W/out"; fail "8 MiB layout failed"; }
"$IOPROBE" raw --filename "$MNT/r.bin" --size 1GiB --rw write >"$W/out" 2>&1; rc=$?
cat "$W/out"
[ $rc = 1 ] || fail "extend to 1 GiB on 32 MiB: exit $rc, expected 1"
grep -q "not enough space to extend .*needs 1016.00 MiB .* more" "$W/out" || fail "extend: needed/free not named"
[ "$(stat -c %s "$MNT/r.bin")" = 8388608 ] || fail "extend: the file is now $(stat -c %s "$MNT/r.bin") B, not 8 MiB"
"$IOPROBE" raw --filename "$MNT/r.bin" --rw write >"$W/out" 2>&1 || { cat "$W/out"; fail "a write run on the kept file failed"; }
# An interrupted extension gives the space back: the file returns to its old size and mark.
umount "$MNT" && mount -t tmpfs -o size=3g ioprobe-raw-space "$MNT" || skip "cannot mount a 3 GiB tmpfs"
"$IOPROBE" raw --filename "$MNT/r.bin" --size 8MiB --rw write >"$W/out" 2>&1 || { cat "$W/out"; fail "8 MiB layout failed"; }
timeout --preserve-status -s INT 0.3 "$IOPROBE" raw --filename "$MNT/r.bin" --size 2900MiB --rw write >"$W/out" 2>&1; rc=$?
cat "$W/out"
if [ "$(stat -c %s "$MNT/r.bin")" = $((2900 << 20)) ]; then
  echo "note: the 2.8 GiB extension ended before the interrupt (0.3 s); the undo was not exercised"
else
  [ $rc = 130 ] || fail "interrupted extension: exit $rc, expected 130"
  grep -q "truncated back to 8.00 MiB" "$W/out" || fail "interrupted extension: no 'truncated back' note"
  [ "$(stat -c %s "$MNT/r.bin")" = 8388608 ] || fail "interrupted extension: the file is $(stat -c %s "$MNT/r.bin") B, not 8 MiB"
  "$IOPROBE" raw --filename "$MNT/r.bin" --rw write >"$W/out" 2>&1 || { cat "$W/out"; fail "the truncated file lost its mark"; }
fi
echo "ok: raw refuses layouts that do not fit and keeps the file it had"
