#!/bin/bash
# Device-level accounting (results.device_io, results.epochs) on devices the test makes:
#  ext4 on a loop device: a cold O_DIRECT run reads from the loop device at least the bytes it
#    delivered (at most the bytes transferred, O_DIRECT padding included, plus metadata); a warm
#    buffered run's second epoch reads almost nothing from it (served from the page cache).
#  tmpfs: source "none", "no block device: RAM (tmpfs)".
# A loop device over a file counts its own requests in /proc/diskstats, whatever the host's page
# cache of the backing file does: those are the counters checked; the label of the cold run follows
# the device under the backing file (device_io.backing; run_loop_backing.sh checks both labels).
. "$(dirname "$0")/target_common.bash"
need_root "losetup and mount"
need_cmd losetup mkfs.ext4
IMG=$WORK/ext4.img && MNT=$WORK/mnt && mkdir -p "$MNT"
truncate -s 128M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
on_exit "losetup -d '$LOOP'"
mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
mount "$LOOP" "$MNT" || skip "cannot mount ext4 from $LOOP"
on_exit "umount -l '$MNT'"
common=(--quiet --dir "$MNT/ds" --files 48 --file-size 1MiB --file-size-dist fixed --workers 2 --batch-size 8
        --gpu-samples-per-s 1000000)
"$IOPROBE" gen "${common[@]}" >/dev/null || fail "gen on $MNT"
sync

"$IOPROBE" run "${common[@]}" --cache cold --json "$WORK/cold.json" >"$WORK/cold.txt" 2>&1 \
  || fail "cold run exited $?: $(cat "$WORK/cold.txt")"
python3 - "$WORK/cold.json" "$(basename "$LOOP")" <<'PY' || fail "cold O_DIRECT device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); loop = sys.argv[2]; r = d["results"]; io = r["device_io"]
assert d["target"]["direct"] is True, d["target"]["cache_detail"]
assert io["source"] == "diskstats", io
assert [x["name"] for x in io["devices"]] == [loop], io["devices"]
delivered, moved = r["bytes"], r["io_bytes"]
assert delivered == 48 * 1048576, delivered
# At least every delivered byte came from the device; at most what the reads moved plus 2 MiB of
# metadata (inodes, extent blocks) and the 0.5 s of others' traffic measured before.
slack = 2 * 1048576 + io["idle_bytes_per_s_before"] * io["interval_s"]
assert delivered <= io["bytes_read"] <= moved + slack, (delivered, io["bytes_read"], moved)
# The loop device read every byte; without direct I/O it read its backing file through the page
# cache (gen's writes left the file there), so the device under the file says where they came from.
b = io.get("backing")
assert b and b["loop"] == loop and b["device"]["name"] == d["target"]["backing_device"], (b, d["target"])
assert d["target"]["loop_direct_io"] == b["direct_io"], (d["target"]["loop_direct_io"], b)
want = "device"
if b["direct_io"] is not True and b["device"]["bytes_read"] <= 0.1 * delivered:
    want = "page cache of the loop device's backing file"
assert io["read_ratio"] >= 1.0 and io["bytes_source"] == want, (want, io)
assert io["idle_window_s"] > 0.4, io
assert d["ingest"]["bytes_source"] == want, d["ingest"].get("bytes_source")
e = r["epochs"]
assert len(e) == 1 and e[0]["bytes"] == delivered and e[0]["samples"] == 48, e
assert e[0]["device_io"]["bytes_read"] >= delivered, e[0]["device_io"]
assert e[0]["residency"] is None, e[0]
assert not any("another cache" in w for w in d.get("warnings", [])), d["warnings"]
print(f"ok: cold O_DIRECT on {loop}: delivered {delivered} B, device read {io['bytes_read']} B "
      f"({io['read_ratio']:.3f} x), {io['reads']} requests; idle before {io['idle_bytes_per_s_before']:.0f} B/s")
PY
grep -Eq "device I/O .*$(basename "$LOOP"): .* read \(1\.0[0-9] x the .* delivered; bytes from: (device|page cache of the loop device's backing file)\).*; under $(basename "$LOOP"): " "$WORK/cold.txt" \
  || fail "text lacks the device I/O line: $(grep -A2 'device I/O' "$WORK/cold.txt")"

"$IOPROBE" run "${common[@]}" --cache warm --direct off --epochs 2 --json "$WORK/warm.json" >"$WORK/warm.txt" 2>&1 \
  || fail "warm run exited $?: $(cat "$WORK/warm.txt")"
python3 - "$WORK/warm.json" <<'PY' || fail "warm buffered device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); r = d["results"]; e = r["epochs"]
assert len(e) == 2, e
assert all(x["bytes"] == 48 * 1048576 for x in e), [x["bytes"] for x in e]
second = e[1]["device_io"]
assert second["source"] == "diskstats", second
# The first epoch read everything into the page cache (or found it there); the second reads
# almost nothing from the device: under 2% of what it delivered.
assert second["bytes_read"] < 0.02 * e[1]["bytes"], second
assert second["bytes_source"] == "page cache", second
assert e[1]["residency"] >= 0.95, e[1]
assert r["device_io"]["bytes_read"] == sum(x["device_io"]["bytes_read"] for x in e), "epochs add up to the run"
print(f"ok: warm buffered: epoch 1 device read {e[0]['device_io']['bytes_read']} B, epoch 2 {second['bytes_read']} B "
      f"of {e[1]['bytes']} B delivered (from the {second['bytes_source']})")
PY
grep -q "epoch 2 .*from page cache" "$WORK/warm.txt" || fail "text lacks epoch 2 from page cache: $(grep epoch "$WORK/warm.txt")"

# tmpfs: nothing to count.
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs (loop device part passed)"
SHM=$(mktemp -d /dev/shm/ioprobe-devio.XXXXXX) && on_exit "rm -rf '$SHM'"
"$IOPROBE" run --quiet --dir "$SHM/ds" --files 16 --file-size 256KiB --file-size-dist fixed --workers 2 \
  --json "$SHM/t.json" >"$SHM/t.txt" 2>&1 || fail "tmpfs run exited $?: $(cat "$SHM/t.txt")"
python3 - "$SHM/t.json" <<'PY' || fail "tmpfs device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); io = d["results"]["device_io"]
assert io["source"] == "none" and io["reason"] == "no block device: RAM (tmpfs)", io
assert io["devices"] == [] and io["read_ratio"] is None and io["bytes_source"] == "RAM (tmpfs)", io  # one vocabulary with the ingest section
assert d["ingest"]["bytes_source"] == "RAM (tmpfs)", d["ingest"]["bytes_source"]  # the verdict says where the bytes came from
print("ok: tmpfs:", io["reason"])
PY
grep -q "device I/O .*not measured: no block device: RAM (tmpfs)" "$SHM/t.txt" || fail "tmpfs text: $(grep 'device I/O' "$SHM/t.txt")"
echo PASS
