#!/bin/bash
# `mpirun -np 2 ioprobe tune` on this one machine: every setting of the sweep runs on both
# processes at once, as one DDP job (2 GPU ranks, DistributedSampler over both), and each point's
# figures are the merged result. Checks: one report and one recommendation (rank 0's); the cluster
# section; the demand counts both processes' GPU ranks; the fastest run holds both processes' ranks
# and its merged histogram one count per file the workers of both read; runs done = runs planned.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v mpirun >/dev/null || skip "missing mpirun (tools/setup installs openmpi-bin)"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhtune.XXXXXX")
trap 'rm -rf "$W"' EXIT
local_mpirun 2 "$IOPROBE" tune --dir "$W/ds" --files 400 --file-size 4KiB --file-size-dist fixed --batch-size 8 \
  --gpu-samples-per-s 100 --workers 1,2 --prefetch-factors 2 --repeats 1 --point-time 2s --budget 60s \
  --json "$W/t.json" >"$W/out" 2>"$W/err"
rc=$?
cat "$W/out" "$W/err"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "mpirun -np 2 ioprobe tune: exit $rc"  # 1: no setting reached a steady state
[ "$(grep -c '^ioprobe .* tune' "$W/out")" = 1 ] || fail "expected exactly one report (rank 0's)"
grep -q "across .*2 MPI rank" "$W/out" || fail "the report does not say the sweep ran across the processes"
python3 - "$W/t.json" <<'PY' || fail "the merged tune result does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
c, t, b = d["cluster"], d["tune"], d["best_run"]
print("cluster:", c)
assert c["mpi_ranks"] == 2 and c["gpu_ranks"] == 2, c
assert d["demand"]["gpus"] == 2, d["demand"]["gpus"]
assert d["demand"]["required_samples_per_s"] == 200, d["demand"]["required_samples_per_s"]
assert t["runs_done"] == t["runs_planned"] == 2, (t["runs_done"], t["runs_planned"])
assert t["placements"] == ["none"], t["placements"]
assert sorted({w["rank"] for w in b["workers"]}) == [0, 1], b["workers"]
# Every file read by either process's workers is in the merged histogram (a run ended by its
# duration has read ahead of what its GPU ranks took, so at least the samples).
assert sum(w["files"] for w in b["workers"]) == b["file_latency_us"]["count"] >= b["samples"] > 0, \
    (sum(w["files"] for w in b["workers"]), b["file_latency_us"]["count"], b["samples"])
PY
echo "ok: tune across 2 processes, merged points, one recommendation"
