#!/bin/bash
# `ioprobe raw` across two real hosts on this one machine (lib_hosts.sh: network + mount + UTS
# namespaces, ssh launcher over TCP), 2 MPI ranks each. Checks:
#  - one pass over node-local files: exact accounting (merged I/Os = 4 ranks x blocks per file =
#    the sum of the host rows; merged histogram count = I/Os; elapsed = the slowest host's;
#    IOPS recomputed from the merged totals), one report with a Hosts section, and the per-rank
#    files this run laid out (PATH.rank<R>) removed at the end;
#  - a --runtime random-read run on a shared directory, with files the user made beforehand: they
#    are read, not rewritten, and left in place;
#  - a host whose --filename directory does not exist ends the job on every host within seconds,
#    naming that host and its rank, and the other host's laid-out files are removed.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhraw.XXXXXX")
hosts_up 2
echo "hosts up"

# 1. One pass, node-local: each of the 4 processes lays out its own 1 MiB file and reads it once.
hosts_mpirun 4 "$IOPROBE" raw --filename "$HOSTS_LOCAL/t.bin" --size 1M --bs 4k --rw read --json "$W/pass.json" \
  >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "one-pass run: exit $rc"
[ "$(grep -c '^ioprobe raw: .* iodepth' "$W/out")" = 1 ] || fail "expected exactly one report (rank 0's)"
grep -q "^Hosts" "$W/out" || fail "no Hosts section in the report"
python3 - "$W/pass.json" <<'PY' || fail "one-pass run: the merged result does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
c, h, r = d["cluster"], d["hosts"], d["raw"]["results"]
print("cluster:", {k: c[k] for k in ("hosts", "mpi_ranks", "launcher", "start_skew_s")})
print("hosts:", [(x["hostname"], x["mpi_ranks"], x["results"]["ios"], x["files"]) for x in h])
assert c["hosts"] == 2 and c["mpi_ranks"] == 4, c
assert sorted(x["hostname"] for x in h) == ["h1", "h2"], h
assert sorted(sum((x["mpi_ranks"] for x in h), [])) == [0, 1, 2, 3]
assert r["ios"] == 4 * 256 and r["errors"] == 0, (r["ios"], r["errors"])      # 1 MiB / 4 KiB per process
assert r["bytes"] == 4 * (1 << 20)
assert r["latency_us"]["count"] == r["ios"], r["latency_us"]["count"]
assert sum(x["results"]["ios"] for x in h) == r["ios"]
assert sum(x["results"]["bytes"] for x in h) == r["bytes"]
assert sum(x["results"]["latency_us"]["count"] for x in h) == r["ios"]
assert r["elapsed_s"] == max(x["results"]["last_done_s"] for x in h)
assert abs(r["iops"] - r["ios"] / r["elapsed_s"]) < 1e-6 * r["iops"]
assert all(f.endswith(".rank%d" % k) for x in h for k, f in zip(x["mpi_ranks"], x["files"])), h
assert d["raw"]["filename"].endswith("/t.bin"), d["raw"]["filename"]
PY
for i in 1 2; do
  left=$(on_host $i sh -c "ls '$HOSTS_LOCAL' | grep -c rank")
  [ "$left" = 0 ] || fail "host h$i kept $left per-rank file(s) this run laid out"
done
echo "one pass ok"

# 2. --runtime randread on a shared directory over files the user made: read and left as they were.
mkdir -p "$W/shared"
for k in 0 1 2 3; do head -c 2097152 /dev/urandom > "$W/shared/u.bin.rank$k"; done
sums=$(cd "$W/shared" && md5sum u.bin.rank*)
hosts_mpirun 4 "$IOPROBE" raw --filename "$W/shared/u.bin" --bs 4k --rw randread --iodepth 4 --runtime 1s \
  --json "$W/rt.json" >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "runtime run: exit $rc"
[ "$(cd "$W/shared" && md5sum u.bin.rank*)" = "$sums" ] || fail "the user's files changed or went away"
python3 - "$W/rt.json" <<'PY' || fail "runtime run: the merged result does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
h, r = d["hosts"], d["raw"]["results"]
assert r["ios"] > 0 and r["latency_us"]["count"] == r["ios"]
assert sum(x["results"]["ios"] for x in h) == r["ios"]
assert 1.0 <= r["elapsed_s"] < 3.0, r["elapsed_s"]
print("runtime run:", r["ios"], "I/Os,", round(r["iops"]), "IOPS")
PY
echo "runtime ok"

# 3. The --filename directory exists on h1 only: the job ends on both hosts, naming h2.
on_host 1 mkdir -p "$HOSTS_LOCAL/sub"
job_must_fail "$W/out" 20 "a host without the directory" \
  hosts_mpirun 4 "$IOPROBE" raw --filename "$HOSTS_LOCAL/sub/t.bin" --size 1M --runtime 5s
grep -q "host h2 (rank 2)" "$W/out" || fail "the failing host and rank (h2, rank 2) are not named"
grep -q "host h1 (rank" "$W/out" && fail "h1 is named as failing, but its directory exists"
left=$(on_host 1 sh -c "ls '$HOSTS_LOCAL/sub' | wc -l")
[ "$left" = 0 ] || fail "h1 kept $left file(s) it laid out for the failed job"
echo "ok: raw across two hosts (exact merge, user files kept, failing host named in $JOB_TOOK s)"
