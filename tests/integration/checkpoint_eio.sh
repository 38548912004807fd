#!/bin/bash
# EIO mid-save: the device fails writes and the save must exit 1 with a
# message naming the path and the errno (EIO), publish nothing and leave no temporary file.
#
# How EIO is injected without device-mapper (this kernel has no dm; `dmsetup targets` fails):
# ext2 (no journal, errors=continue, so the filesystem stays writable and unlink works) on a
# 64 MiB loop device whose backing file is then cut to 8 MiB and the loop resized
# (losetup --set-capacity). Block bitmap and inode table lie in the first 8 MiB (one 4 KiB-block
# group), so files are created normally, but every data block past 8 MiB is "beyond end of
# device" and the block layer fails that bio with EIO: O_DIRECT writes see it in the io_uring
# completion; buffered writes fail with what ext2 makes of it (see the last case).
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.ext2 truncate
IMG=$WORK/ext2.img && MNT=$WORK/mnt && mkdir -p "$MNT"
LOOP=
teardown() {
  umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
  LOOP=
  rm -f "$IMG"
}
on_exit teardown
# A fresh filesystem for every case: a failed save leaves ext2's allocator in a state (blocks
# past the end, bitmaps it could not write) that changes the next case's errno.
setup_fs() {
  truncate -s 64M "$IMG"
  LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
  mkfs.ext2 -q -F -b 4096 "$LOOP" || fail "mkfs.ext2 $LOOP"
  mount -o errors=continue "$LOOP" "$MNT" || skip "cannot mount ext2 from $LOOP"
  mkdir "$MNT/ck"
  truncate -s 8M "$IMG"
  losetup -c "$LOOP" || skip "losetup --set-capacity failed: cannot shrink $LOOP to inject EIO"
  [ "$(cat "/sys/block/$(basename "$LOOP")/size")" = 16384 ] || skip "$LOOP did not shrink to 8 MiB"
}

check_case() {  # $1 label, $2 errno name expected (or "any"), rest: ioprobe options
  local label=$1 errname=$2; shift 2
  setup_fs
  "$IOPROBE" checkpoint --dir "$MNT/ck" --raw-baseline off --size 32MiB --chunk-size 4MiB --io-size 1MiB "$@" \
    >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  echo "--- [$label] ioprobe checkpoint $* -> exit $rc"; cat "$WORK/err"
  [ $rc = 1 ] || fail "[$label] exit $rc, expected 1"
  grep -q "checkpoint save failed" "$WORK/err" || fail "[$label] no 'checkpoint save failed' line"
  grep -q "$MNT/ck/__0_0.distcp" "$WORK/err" || fail "[$label] message lacks the shard path"
  grep -q "written of this shard" "$WORK/err" || fail "[$label] message lacks the bytes written"
  if [ "$errname" = any ]; then
    grep -Eq "\(E[A-Z0-9]+\)" "$WORK/err" || fail "[$label] message lacks an errno name"
  else
    grep -q "Input/output error ($errname)" "$WORK/err" || fail "[$label] message lacks the errno ($errname)"
    grep -q "I/O error: check dmesg" "$WORK/err" || fail "[$label] message lacks the hint"
  fi
  [ -z "$(ls -A "$MNT/ck")" ] || fail "[$label] files left behind: $(ls -A "$MNT/ck")"
  teardown
}

grep -qw ext2 /proc/filesystems || grep -qw ext4 /proc/filesystems || skip "no ext2 driver"
check_case "O_DIRECT, uncompressed" EIO
check_case "O_DIRECT, zstd:1" EIO --compress zstd:1
check_case "O_DIRECT, zstd:1, zstd's own pool" EIO --compress zstd:1 --compress-pool zstd
# Buffered writes land in the page cache; ext2 then fails while allocating or at fsync, with an
# errno of the kernel's choosing (both seen on 6.18: ENOMEM from write(2) when a metadata block
# past the end cannot be read, EIO from fsync at writeback): the save must still fail cleanly
# and name it.
check_case "buffered" any --direct false
echo PASS
