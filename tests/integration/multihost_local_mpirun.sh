#!/bin/bash
# `mpirun -np 4 ioprobe` on this one machine: four processes, one per GPU rank, read one
# generated dataset as one DDP job. Checks the exact accounting of the merge: cluster samples =
# files x epochs (every file read once per epoch across the ranks), the merged latency histogram
# holds one count per sample, the host rows add up to the totals, one report is printed (rank 0),
# and the demand counts every GPU rank of the job.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v mpirun >/dev/null || skip "missing mpirun (tools/setup installs openmpi-bin)"
"$IOPROBE" --version >/dev/null || fail "no binary"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mpilocal.XXXXXX")
trap 'rm -rf "$W"' EXIT
args=(--dir "$W/ds" --files 300 --file-size 8KiB --file-size-dist fixed --workers 2 --batch-size 8 --epochs 2
      --gpu-samples-per-s 1000000 --quiet --json "$W/r.json")
local_mpirun 4 "$IOPROBE" "${args[@]}" >"$W/out" 2>"$W/err"
rc=$?
cat "$W/out" "$W/err"
[ "$rc" = 0 ] || fail "mpirun -np 4 ioprobe: exit $rc"
[ "$(grep -c '^ioprobe .* run' "$W/out")" = 1 ] || fail "expected exactly one report (rank 0's)"
grep -q "^Hosts" "$W/out" || fail "no Hosts section in the report"
grep -q "coordination cost .*\[measured\]" "$W/out" || fail "no coordination cost line in the Hosts section"
python3 - "$W/r.json" <<'PY' || fail "the merged result does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
c, h, r, i = d["cluster"], d["hosts"], d["results"], d["ingest"]
print("cluster:", {k: c[k] for k in ("hosts", "mpi_ranks", "gpu_ranks", "launcher", "dataset_placement", "start_skew_s")})
assert c["mpi_ranks"] == 4 and c["gpu_ranks"] == 4 and c["hosts"] == 1, c
assert c["launcher"] == "OpenMPI mpirun", c["launcher"]
assert r["samples"] == 600 and r["errors"] == 0, (r["samples"], r["errors"])   # 300 files x 2 epochs
assert r["bytes"] == 600 * 8192, r["bytes"]
assert r["file_latency_us"]["count"] == 600, r["file_latency_us"]["count"]
assert sum(x["results"]["samples"] for x in h) == 600
assert sorted(sum((x["mpi_ranks"] for x in h), [])) == [0, 1, 2, 3]
assert i["gpus"] == 4 and abs(i["required_samples_per_s"] - 4e6) < 1, (i["gpus"], i["required_samples_per_s"])
assert d["loader"]["gpus"] == 4
# What coordination cost, measured: the results reached rank 0 over the binomial tree (2 of the
# 3 other ranks' subtrees: from ranks 1 and 2), so rank 0 received bytes, and every figure is set.
k = c["coordination"]
assert k["gather_method"].startswith("binomial tree"), k
assert k["gather_bytes_at_rank0"] > 0 and k["gather_s"] > 0 and k["init_s"] > 0 and k["setup_s"] > 0, k
assert k["step_exchanges"] == c["step_exchanges"] > 0 and 0 <= k["finish_wait_s"] <= k["step_exchange_s"], k
# duration = max over processes; throughput = total / that duration
assert abs(r["samples_per_s"] - 600 / r["elapsed_s"]) < 1e-6 * r["samples_per_s"] + 1e-9
assert r["elapsed_s"] >= max(x["results"]["last_done_s"] for x in h) - 1e-9
print("ok:", r["samples"], "samples,", r["samples_per_s"], "samples/s")
PY
# Ctrl-C on mpirun (it sends SIGTERM to every rank): every process stops, and rank 0 still
# writes the merged result, marked partial.
t0=$(date +%s)
local_mpirun 2 "$IOPROBE" --dir "$W/ds" --files 300 --file-size 8KiB --file-size-dist fixed --workers 2 --batch-size 8 \
  --epochs 2 --gpu-samples-per-s 50 --duration 60 --quiet --json "$W/int.json" >"$W/int.out" 2>&1 &
mpid=$!
sleep 4
pkill -INT -f "^mpirun .*$W/int.json" || fail "no mpirun to interrupt"
wait "$mpid"
took=$(( $(date +%s) - t0 ))
tail -5 "$W/int.out"
[ "$took" -lt 30 ] || fail "Ctrl-C on mpirun took $took s to end a 60 s run"
python3 - "$W/int.json" <<'PY' || fail "no partial merged result after Ctrl-C on mpirun"
import json, sys
d = json.load(open(sys.argv[1]))
print("partial:", d["partial"], "stop:", d["results"]["stop_reason"], "samples:", d["results"]["samples"])
assert d["partial"] is True and d["results"]["stop_reason"].startswith("interrupted"), d["results"]["stop_reason"]
assert d["cluster"]["mpi_ranks"] == 2 and d["results"]["samples"] > 0
PY
# Rank 0 alone writes the document: its refusal of the --json path ends every process (no rank
# left waiting in a collective), and --dir under a missing parent is named as on one host.
for bad in "--dir $W/ds --json /proc/ioprobe-no/c.json" "--dir /proc/ioprobe-no/ds"; do
  t0=$(date +%s)
  HOSTS_TIMEOUT=60 local_mpirun 2 "$IOPROBE" --files 300 --file-size 8KiB --file-size-dist fixed --quiet $bad \
    >"$W/bad.out" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  grep "^ioprobe" "$W/bad.out"
  [ "$rc" = 124 ] && fail "'$bad' under mpirun hung (killed after 60 s)"
  [ "$rc" != 0 ] || fail "'$bad' under mpirun: exit 0"
  [ "$took" -lt 30 ] || fail "'$bad' under mpirun took $took s"
  grep -q "/proc/ioprobe-no" "$W/bad.out" || fail "'$bad': the path is not named"
done
# A subcommand that does not run across hosts says so once (rank 0) and exits 2.
# (raw and tune run across hosts now: tests/integration/multihost_raw.sh, multihost_tune.sh.)
local_mpirun 2 "$IOPROBE" probe --dir "$W" >"$W/out2" 2>&1
rc=$?
cat "$W/out2"
[ "$rc" != 0 ] || fail "probe under mpirun was not refused"
[ "$(grep -c "does not run across hosts" "$W/out2")" = 1 ] || fail "expected one refusal line"
echo "ok: 4 MPI ranks, one merged result"
