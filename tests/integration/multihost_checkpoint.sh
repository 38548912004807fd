#!/bin/bash
# `ioprobe checkpoint` across processes and hosts (MPI). Checks the exact accounting of the merge
# (every rank's shard written once with a job-wide rank number: shard count = ranks of the job;
# the per-rank and per-host bytes add up to the total; duration = the slowest rank's time to
# durable; throughput = total bytes / that duration; the raw baseline merged over every process),
# the restore (every shard verified; with a shared --dir each read on the other host), and that a
# failing host (--dir unusable there, not enough space there) ends the job on every host, named.
#  1. mpirun -np 2 on this machine (one host);
#  2. two namespaced hosts x 2 ranks (lib_hosts.sh): shared --dir, then node-local --dir, then failures.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v mpirun >/dev/null || skip "missing mpirun (tools/setup installs openmpi-bin)"
"$IOPROBE" --version >/dev/null || fail "no binary"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhckpt.XXXXXX")
trap 'rm -rf "$W"' EXIT
small=(--size 8MiB --chunk-size 1MiB --io-size 1MiB --quiet)

check() {  # check JSON PROCESSES HOSTS RANKS_PER_PROCESS BYTES_PER_PROCESS RESTORE_FROM_OTHER_HOST
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
procs, hosts, per, size, other = (int(x) for x in sys.argv[2:7])
world = procs * per
c, h, ck = d["cluster"], d["hosts"], d["checkpoint"]
s = ck["save"]
print("cluster:", {k: c.get(k) for k in ("hosts", "mpi_ranks", "ckpt_ranks", "dir_placement", "save_bytes_per_s",
                                         "restores_from_other_host")})
assert c["mpi_ranks"] == procs and c["hosts"] == hosts and c["ckpt_ranks"] == world, c
assert s["ok"], s
# Every rank once, numbered job-wide; bytes add up rank by rank and host by host.
assert [r["rank"] for r in s["ranks"]] == list(range(world)), [r["rank"] for r in s["ranks"]]
assert sum(r["logical_bytes"] for r in s["ranks"]) == s["logical_bytes"] == procs * size, s["logical_bytes"]
assert sum(x["results"]["save_bytes"] for x in h) == s["logical_bytes"] == c["save_bytes"]
assert sorted(sum((x["ckpt_ranks"] for x in h), [])) == list(range(world))
assert sorted(sum((x["mpi_ranks"] for x in h), [])) == list(range(procs))
assert all("host" in r for r in s["ranks"])
# MLPerf Storage: duration = max over ranks (time to durable), throughput = total / that duration.
dur = max(x["results"]["time_to_durable_s"] for x in h)
assert abs(s["time_to_durable_s"] - dur) < 1e-9 and abs(c["save_duration_max_s"] - dur) < 1e-9, (s["time_to_durable_s"], dur)
assert abs(s["write_bytes_per_s"] - s["logical_bytes"] / dur) < 1e-6 * s["write_bytes_per_s"]
assert abs(c["save_bytes_per_s"] - s["write_bytes_per_s"]) < 1e-6 * s["write_bytes_per_s"]
assert s["duration_max_s"] == max(r["duration_s"] for r in s["ranks"])
# The restore: every shard once, every chunk verified; read on another host where asked.
r = ck["restore"]
assert r["ok"], r
assert sorted(x["shard_rank"] for x in r["ranks"]) == list(range(world))
assert all(x["chunks_verified"] == x["chunks_total"] > 0 for x in r["ranks"])
assert r["logical_bytes"] == s["logical_bytes"]
moved = sum(x["read_on_host"] != x["written_on_host"] for x in r["ranks"])
assert moved == c["restores_from_other_host"] == (world if other else 0), (moved, c["restores_from_other_host"])
# Only the shards written by another process are read (never the reader's own, with a shared --dir).
assert all(x["path"].endswith("/__%d_0.distcp" % x["shard_rank"]) for x in r["ranks"])
print("ok:", s["logical_bytes"], "B in", world, "shards,", round(s["write_bytes_per_s"] / 1e6, 1), "MB/s")
PY
}

# 1. One host, 2 processes x 2 ranks, raw baseline on (run on both processes at once), --keep.
local_mpirun 2 "$IOPROBE" checkpoint --dir "$W/ck" --ranks 2 "${small[@]}" --restore --keep --json "$W/l.json" \
  >"$W/out" 2>"$W/err"
rc=$?
cat "$W/out" "$W/err"
[ "$rc" = 0 ] || fail "mpirun -np 2 ioprobe checkpoint: exit $rc"
[ "$(grep -c '^ioprobe .*checkpoint' "$W/out")" -le 1 ] || fail "more than one report"
grep -q "^Hosts" "$W/out" || fail "no Hosts section in the report"
check "$W/l.json" 2 1 2 $((8 << 20)) 0 || fail "one host x 2 processes: the merged result does not add up"
n=$(ls "$W/ck" | grep -c '^__[0-9]*_0\.distcp$')
[ "$n" = 4 ] || fail "$n shard files kept, not 4 (2 processes x 2 ranks)"
python3 - "$W/l.json" <<'PY' || fail "the raw baseline is not merged over both processes"
import json, sys
d = json.load(open(sys.argv[1]))
raw = d["checkpoint"]["raw_write"]
print("raw:", raw["bytes"], raw["write_bytes_per_s"])
assert raw["bytes"] == 2 * (8 << 20), raw["bytes"]
assert abs(raw["write_bytes_per_s"] - raw["bytes"] / raw["duration_max_s"]) < 1e-6 * raw["write_bytes_per_s"]
PY
rm -rf "$W/ck"

# 2. Two hosts x 2 processes.
hosts_up 2
echo "hosts up"
t0=$(date +%s)
hosts_mpirun 4 "$IOPROBE" checkpoint --dir "$W/shared-ck" "${small[@]}" --restore --keep --raw-baseline off \
  --json "$W/s.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "two hosts, shared --dir: exit $rc"
check "$W/s.json" 4 2 1 $((8 << 20)) 1 || fail "two hosts, shared --dir: the merged result does not add up"
json "$W/s.json" 'd["cluster"]["dir_placement"]' | grep -q '^shared' || fail "a shared --dir not detected as shared"
grep -q "read on a host other than the one that wrote them" "$W/out" || fail "the report does not say where shards were read"
n=$(ls "$W/shared-ck" | grep -c '^__[0-9]*_0\.distcp$')
[ "$n" = 4 ] || fail "$n shard files in the shared --dir, not 4"
# Each host's restore is accounted on its own devices over the restore window, and the job's
# figure is the hosts' sum (the namespaced hosts share this machine's devices, so each row
# counts them: on a real cluster each host has its own).
python3 - "$W/s.json" <<'PY' || fail "two hosts: the restore's device accounting per host is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
ck = d["checkpoint"]; r = ck["restore"]; rows = [h["results"] for h in d["hosts"]]
total = 0
for h, row in zip(d["hosts"], rows):
    io = row["restore_device_io"]
    assert io["source"] in ("diskstats", "none"), io
    assert row["restore_served_from"] in ("device", "page cache", "mixed", "unknown"), row
    mine = [x for x in r["ranks"] if x["read_on_host"] == h["hostname"]]
    assert mine and io["reference_bytes"] >= sum(x["stored_bytes"] for x in mine) > 0, (io["reference_bytes"], mine)
    total += io["reference_bytes"]
    print(h["hostname"], "restore device read", io["bytes_read"], "of", io["reference_bytes"], "->", row["restore_served_from"])
j = r["device_io"]
assert j["reference_bytes"] == total, (j["reference_bytes"], total)
if j["source"] != "none":
    assert j["hosts"] == 2 and j["bytes_read"] == sum(x["restore_device_io"]["bytes_read"] for x in rows), j
assert "not accounted" not in json.dumps(d), "a restore still said to be not accounted"
PY
grep -q "restore device read" "$W/out" || fail "the Hosts table has no restore device column"
echo "shared ok in $(( $(date +%s) - t0 )) s"

hosts_mpirun 4 "$IOPROBE" checkpoint --dir "$HOSTS_LOCAL/ck" "${small[@]}" --restore --keep --raw-baseline off \
  --json "$W/n.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "two hosts, node-local --dir: exit $rc"
check "$W/n.json" 4 2 1 $((8 << 20)) 0 || fail "two hosts, node-local --dir: the merged result does not add up"
json "$W/n.json" 'd["cluster"]["dir_placement"]' | grep -q '^node-local' || fail "a node-local --dir not detected"
for i in 1 2; do
  n=$(on_host $i ls "$HOSTS_LOCAL/ck" | grep -c '^__[0-9]*_0\.distcp$')
  [ "$n" = 2 ] || fail "host h$i holds $n shards of the node-local checkpoint, not 2"
done

# Failures on h2 only: --dir is a file there; too little space there. The job ends on every host,
# naming h2, without waiting for a timeout.
on_host 2 sh -c "touch '$HOSTS_LOCAL/notadir'"
on_host 1 mkdir -p "$HOSTS_LOCAL/small"
on_host 2 sh -c "mkdir -p '$HOSTS_LOCAL/small' && mount -t tmpfs -o size=2M ioprobe-small '$HOSTS_LOCAL/small'" ||
  fail "cannot mount a small tmpfs on h2"
for bad in notadir small; do
  job_must_fail "$W/out" 30 "--dir $bad failing on h2" \
    hosts_mpirun 4 "$IOPROBE" checkpoint --dir "$HOSTS_LOCAL/$bad" "${small[@]}" --raw-baseline off
  grep -q "host h2 (rank 2)" "$W/out" || fail "--dir $bad: the failing host and rank (h2, rank 2) are not named"
  grep -q "host h1" "$W/out" && fail "--dir $bad: h1 is named as failing too"
done
grep -q "not enough space" "$W/out" || fail "the lack of space on h2 is not said"
# What the failing jobs made on h1 is gone again: "notadir" above, and below a --dir whose parent
# is a file on h2 only (h2 fails making it). Which of h1's two processes made the directory was a
# race before it was made in turn (rank 0 first): when rank 1 made it, its rmdir could come before
# rank 0 removed its placement marker from it, and the empty directory stayed. A few runs, each
# with fresh directories.
on_host 1 test -e "$HOSTS_LOCAL/notadir" && fail "the failed job left the --dir it made on h1 ($HOSTS_LOCAL/notadir)"
for i in 1 2 3 4; do
  on_host 2 sh -c "touch '$HOSTS_LOCAL/made$i'"
  job_must_fail "$W/out" 30 "--dir under a file on h2 (run $i)" \
    hosts_mpirun 4 "$IOPROBE" checkpoint --dir "$HOSTS_LOCAL/made$i/ck" "${small[@]}" --raw-baseline off
  grep -q "host h2 (rank 2)" "$W/out" || fail "--dir under a file on h2: h2 (rank 2) is not named"
  on_host 1 test -e "$HOSTS_LOCAL/made$i" && fail "run $i: the failed job left the directories it made on h1 ($(on_host 1 find "$HOSTS_LOCAL/made$i"))"
done
echo "ok: checkpoint on 1 host x 2 processes and 2 hosts x 2 processes (shared and node-local), failures named"
