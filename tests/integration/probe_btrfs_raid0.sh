#!/bin/bash
# ioprobe probe on btrfs raid0 over two loop devices it creates: must report raid0 with 2 members.
. "$(dirname "$0")/target_common.bash"
make_btrfs_raid0 256M
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
