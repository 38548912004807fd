#!/bin/bash
# Two real hosts on this one machine (network + mount + UTS namespaces, each with its own
# hostname, sshd and private tmpfs; lib_hosts.sh), 2 MPI ranks each, launched by mpirun's ssh
# launcher over TCP. Checks:
#  - node-local data (each host generates its own copy at the same path): placement "node-local",
#    2 hosts in the report, every file read once per epoch across the 4 ranks, host rows add up;
#  - shared data (a directory every host sees): placement "shared", generated once;
#  - a host without the data (--data missing there) ends the job on every host within seconds,
#    naming that host, with no hang.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-2hosts.XXXXXX")
hosts_up 2
echo "hosts up"
common=(--files 200 --file-size 8KiB --file-size-dist fixed --workers 2 --batch-size 8 --gpu-samples-per-s 1000000 --quiet)

check() {  # check JSON PLACEMENT FILES
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); want_place = sys.argv[2]; files = int(sys.argv[3])
c, h, r = d["cluster"], d["hosts"], d["results"]
print("cluster:", {k: c[k] for k in ("hosts", "mpi_ranks", "dataset_placement", "start_skew_s")})
print("hosts:", [(x["hostname"], x["mpi_ranks"], x["results"]["samples"]) for x in h])
assert c["hosts"] == 2 and c["mpi_ranks"] == 4, c
assert c["dataset_placement"] == want_place, c["dataset_placement"]
assert sorted(x["hostname"] for x in h) == ["h1", "h2"], h
assert r["samples"] == files and r["errors"] == 0, (r["samples"], r["errors"])
assert r["file_latency_us"]["count"] == files
assert sum(x["results"]["samples"] for x in h) == files
assert sum(x["results"]["bytes"] for x in h) == r["bytes"] == files * 8192
# RAM is counted once per host, not per rank
assert c["memory_bytes"] == sum(x["memory_bytes"] for x in h)
PY
}

t0=$(date +%s)
hosts_mpirun 4 "$IOPROBE" --dir "$HOSTS_LOCAL/ds" "${common[@]}" --json "$W/local.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "node-local run: exit $rc"
check "$W/local.json" node-local 200 || fail "node-local run: the merged result does not add up"
[ -s "$W/local.json" ] || fail "no JSON"
# Each host generated its own copy: both private tmpfs hold the files.
for i in 1 2; do
  n=$(on_host $i find "$HOSTS_LOCAL/ds" -type f ! -name '.ioprobe-*' | wc -l)
  [ "$n" = 200 ] || fail "host h$i holds $n files of the node-local dataset, not 200"
done
echo "node-local ok in $(( $(date +%s) - t0 )) s"

hosts_mpirun 4 "$IOPROBE" --dir "$W/shared-ds" "${common[@]}" --json "$W/shared.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "shared run: exit $rc"
check "$W/shared.json" shared 200 || fail "shared run: the merged result does not add up"

# Only h1 has the data: the job must end on every host, naming h2, without waiting for a timeout.
on_host 1 sh -c "mkdir -p '$HOSTS_LOCAL/mine' && for i in 1 2 3 4; do echo x > '$HOSTS_LOCAL/mine/f'\$i; done"
job_must_fail "$W/out" 30 "a host without the data" hosts_mpirun 4 "$IOPROBE" --data "$HOSTS_LOCAL/mine" --workers 1 --quiet
grep -q "host h2" "$W/out" || fail "the failing host (h2) is not named"
echo "ok: two hosts (node-local and shared data), and a failing host named in $JOB_TOOK s"
