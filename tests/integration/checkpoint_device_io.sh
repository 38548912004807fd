#!/bin/bash
# The restore's device accounting (checkpoint.restore.device_io, restore.served_from) on ext4 over
# a loop device the test makes:
#  cold (the default: each shard's cached pages dropped, O_DIRECT reads): the loop device reads at
#    least the shard files' bytes (at most those plus 2 MiB of metadata and the idle traffic
#    measured before), labelled "device";
#  warm (--restore-cache warm after a buffered save, --direct false): the save left the shards in
#    the page cache, the devices read almost nothing (under 10% of the shard bytes), labelled
#    "page cache" (a restore served from a cache), without a cold-restore warning.
. "$(dirname "$0")/target_common.bash"
make_ext4_loop 256M
common=(--dir "$MNT/ck" --size 48MiB --ranks 2 --chunk-size 4MiB --io-size 1MiB --raw-baseline off --restore --quiet)

"$IOPROBE" checkpoint "${common[@]}" --json "$WORK/cold.json" >"$WORK/cold.txt" 2>&1 \
  || fail "cold restore exited $?: $(cat "$WORK/cold.txt")"
python3 - "$WORK/cold.json" "$(basename "$LOOP")" <<'PY' || fail "cold restore device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); loop = sys.argv[2]
ck = d["checkpoint"]; r = ck["restore"]; io = r["device_io"]
assert r["ok"] and r["cache"].startswith("cold"), r["cache"]
assert io["source"] == "diskstats", io
assert [x["name"] for x in io["devices"]] == [loop], io["devices"]
shard = io["reference_bytes"]
assert shard == ck["save"]["bytes_on_disk"] >= 48 * 2**20, (shard, ck["save"]["bytes_on_disk"])
slack = 2 * 2**20 + io["idle_bytes_per_s_before"] * io["interval_s"]
assert shard <= io["bytes_read"] <= shard + slack, (shard, io["bytes_read"], slack)
# Without loop direct I/O the loop device reads its backing file through the page cache, which the
# save filled: then the device under the file read (nearly) nothing, and the label says so.
b = io.get("backing") or {}
want = "device"
if b and b["direct_io"] is not True and b["device"]["bytes_read"] <= 0.1 * shard:
    want = "page cache of the loop device's backing file"
assert io["read_ratio"] >= 1.0 and io["bytes_source"] == want and r["served_from"] == want, (want, io, r["served_from"])
assert not any("another cache" in w for w in d.get("warnings", [])), d["warnings"]
print(f"ok: cold restore on {loop}: {shard} B of shards, device read {io['bytes_read']} B ({io['read_ratio']:.3f} x)")
PY
grep -q "^restore, cold" "$WORK/cold.txt" || fail "text does not call the restore cold: $(grep restore "$WORK/cold.txt")"
grep -A12 "^restore, cold" "$WORK/cold.txt" | grep -Eq "device I/O .*bytes from: (device|page cache of the loop device's backing file)" \
  || fail "text lacks the restore's device line: $(grep -A12 '^restore' "$WORK/cold.txt")"

rm -rf "$MNT/ck"
"$IOPROBE" checkpoint "${common[@]}" --direct false --restore-cache warm --json "$WORK/warm.json" >"$WORK/warm.txt" 2>&1 \
  || fail "warm restore exited $?: $(cat "$WORK/warm.txt")"
python3 - "$WORK/warm.json" <<'PY' || fail "warm restore device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["checkpoint"]["restore"]; io = r["device_io"]
assert r["ok"] and r["cache"].startswith("warm"), r["cache"]
assert r["direct"] is False, r
assert io["source"] == "diskstats", io
shard = io["reference_bytes"]
assert io["bytes_read"] < 0.1 * shard, (io["bytes_read"], shard)
assert r["served_from"] == "page cache" and io["bytes_source"] == "page cache", (r["served_from"], io)
assert not any("was cold but" in w for w in d.get("warnings", [])), d["warnings"]
print(f"ok: warm restore: {shard} B of shards, device read {io['bytes_read']} B: served from the {r['served_from']}")
PY
grep -A12 "^restore, warm" "$WORK/warm.txt" | grep -q "device I/O .*bytes from: page cache" \
  || fail "text does not label the warm restore cache-served: $(grep -A12 '^restore' "$WORK/warm.txt")"
echo "ok: restore device accounting, cold from the device and warm from the page cache"
