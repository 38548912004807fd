#!/bin/bash
# Where a cold run's bytes came from on ext4 over a loop device whose file lies on this host's disk:
#  losetup's default (no direct I/O): the loop device reads its file through the page cache. With
#    the file's pages resident, the loop device reads every byte it delivers while the disk under
#    the file reads nothing: the label is "page cache of the loop device's backing file", never
#    "device"; target.backing_device and target.loop_direct_io name the chain.
#  --direct-io=on: the loop device reads its file with O_DIRECT, the label is "device".
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.ext4
DISK=$(python3 -c 'import os,sys; s=os.stat(sys.argv[1]); print(os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(s.st_dev)}:{os.minor(s.st_dev)}")))' "$WORK" 2>/dev/null)
[ -n "$DISK" ] && [ -e "/sys/class/block/$DISK" ] || skip "$WORK is not on a block device"
IMG=$WORK/ext4.img && MNT=$WORK/mnt && mkdir -p "$MNT"
truncate -s 128M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
on_exit "losetup -d '$LOOP'"
L=$(basename "$LOOP")
[ "$(cat "/sys/block/$L/loop/dio" 2>/dev/null)" = 0 ] || skip "$L does not report loop/dio 0 (kernel before 4.4?)"
mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
mount "$LOOP" "$MNT" || skip "cannot mount ext4 from $LOOP"
on_exit "umount -l '$MNT'"
common=(--quiet --dir "$MNT/ds" --files 48 --file-size 1MiB --file-size-dist fixed --workers 2 --batch-size 8
        --gpu-samples-per-s 1000000)
"$IOPROBE" gen "${common[@]}" >/dev/null || fail "gen on $MNT"
sync
cat "$IMG" > /dev/null  # the backing file's pages resident: the disk under it has nothing to read

"$IOPROBE" run "${common[@]}" --cache cold --json "$WORK/cold.json" >"$WORK/cold.txt" 2>&1 \
  || fail "cold run exited $?: $(cat "$WORK/cold.txt")"
python3 - "$WORK/cold.json" "$L" "$DISK" <<'PY' || fail "cold run over a buffered loop device labelled wrong"
import json, sys
d = json.load(open(sys.argv[1])); loop, disk = sys.argv[2], sys.argv[3]
t, io = d["target"], d["results"]["device_io"]
assert t["device"] == loop and t["backing_device"] == disk and t["loop_direct_io"] is False, t
assert t["direct"] is True, t["cache_detail"]
delivered = d["results"]["bytes"]
assert io["bytes_read"] >= delivered, io  # the loop device read every byte
b = io["backing"]
assert b["loop"] == loop and b["direct_io"] is False and b["device"]["name"] == disk, b
assert b["device"]["bytes_read"] <= 0.1 * delivered, b  # its file's page cache served them
label = "page cache of the loop device's backing file"
assert io["bytes_source"] == label and d["ingest"]["bytes_source"] == label, (io["bytes_source"], d["ingest"]["bytes_source"])
assert all(e["device_io"]["bytes_source"] == label for e in d["results"]["epochs"]), d["results"]["epochs"]
assert any(f"--direct-io=on /dev/{loop}" in w for w in d["warnings"]), d["warnings"]
print(f"ok: {loop} read {io['bytes_read']} B for {delivered} B delivered, {disk} under its file read "
      f"{b['device']['bytes_read']} B: {label}")
PY
grep -q "bytes from: page cache of the loop device's backing file" "$WORK/cold.txt" \
  || fail "text: $(grep -E 'device I/O|AU' "$WORK/cold.txt")"
grep -q "under $L: $DISK read .* for its backing file $IMG (loop direct I/O off" "$WORK/cold.txt" \
  || fail "text lacks the backing device: $(grep 'device I/O' "$WORK/cold.txt")"
grep -q "bytes from: device" "$WORK/cold.txt" && fail "text still says 'bytes from: device': $(grep 'bytes from' "$WORK/cold.txt")"

# The same loop device with direct I/O: its reads of the file go to the disk.
losetup --direct-io=on "$LOOP" 2>/dev/null || { echo "PASS (direct I/O part skipped: losetup --direct-io=on refused)"; exit 0; }
[ "$(cat "/sys/block/$L/loop/dio")" = 1 ] || { echo "PASS (direct I/O part skipped: loop/dio stayed 0)"; exit 0; }
"$IOPROBE" run "${common[@]}" --cache cold --json "$WORK/dio.json" >"$WORK/dio.txt" 2>&1 \
  || fail "cold run with loop direct I/O exited $?: $(cat "$WORK/dio.txt")"
python3 - "$WORK/dio.json" <<'PY' || fail "cold run over a loop device with direct I/O labelled wrong"
import json, sys
d = json.load(open(sys.argv[1])); io = d["results"]["device_io"]
assert d["target"]["loop_direct_io"] is True and io["backing"]["direct_io"] is True, (d["target"], io["backing"])
assert io["bytes_source"] == "device" and d["ingest"]["bytes_source"] == "device", io
print(f"ok: with loop direct I/O: {io['backing']['device']['name']} read {io['backing']['device']['bytes_read']} B: device")
PY
grep -q "loop direct I/O on" "$WORK/dio.txt" || fail "text: $(grep 'device I/O' "$WORK/dio.txt")"
echo PASS
