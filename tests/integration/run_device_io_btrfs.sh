#!/bin/bash
# Device-level accounting on btrfs raid0 over two loop devices the test makes: a cold O_DIRECT
# run's reads split over both members (each at least 30% of the bytes delivered with 1 MiB files
# striped in 64 KiB), the members summed right, the total at least 90% of the bytes delivered.
# Not 100%: on Linux 6.18 btrfs serves a few O_DIRECT reads of files still in the page cache
# after gen from the cache (62 of 64 MiB reached the members here, run after run); ext4 reads
# every byte from its device (run_device_io.sh), so this is btrfs's, and device_io shows it.
. "$(dirname "$0")/target_common.bash"
make_btrfs_raid0 256M
common=(--quiet --dir "$MNT/ds" --files 64 --file-size 1MiB --file-size-dist fixed --workers 2 --batch-size 8
        --gpu-samples-per-s 1000000)
"$IOPROBE" gen "${common[@]}" >/dev/null || fail "gen on $MNT"
sync
"$IOPROBE" run "${common[@]}" --cache cold --json "$WORK/cold.json" >"$WORK/cold.txt" 2>&1 \
  || fail "cold run exited $?: $(cat "$WORK/cold.txt")"
python3 - "$WORK/cold.json" "$(basename "${LOOPS[0]}")" "$(basename "${LOOPS[1]}")" <<'PY' || fail "btrfs raid0 accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); members = sorted(sys.argv[2:4]); r = d["results"]; io = r["device_io"]
assert io["source"] == "diskstats", io
names = [x["name"] for x in io["devices"]]
assert names == members, (names, members)
delivered = r["bytes"]
assert delivered == 64 * 1048576, delivered
for x in io["devices"]:
    assert x["bytes_read"] >= 0.3 * delivered, f"{x['name']} read {x['bytes_read']} of {delivered}: not split"
assert io["bytes_read"] == sum(x["bytes_read"] for x in io["devices"]), "members summed"
assert io["reads"] == sum(x["reads"] for x in io["devices"]), "requests summed"
assert io["bytes_read"] >= 0.9 * delivered, (io["bytes_read"], delivered)
print("ok: btrfs raid0 members " + ", ".join(f"{x['name']} {x['bytes_read']} B" for x in io["devices"]) +
      f"; total {io['bytes_read']} B for {delivered} B delivered (direct={d['target']['direct']})")
PY
echo PASS
