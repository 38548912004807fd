#!/usr/bin/env bash
# ioprobe leaves its target unmountable when it exits: a user who runs it and then unmounts the
# filesystem must not get "target is busy". io_uring releases the files a ring holds (registered
# or direct descriptors) in its deferred teardown, after io_uring_queue_exit returns, so without
# releasing them first the umount right after an io_uring run failed (3 of 3) where psync's
# never did. Checked on tmpfs and on ext4 over a loop device, for run (loader reads), raw and
# checkpoint with --engine io_uring (or their io_uring writer/reader), each followed at once by a
# plain umount, 3 times.
. "$(dirname "$0")/target_common.bash"
need_root "mount and umount"
"$IOPROBE" raw --filename "$WORK/probe.bin" --size 1MiB --runtime 0.2s --engine io_uring --quiet >/dev/null 2>&1 ||
  skip "io_uring is not available here (raw --engine io_uring refused)"
rm -f "$WORK/probe.bin"

# check_umount FSNAME MOUNTCMD WHAT ARGS...: mount, prepare, then 3 times: ioprobe ARGS, umount at once.
check_umount() {
  local fs=$1 mountcmd=$2 what=$3 i out rc
  shift 3
  for i in 1 2 3; do
    eval "$mountcmd" || skip "cannot mount $fs"
    out=$("$IOPROBE" "$@" 2>&1); rc=$?
    [ $rc = 0 ] || { umount -l "$MNT"; fail "$fs $what: ioprobe exited $rc: $out"; }
    if ! err=$(umount "$MNT" 2>&1); then
      sleep 1; umount "$MNT" 2>/dev/null || umount -l "$MNT"
      fail "$fs $what, try $i: umount right after ioprobe exited: $err"
    fi
  done
  echo "ok: $fs: $what, 3 times: umount at once succeeded"
}

MNT=$WORK/mnt
mkdir -p "$MNT"
ds=(--files 200 --file-size 64KiB --file-size-dist fixed --quiet)
mount_tmpfs="mount -t tmpfs ioprobe-umount '$MNT' && '$IOPROBE' gen --dir '$MNT/ds' ${ds[*]} >/dev/null"
check_umount tmpfs "$mount_tmpfs" "run --engine io_uring" --dir "$MNT/ds" "${ds[@]}" --engine io_uring --cache warm
check_umount tmpfs "mount -t tmpfs ioprobe-umount '$MNT'" "raw --engine io_uring" raw --filename "$MNT/t.bin" \
  --size 8MiB --rw randread --bs 4k --iodepth 8 --runtime 0.5s --engine io_uring --quiet
check_umount tmpfs "mount -t tmpfs ioprobe-umount '$MNT'" "checkpoint" checkpoint --dir "$MNT/ck" --size 16MiB \
  --restore --quiet

need_cmd losetup mkfs.ext4
truncate -s 512M "$WORK/ext4.img"
LOOP=$(losetup -f --show "$WORK/ext4.img" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
on_exit "losetup -d '$LOOP'"
on_exit "umount -l '$MNT'"
mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
mount "$LOOP" "$MNT" && "$IOPROBE" gen --dir "$MNT/ds" "${ds[@]}" >/dev/null && umount "$MNT" || fail "ext4 set-up"
check_umount ext4 "mount '$LOOP' '$MNT'" "run --engine io_uring (cold)" --dir "$MNT/ds" "${ds[@]}" \
  --engine io_uring --cache cold
check_umount ext4 "mount '$LOOP' '$MNT'" "raw --engine io_uring --direct 1" raw --filename "$MNT/t.bin" --size 8MiB \
  --rw randread --bs 4k --iodepth 8 --direct 1 --runtime 0.5s --engine io_uring --quiet
check_umount ext4 "mount '$LOOP' '$MNT'" "checkpoint" checkpoint --dir "$MNT/ck" --size 16MiB --restore --quiet
