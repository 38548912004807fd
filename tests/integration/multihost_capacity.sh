#!/bin/bash
# `ioprobe capacity` across two real hosts on this one machine (lib_hosts.sh: network + mount +
# UTS namespaces, mpirun's ssh launcher over TCP), one process per host, on a small node-local
# dataset. Each GPU rank asks for 1000 samples/s (a 0.128 s step of 128 files of 4 KiB) from
# its own two workers; the two "hosts" share this machine's 2 CPUs, so the loaders' threads fall
# behind at a few accelerators: the search fails
# by 16 at the latest, client- or storage-bound, after several points. Checks:
#  - one report (rank 0's) with its hosts line, and in the HTML each point's host rows; the search finished (N fed, N+1 not, both
#    measured; client-bound names a host);
#  - every point ran on both processes (each point's host rows list both MPI ranks: merging
#    refuses parts of different points) and each point's per-host split sums to its N, evenly
#    over the hosts (the two shares differ by at most one);
#  - each point and host row carries its device accounting (tmpfs: "no block device: RAM");
#  - failing hosts end the search on every host, named: a --data directory present on h1 only
#    (the preflight), and the process on h2 stopped (SIGSTOP) during the search, found by the
#    watchdog (--mpi-timeout 3s) and named with its host.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhcap.XXXXXX")
HOSTS_SLOTS=1 hosts_up 2
echo "hosts up"
# OpenMPI's waits spin by default: a process whose share is 0 would take a whole CPU from the
# others on this shared machine.
MPI=(--mca mpi_yield_when_idle 1)
ds=(--files 3000 --file-size 4KiB --file-size-dist fixed --dirs 1 --dir "$HOSTS_LOCAL/ds" --batch-size 128 --workers 2
    --cache warm --gpu-samples-per-s 150 --cpu-per-sample 2000)

HOSTS_TIMEOUT=150 hosts_mpirun 2 "${MPI[@]}" "$IOPROBE" capacity "${ds[@]}" --point-time 2s --repeats 1 \
  --max-gpus 32 --budget 100s --json "$W/cap.json" --html "$W/cap.html" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "mpirun -np 2 ioprobe capacity: exit $rc"
[ "$(grep -c '^ioprobe .* capacity' "$W/out")" = 1 ] || fail "expected exactly one report (rank 0's)"
grep -q "^  hosts      2 (h1, h2)" "$W/out" || fail "the report does not show the hosts"
[ "$(grep -c '<tr class="host" data-host="h1">' "$W/cap.html")" -ge 2 ] &&
  [ "$(grep -c '<tr class="host" data-host="h2">' "$W/cap.html")" -ge 2 ] || fail "the HTML lacks the points' host rows"
grep -Eq "capacity: +[0-9]+ x custom GPU \(h1 [0-9]+, h2 [0-9]+\)" "$W/out" || fail "no per-host split in the progress lines"
if [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null; then
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$W/cap.json" || fail "cap.json does not match reports/result.schema.json"
fi
python3 - "$W/cap.json" <<'PY' || fail "the capacity search across hosts does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
c, cl = d["capacity"], d["cluster"]
assert cl["hosts"] == 2 and cl["mpi_ranks"] == 2 and sorted(cl["hostnames"]) == ["h1", "h2"], cl
assert c["stop_reason"] == "completed", c["stop_reason"]
# Each sample costs 2 ms of real CPU (--cpu-per-sample 2000) on 2 workers per host: the loader's
# CPU work, not the tmpfs, limits the count: 2 CPUs give at most 1,000 samples/s, 6 GPUs; the
# limit of 32 leaves room for a machine with 8 CPUs.
assert c["bound"] in ("workers", "client-cpu"), (c["bound"], c["answer"])
assert c["boundary_measured"], c["answer"]
n = c["gpus_fed"]
assert 1 <= n < 32, c["answer"]
pts = {p["gpus"]: p for p in c["points"]}
assert n + 1 in pts, sorted(pts)
for g, p in pts.items():
    hosts = p["hosts"]
    assert sorted(h["hostname"] for h in hosts) == ["h1", "h2"], (g, hosts)
    assert sorted(r for h in hosts for r in h["mpi_ranks"]) == [0, 1], (g, hosts)  # both ran this point
    shares = [h["gpus"] for h in hosts]
    assert sum(shares) == g and max(shares) - min(shares) <= 1, (g, shares)
    assert sum(h["delivered_bytes"] for h in hosts) == p["delivered_bytes"] > 0, (g, hosts)
    assert p["device_io"]["source"] == "none" and "RAM" in p["device_io"]["reason"], p["device_io"]
    assert all("device_io" in h for h in hosts), hosts
if c["bound"] == "workers":
    assert pts[n + 1]["workers_bound"] and "per-sample CPU work" in pts[n + 1]["note"], pts[n + 1]
    assert c["answer"].startswith("worker-bound at %d: more num_workers" % n), c["answer"]
if c["bound"] == "client-cpu":
    assert pts[n + 1]["client_host"] in ("h1", "h2"), pts[n + 1]
    assert "client-bound on host " + pts[n + 1]["client_host"] in c["answer"], c["answer"]
print("capacity across 2 hosts:", c["answer"])
print("points:", [(g, [h["gpus"] for h in pts[g]["hosts"]], round(pts[g]["au"], 3)) for g in sorted(pts)])
PY
echo "search ok"

# 2. A --data directory that exists on h1 only: the preflight fails on h2, named.
on_host 1 mkdir -p "$HOSTS_LOCAL/mine"
on_host 1 sh -c "for i in 1 2 3 4; do head -c 4096 /dev/urandom > '$HOSTS_LOCAL/mine/f\$i'; done"
job_must_fail "$W/out" 30 "a host without the data" \
  hosts_mpirun 2 "${MPI[@]}" "$IOPROBE" capacity --data "$HOSTS_LOCAL/mine" --gpu-samples-per-s 10 --batch-size 1 \
  --point-time 2s --repeats 1 --budget 30s   # batch 1: 0.1 s steps, so the budget passes its check before the data's
grep -q "host h2 (rank 1)" "$W/out" || fail "the failing host and rank (h2, rank 1) are not named"
grep -q "host h1 (rank" "$W/out" && fail "h1 is named as failing, but its data exists"
echo "missing data named in $JOB_TOOK s"

# 3. The process on h2 stops (SIGSTOP) during the search: the watchdog ends the job on every host
# and names the rank that did not arrive and its host.
rank1_pid() {
  local p
  for p in $(pgrep -x ioprobe); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" &&
      grep -q "stopjob" "/proc/$p/cmdline" 2>/dev/null && { echo "$p"; return 0; }
  done
  return 1
}
stop_h2_midway() {
  "$@" &
  local m=$! t p=""
  for t in $(seq 1 300); do  # up to 30 s for the first point's line
    grep -q "capacity: .* x custom GPU" "$W/out" 2>/dev/null && p=$(rank1_pid) && break
    sleep 0.1
  done
  [ -n "$p" ] && kill -STOP "$p"
  wait "$m"
  local rc=$?
  [ -n "$p" ] && { kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; }
  [ -n "$p" ] || echo "TEST: rank 1 was never found to stop"
  return $rc
}
job_must_fail "$W/out" 45 "a host that stops answering" \
  stop_h2_midway hosts_mpirun 2 "${MPI[@]}" "$IOPROBE" capacity "${ds[@]}" --point-time 2s --repeats 2 \
  --max-gpus 16 --budget 100s --mpi-timeout 3s --json "$W/stopjob.json"
grep -q "TEST: rank 1 was never found" "$W/out" && fail "the stop case did not run (rank 1 not found)"
grep -q "did not arrive" "$W/out" || fail "the watchdog does not say which rank did not arrive"
grep -Eq "rank 1 \(host h2\)" "$W/out" || fail "the watchdog does not name rank 1 and its host h2"
[ -e "$W/stopjob.json" ] && fail "a failed search wrote a result document"
echo "ok: capacity across two hosts (same points on every rank, per-host split sums to N, device I/O per host);" \
  "failing hosts named (missing data; stopped, in $JOB_TOOK s)"
