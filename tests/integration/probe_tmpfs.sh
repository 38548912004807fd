#!/bin/bash
# ioprobe probe on a tmpfs it mounts itself: fs type, RAM-backed, no device, O_DIRECT as the kernel says.
. "$(dirname "$0")/target_common.bash"
need_root "mount -t tmpfs"
MNT=$WORK/mnt && mkdir -p "$MNT"
mount -t tmpfs -o size=64m ioprobe-tmpfs "$MNT" || skip "mount -t tmpfs refused (container without CAP_SYS_ADMIN?)"
on_exit "umount -l '$MNT'"
make_files "$MNT" 8 1048576
probe "$MNT" "$WORK/probe.json"
check_json "$WORK/probe.json" '
expect(t["fs_type"] == "tmpfs", "fs_type tmpfs")
expect(t["mount_source"] == "ioprobe-tmpfs", "mount source as mounted")
expect(t["memory_backed"] is True, "memory_backed")
expect(t["network"] is False, "not network")
expect(t["device"] == "" and t["device_chain"] == [], "no block device")
expect(t["o_direct"] == o_direct_truth(t["o_direct_probe_file"]), "O_DIRECT " + t["o_direct"] + " as the kernel says")
expect(d["engine"]["cold"]["engine"] == "psync", "auto engine on tmpfs is psync")
expect(any("RAM" in w for w in d["warnings"]), "warns that tmpfs is RAM")
'
loader_run "$MNT"
echo PASS
