#!/bin/bash
# Failures of a multi-host `ioprobe run` (MPI), each with a time limit so that a hang fails the test:
#  - Ctrl-C on mpirun: every process stops and rank 0 writes the merged result, marked partial
#    ("partial": true, cluster.interrupted: true, a line in the text);
#  - a rank that stops answering (SIGSTOP) under --mpi-timeout: the watchdog ends the job and names
#    the rank that did not arrive and its host, not only the step;
#  - a rank killed (SIGKILL) mid-run: the job ends within seconds, the killed rank named;
#  - the same kill on the second of two namespaced hosts (lib_hosts.sh): that host is named.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v mpirun >/dev/null || skip "missing mpirun (tools/setup installs openmpi-bin)"
"$IOPROBE" --version >/dev/null || fail "no binary"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhfail.XXXXXX")
trap 'rm -rf "$W"' EXIT
slow=(--files 300 --file-size 8KiB --file-size-dist fixed --workers 1 --batch-size 8 --epochs 50
      --gpu-samples-per-s 50 --duration 60 --quiet)

# The pid of the ioprobe process of MPI rank $1 whose command line holds $2 (its environment says its rank).
rank_pid() {
  local p
  for p in $(pgrep -f -- "$2"); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = ioprobe ] || continue
    tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return 0; }
  done
  return 1
}

wait_rank() {  # wait_rank RANK TAG: up to 20 s for that process to run
  local t
  for t in $(seq 1 200); do rank_pid "$1" "$2" && return 0; sleep 0.1; done
  return 1
}

# 1. Ctrl-C on mpirun: a partial merged result, exit 130.
t0=$(date +%s)
local_mpirun 2 "$IOPROBE" --dir "$W/ds" "${slow[@]}" --json "$W/int.json" >"$W/int.out" 2>&1 &
mpid=$!
wait_rank 1 "$W/int.json" >/dev/null || fail "rank 1 never started"
sleep 3
# mpirun itself (a background job's shell ignores SIGINT; mpirun forwards it to every rank)
mp=$(pgrep -f "^mpirun .*$W/int.json") || fail "no mpirun to interrupt"
kill -INT $mp
wait "$mpid"
rc=$?
took=$(( $(date +%s) - t0 ))
tail -25 "$W/int.out"
[ "$took" -lt 40 ] || fail "Ctrl-C on mpirun took $took s to end a 60 s run"
# mpirun answers SIGINT by sending SIGTERM to every rank and exits 1 itself (OpenMPI 4.1): each
# ioprobe exits 143 as a single-host SIGTERM does, but mpirun's own code is what the shell sees.
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "Ctrl-C on mpirun: exit $rc"
grep -q "INTERRUPTED" "$W/int.out" || fail "the text does not say the result is interrupted"
python3 - "$W/int.json" <<'PY' || fail "no partial merged result after Ctrl-C on mpirun"
import json, sys
d = json.load(open(sys.argv[1]))
c, r = d["cluster"], d["results"]
print("partial:", d["partial"], "interrupted:", c.get("interrupted"), "samples:", r["samples"])
assert d["partial"] is True and c["interrupted"] is True, (d["partial"], c.get("interrupted"))
assert c["mpi_ranks"] == 2 and r["samples"] > 0
assert sum(x["results"]["samples"] for x in d["hosts"]) == r["samples"]
PY

# 2. A rank that stops (SIGSTOP) while the others wait for it in the DDP step exchange.
t0=$(date +%s)
HOSTS_TIMEOUT=60 local_mpirun 2 "$IOPROBE" --dir "$W/ds" "${slow[@]}" --mpi-timeout 3s --json "$W/stop.json" >"$W/stop.out" 2>&1 &
mpid=$!
wait_rank 1 "$W/stop.json" >/dev/null || fail "rank 1 never started"
sleep 3
p1=$(rank_pid 1 "$W/stop.json") || fail "rank 1 gone before it was stopped"
kill -STOP "$p1"
wait "$mpid"
rc=$?
kill -CONT "$p1" 2>/dev/null; kill -9 "$p1" 2>/dev/null
took=$(( $(date +%s) - t0 ))
cat "$W/stop.out"
[ "$rc" = 124 ] && fail "a stopped rank made the job hang (killed after 60 s)"
[ "$rc" != 0 ] || fail "a stopped rank: exit 0"
grep -q "did not arrive" "$W/stop.out" || fail "the watchdog does not say which rank did not arrive"
grep -Eq "rank 1 \(host [^)]+\): no answer" "$W/stop.out" || fail "the watchdog does not name rank 1 and its host"
[ "$took" -lt 40 ] || fail "the watchdog took $took s"

# 3. A rank killed mid-run: the job ends within seconds, naming it (mpirun's or ioprobe's line).
t0=$(date +%s)
HOSTS_TIMEOUT=60 local_mpirun 2 "$IOPROBE" --dir "$W/ds" "${slow[@]}" --json "$W/kill.json" >"$W/kill.out" 2>&1 &
mpid=$!
wait_rank 1 "$W/kill.json" >/dev/null || fail "rank 1 never started"
sleep 3
kill -9 "$(rank_pid 1 "$W/kill.json")" || fail "rank 1 gone before it was killed"
wait "$mpid"
rc=$?
took=$(( $(date +%s) - t0 ))
cat "$W/kill.out"
[ "$rc" = 124 ] && fail "a killed rank made the job hang (killed after 60 s)"
[ "$rc" != 0 ] || fail "a killed rank: exit 0"
grep -Eiq "rank 1 .*(signal 9|killed)" "$W/kill.out" || fail "the killed rank (1) is not named"
[ "$took" -lt 25 ] || fail "a killed rank took $took s to end the job"
echo "local failures ok"

# 4. Two hosts: a rank killed on h2 is named with its host.
hosts_up 2
t0=$(date +%s)
HOSTS_TIMEOUT=60 hosts_mpirun 4 "$IOPROBE" "${slow[@]}" --dir "$W/shared-ds" --json "$W/k2.json" >"$W/k2.out" 2>&1 &
mpid=$!
wait_rank 3 "$W/k2.json" >/dev/null || fail "rank 3 never started"
sleep 4
kill -9 "$(rank_pid 3 "$W/k2.json")" || fail "rank 3 gone before it was killed"
wait "$mpid"
rc=$?
took=$(( $(date +%s) - t0 ))
cat "$W/k2.out"
[ "$rc" = 124 ] && fail "a rank killed on h2 made the job hang"
[ "$rc" != 0 ] || fail "a rank killed on h2: exit 0"
grep -Eiq "rank 3 .*(node|host) h2|h2.*rank 3" "$W/k2.out" || fail "the killed rank (3) and its host (h2) are not named"
[ "$took" -lt 40 ] || fail "a rank killed on h2 took $took s to end the job"
echo "ok: Ctrl-C gives a partial merged result, a stopped rank is named by the watchdog, killed ranks end the job, named"
