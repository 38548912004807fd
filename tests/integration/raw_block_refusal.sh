#!/bin/bash
# `ioprobe raw` write tests on a block device are refused before the device is opened for
# writing: without --allow-overwrite (no open at all), and with it while the device is mounted
# (a read-only O_EXCL open, EBUSY). strace shows that no open for writing happened; the device's
# bytes are unchanged. A free device with --allow-overwrite is written (the refusal is not blanket).
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.ext4 strace md5sum blockdev dd
IMG=$WORK/dev.img && MNT=$WORK/mnt && mkdir -p "$MNT"
head -c $((32 << 20)) /dev/urandom > "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
on_exit "losetup -d '$LOOP'"

# device_hash: md5 of the device's bytes as the device holds them: caches flushed and dropped
# (BLKFLSBUF), then read with O_DIRECT, so a hash never mixes page-cache pages with device bytes.
device_hash() { blockdev --flushbufs "$LOOP" && dd if="$LOOP" iflag=direct bs=1M status=none | md5sum; }

# opens_for_write TRACE: the openat calls of the device with O_WRONLY or O_RDWR in an strace log.
opens_for_write() { grep -E "openat\(.*\"$LOOP\".*O_(WRONLY|RDWR)" "$1"; }

# 1. No --allow-overwrite: exit 2, the message names the device and the option; no open at all.
out=$(strace -f -e trace=openat -o "$WORK/t1" "$IOPROBE" raw --filename "$LOOP" --rw write --bs 64k --size 4M 2>&1); rc=$?
[ $rc = 2 ] || fail "write without --allow-overwrite: exit $rc, expected 2: $out"
grep -q -- "--allow-overwrite" <<< "$out" && grep -qF "$LOOP" <<< "$out" || fail "message lacks the device or the option: $out"
grep -qF "\"$LOOP\"" "$WORK/t1" && fail "the device was opened before the refusal: $(grep -F "$LOOP" "$WORK/t1")"
echo "ok: refused without --allow-overwrite, device never opened: $out"

# 2. Mounted: exit 2 even with --allow-overwrite; only a read-only O_EXCL open was made (EBUSY).
# The bytes compared are the device's only: ext4 is mounted ro,noload (no journal load or replay,
# so the filesystem itself writes nothing: a plain ro mount may still replay a journal), and each
# hash reads with O_DIRECT after dropping the block device's cache (a buffered hash can
# differ without any write by ioprobe). A write by ioprobe would change them.
mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
sync
before=$(device_hash) || fail "cannot read $LOOP with O_DIRECT"
mount -o ro,noload "$LOOP" "$MNT" || skip "cannot mount ext4 from $LOOP"
on_exit "umount -l '$MNT'"
out=$(strace -f -e trace=openat -o "$WORK/t2" "$IOPROBE" raw --filename "$LOOP" --rw randwrite --bs 4k --size 4M \
      --allow-overwrite --runtime 1s 2>&1); rc=$?
[ $rc = 2 ] || fail "write to a mounted device: exit $rc, expected 2: $out"
grep -q "in use" <<< "$out" || fail "message does not say the device is in use: $out"
w=$(opens_for_write "$WORK/t2") && fail "the device was opened for writing: $w"
grep -E "openat\(.*\"$LOOP\".*O_EXCL" "$WORK/t2" | grep -q EBUSY || fail "no EBUSY O_EXCL probe in the trace"
umount "$MNT" || fail "umount"
[ "$(device_hash)" = "$before" ] || fail "the mounted device's bytes changed (read with O_DIRECT)"
echo "ok: refused on a mounted device with --allow-overwrite, no open for writing: $out"

# 3. Free device, --allow-overwrite: the write runs (4 MiB at the start of the device).
before=$(head -c $((4 << 20)) "$LOOP" | md5sum)
"$IOPROBE" raw --filename "$LOOP" --rw write --bs 64k --size 4M --allow-overwrite > "$WORK/o3" 2>&1 \
  || fail "write to a free device with --allow-overwrite failed: $(cat "$WORK/o3")"
[ "$(head -c $((4 << 20)) "$LOOP" | md5sum)" != "$before" ] || fail "the free device was not written"
echo PASS
