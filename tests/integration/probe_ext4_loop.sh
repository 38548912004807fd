#!/bin/bash
# ioprobe probe on ext4 on a loop device it creates: fs type, loop -> backing file, queue facts, O_DIRECT.
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.ext4
IMG=$WORK/ext4.img && MNT=$WORK/mnt && mkdir -p "$MNT"
truncate -s 64M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
on_exit "losetup -d '$LOOP'"
mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
mount "$LOOP" "$MNT" || skip "cannot mount ext4 from $LOOP"
on_exit "umount -l '$MNT'"
make_files "$MNT" 8 1048576
probe "$MNT" "$WORK/probe.json"
LOOPNAME=$(basename "$LOOP")
check_json "$WORK/probe.json" '
expect(t["fs_type"] == "ext4", "fs_type ext4")
expect(t["device"] == "'"$LOOPNAME"'", "device is the loop device")
expect(t["device_chain"][0]["kind"] == "loop", "chain starts with a loop device")
expect(t["backing_file"] == "'"$IMG"'", "loop backing file is the image")
expect(t["logical_block_bytes"] in (512, 1024, 2048, 4096), "logical block size")
expect(t["nr_requests"] is not None and t["nr_requests"] > 0, "nr_requests")
expect(t["device_numa_node"] == -1, "a loop device has no NUMA node")
expect(t["memory_backed"] is False and t["network"] is False, "local disk filesystem")
expect(t["o_direct"] == o_direct_truth(t["o_direct_probe_file"]), "O_DIRECT " + t["o_direct"] + " as the kernel says")
'
loader_run "$MNT"
echo PASS
