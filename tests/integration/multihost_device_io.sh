#!/bin/bash
# Device accounting across hosts on real block devices: two namespaced hosts (lib_hosts.sh), each
# with its own ext4 on its own loop device mounted at the same node-local path inside its mount
# namespace (so each host's devices are its own: /proc/diskstats is one for the machine, the
# devices differ), 2 MPI ranks per host. Checks:
#  1. `raw --direct 1` (cold) across the hosts: each host's row names its own loop device and the
#     device read at least the bytes the host delivered (at most those plus 2 MiB of metadata and
#     the idle traffic measured before: the two processes of a host are counted once, not twice);
#     the cluster's results.device_io is the sum of the host rows (bytes, devices one per host,
#     named HOST:NAME);
#     no host is flagged; the text has a device line per host;
#  2. `checkpoint --restore` across the hosts with a node-local --dir: each host's save wrote on
#     its own device at least the bytes its durable shard files hold, its cold restore read at
#     least them, and the job's save and restore device_io are the sums of the host rows.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null || skip "missing losetup or mkfs.ext4"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhdev.XXXXXX")
hosts_up 2
LOOPS=()
# After the hosts (and their mount namespaces, which hold the mounts) are gone: the loop devices.
trap '_hosts_down; for L in "${LOOPS[@]}"; do losetup -d "$L" 2>/dev/null; done; rm -rf "$W"' EXIT
for i in 1 2; do
  truncate -s 192M "$W/h$i.img"
  L=$(losetup -f --show "$W/h$i.img" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
  LOOPS+=("$L")
  mkfs.ext4 -q -F "$L" || fail "mkfs.ext4 $L"
  on_host $i sh -c "mkdir -p '$HOSTS_LOCAL/ext4' && mount '$L' '$HOSTS_LOCAL/ext4'" || skip "cannot mount ext4 from $L in h$i"
done
DEV1=$(basename "${LOOPS[0]}") DEV2=$(basename "${LOOPS[1]}")
echo "hosts up: h1 on $DEV1, h2 on $DEV2"

# 1. Cold raw read: each process lays out its own 16 MiB file on its host's ext4, then reads it with O_DIRECT.
hosts_mpirun 4 "$IOPROBE" raw --filename "$HOSTS_LOCAL/ext4/t.bin" --size 16M --bs 128k --iodepth 4 --rw read \
  --direct 1 --json "$W/raw.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "cold raw read across hosts: exit $rc"
python3 - "$W/raw.json" "$DEV1" "$DEV2" <<'PY' || fail "cold raw read: per-host device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); want = {"h1": sys.argv[2], "h2": sys.argv[3]}
MiB = 2**20
total = 0
for h in d["hosts"]:
    io, got = h["device_io"], h["results"]["bytes"]
    # Two processes x 16 MiB, one pass (raw may issue one request more than the pass: seen 129 of 128).
    assert 2 * 16 * MiB <= got <= 2 * 16 * MiB + 2 * 4 * 128 * 1024, (h["hostname"], got)
    assert io["source"] == "diskstats", io
    assert [x["name"] for x in io["devices"]] == [want[h["hostname"]]], (h["hostname"], io["devices"])
    slack = 2 * MiB + io["idle_bytes_per_s_before"] * io["interval_s"]
    # O_DIRECT: every delivered byte came from the device; the host's two processes count once.
    assert got <= io["bytes_read"] <= got + slack, (h["hostname"], got, io["bytes_read"], slack)
    b = io.get("backing") or {}  # a buffered loop device served by its file's page cache says so
    label = ("page cache of the loop device's backing file"
             if b and b["direct_io"] is not True and b["device"]["bytes_read"] <= 0.1 * got else "device")
    assert io["reference_bytes"] == got and io["bytes_source"] == label, (label, io)
    assert not io["cold_read_nothing"] and not io["cold_read_short"], io
    print(f"ok: {h['hostname']} on {want[h['hostname']]} ({label}): delivered {got} B, device read {io['bytes_read']} B "
          f"({io['read_ratio']:.4f} x)")
    total += io["bytes_read"]
c = d["raw"]["results"]["device_io"]
assert c["bytes_read"] == total, (c["bytes_read"], total)
# The cluster's devices are named by host (HOST:NAME): one host's device is never added to another's.
assert c["hosts"] == 2 and sorted(x["name"] for x in c["devices"]) == sorted(f"{h}:{n}" for h, n in want.items()), c
for x in c["devices"]:
    row = [h for h in d["hosts"] if f"{h['hostname']}:{want[h['hostname']]}" == x["name"]][0]
    assert x["bytes_read"] == row["device_io"]["bytes_read"], (x, row["device_io"])
assert c["reference_bytes"] == d["raw"]["results"]["bytes"] == sum(h["results"]["bytes"] for h in d["hosts"]), c
assert "each host counted once" in c["scope"], c
# The loop devices read their image files through the page cache (loop direct I/O off): the disk under
# them reads little, which the backing-file warning says; no other short-read warning.
assert not any(("read nothing" in w or "read only" in w) and "backing file" not in w
               for w in d.get("warnings", [])), d["warnings"]
print(f"ok: cluster device read {c['bytes_read']} B = the host rows' sum, for {c['reference_bytes']} B delivered")
PY
for h in h1 h2; do
  grep -Eq "^  $h +device I/O loop[0-9]+: .* read \(1\.[0-9]+ x the " "$W/out" || fail "no device line for $h in the Hosts text"
done
grep -q "COLD RUN" "$W/out" && fail "a host flagged on a cold read its devices served"
grep -q "host(s)' devices added" "$W/out" || fail "the cluster's device line does not say it adds the hosts"
echo "raw ok"

# 2. Checkpoint save and cold restore across the hosts, --dir node-local on each host's ext4.
hosts_mpirun 4 "$IOPROBE" checkpoint --dir "$HOSTS_LOCAL/ext4/ck" --size 8MiB --chunk-size 1MiB --io-size 1MiB \
  --restore --raw-baseline off --quiet --json "$W/ck.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "checkpoint across hosts: exit $rc"
python3 - "$W/ck.json" "$DEV1" "$DEV2" <<'PY' || fail "checkpoint across hosts: per-host device accounting wrong"
import json, sys
d = json.load(open(sys.argv[1])); want = {"h1": sys.argv[2], "h2": sys.argv[3]}
ck = d["checkpoint"]; s = ck["save"]; r = ck["restore"]
assert d["cluster"]["dir_placement"].startswith("node-local"), d["cluster"]["dir_placement"]
assert s["durable"] and r["cache"].startswith("cold"), (s["durable"], r["cache"])
wsum = rsum = disk = 0
for h in d["hosts"]:
    res = h["results"]; sv, rv = res["save_device_io"], res["restore_device_io"]
    for io in (sv, rv):
        assert io["source"] == "diskstats" and [x["name"] for x in io["devices"]] == [want[h["hostname"]]], io
    on_disk = sv["reference_bytes"]
    assert on_disk >= 2 * 8 * 2**20, (h["hostname"], on_disk)     # two ranks' shards of >= 8 MiB
    assert sv["bytes_written"] >= on_disk, (h["hostname"], sv["bytes_written"], on_disk)   # durable: on the device
    assert rv["bytes_read"] >= rv["reference_bytes"] == on_disk, (h["hostname"], rv["bytes_read"], rv["reference_bytes"])
    print(f"ok: {h['hostname']}: {on_disk} B of shards, device wrote {sv['bytes_written']} B, read {rv['bytes_read']} B")
    wsum += sv["bytes_written"]; rsum += rv["bytes_read"]; disk += on_disk
assert s["device_io"]["bytes_written"] == wsum and s["device_io"]["hosts"] == 2, (s["device_io"], wsum)
assert s["device_io"]["reference_bytes"] == s["bytes_on_disk"] == disk, (s["device_io"]["reference_bytes"], disk)
assert "every host" in s["device_io"]["scope"], s["device_io"]["scope"]
assert r["device_io"]["bytes_read"] == rsum and r["device_io"]["hosts"] == 2, (r["device_io"], rsum)
for io in (s["device_io"], r["device_io"]):  # the job's devices: each host's own, named by host
    assert sorted(x["name"] for x in io["devices"]) == sorted(f"{h}:{n}" for h, n in want.items()), io
print(f"ok: job: device wrote {wsum} B for {disk} B on disk, read {rsum} B (the host rows' sums)")
PY
for h in h1 h2; do
  grep -Eq "^  $h +save device I/O loop[0-9]+: " "$W/out" || fail "no save device line for $h in the Hosts text"
done
echo "checkpoint ok"
