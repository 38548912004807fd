#!/bin/bash
# A filesystem that refuses O_DIRECT and reports no size (ramfs, needs root): the default
# --direct true falls back to buffered writes and reads, labelled, with no EEXIST from a second
# create of the temporary file; no free-space refusal or warning from a size of 0; the save
# publishes, restores (labelled in memory: no cold read from RAM) and leaves nothing behind but
# its shard (with --keep).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_mount ckpt-ramfs ramfs

for comp in none zstd:1; do
  "$IOPROBE" checkpoint --dir "$MNT/ck-${comp%%:*}" --size 16MiB --chunk-size 4MiB --io-size 1MiB --compress "$comp" \
      --restore --keep >"$W/out" 2>"$W/err"
  rc=$?
  echo "--- --compress $comp -> exit $rc"; cat "$W/out" "$W/err"
  [ $rc = 0 ] || fail "--compress $comp on ramfs: exit $rc"
  grep -q "buffered (O_DIRECT refused or off)" "$W/out" || fail "--compress $comp: the write path is not labelled buffered"
  grep -q "EEXIST" "$W/out" "$W/err" && fail "--compress $comp: EEXIST"
  grep -qi "free space\|not enough space" "$W/out" "$W/err" && fail "--compress $comp: a free-space refusal or warning on a filesystem without a size"
  grep -q "verified in" "$W/out" || fail "--compress $comp: no restore"
  grep -q "^restore, in memory (ramfs" "$W/out" || fail "--compress $comp: the restore from RAM is not labelled in memory"
  [ "$(ls -A "$MNT/ck-${comp%%:*}")" = "__0_0.distcp" ] || fail "--compress $comp: files: $(ls -A "$MNT/ck-${comp%%:*}")"
done
echo "ok: ramfs saves fall back to buffered I/O and publish"
