#!/bin/bash
# ioprobe probe on btrfs raid0 over two loop devices it creates: must report raid0 with 2 members.
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.btrfs
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || skip "kernel has no btrfs"
grep -qw btrfs /proc/filesystems || skip "kernel has no btrfs"
MNT=$WORK/mnt && mkdir -p "$MNT"
LOOPS=()
for i in 0 1; do
  truncate -s 256M "$WORK/btrfs$i.img"
  L=$(losetup -f --show "$WORK/btrfs$i.img" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
  on_exit "losetup -d '$L'"
  LOOPS+=("$L")
done
mkfs.btrfs -q -f -d raid0 -m raid0 "${LOOPS[@]}" >/dev/null || fail "mkfs.btrfs raid0 ${LOOPS[*]}"
mount -o "device=${LOOPS[1]}" "${LOOPS[0]}" "$MNT" || skip "cannot mount btrfs from ${LOOPS[*]}"
on_exit "umount -l '$MNT'"
make_files "$MNT" 8 1048576
sync
probe "$MNT" "$WORK/probe.json"
check_json "$WORK/probe.json" '
members = sorted(["'"$(basename "${LOOPS[0]}")"'", "'"$(basename "${LOOPS[1]}")"'"])
r = t["raid"]
expect(t["fs_type"] == "btrfs", "fs_type btrfs")
expect(r["kind"] == "btrfs", "raid kind btrfs")
expect(r["level"] == "raid0", "data profile raid0")
expect(r["metadata_level"] == "raid0", "metadata profile raid0")
expect(r["member_count"] == 2 and sorted(r["members"]) == members, "2 members: " + ", ".join(members))
expect([l["name"] for l in t["device_chain"] if l["kind"] == "loop"] == members, "chain lists both loop devices")
expect(t["o_direct"] == o_direct_truth(t["o_direct_probe_file"]), "O_DIRECT " + t["o_direct"] + " as the kernel says")
'
loader_run "$MNT"
echo PASS
