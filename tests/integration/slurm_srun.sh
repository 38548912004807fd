#!/bin/bash
# `srun --mpi=pmix -n 2 ioprobe run` under a real Slurm (Debian 12's slurm-wlm 22.05) of one node,
# this host: a private munged (its own key), slurmctld and slurmd on a slurm.conf written here
# (its own ports, state, spool, pid and log files under a temporary directory; SLURM_CONF points
# at it, so no system Slurm configuration is read or touched). Checks that the srun job is one
# DDP job with one merged result (the same exact accounting as multihost_local_mpirun), that the
# report names srun --mpi=pmix as the launcher, that an sbatch script's srun does the same, and
# that `srun -n 2` without an MPI plugin and `srun --mpi=pmi2 -n 2` end at once with ioprobe's own
# message naming the fix.
# Every daemon it started is stopped at exit, on failure too.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run slurmd (it starts job steps as any user)"
for c in munged slurmctld slurmd srun sbatch sinfo scontrol scancel; do
  command -v "$c" >/dev/null || skip "missing $c (tools/setup --test installs slurmctld slurmd slurm-client munge)"
done
"$IOPROBE" --version >/dev/null || fail "no binary"
# Nothing of a surrounding Slurm job (CI under Slurm) may leak into ours.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-slurm.XXXXXX")
chmod 711 "$W"   # munged wants its socket's directories searchable by everyone
PIDS=()
stop_all() {
  local p t left=""
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    timeout 5 scancel --quiet -u root 2>/dev/null  # our slurmctld's jobs (SLURM_CONF is ours)
  fi
  # Daemons in reverse order of their start: slurmd (and its steps), slurmctld, munged.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[i]}" 2>/dev/null; done
  for t in $(seq 1 50); do
    left=""
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for p in $left; do kill -9 "$p" 2>/dev/null; done
  # A slurmstepd (it detaches from slurmd) or task still holding a file of ours.
  for p in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$W/*" 2>/dev/null | cut -d/ -f3 | sort -u); do
    [ "$p" != $$ ] && kill -9 "$p" 2>/dev/null
  done
  rm -rf "$W"
}
trap stop_all EXIT
trap 'exit 1' INT TERM HUP
show_logs() { for f in "$W"/log/*.log; do echo "== $f"; tail -n 15 "$f"; done; }

# Two free TCP ports for slurmctld and slurmd.
read -r CTLD_PORT SLURMD_PORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/run"
chmod 755 "$W/munge"
head -c 1024 /dev/urandom >"$W/munge/munge.key"
chmod 600 "$W/munge/munge.key"
NODE=$(slurmd -C | sed -n 's/^NodeName=\([^ ]*\) .*/\1/p')
NODELINE=$(slurmd -C | head -n 1)
[ -n "$NODE" ] || fail "slurmd -C printed no NodeName: $(slurmd -C 2>&1)"
: >"$W/plugstack.conf"
export SLURM_CONF=$W/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=ioprobetest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/run/slurmctld.pid
SlurmdPidFile=$W/run/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
PlugStackConfig=$W/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=2
$NODELINE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=ioprobe Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
# (srun reads a configuration even to list its plugins.)
srun --mpi=list 2>&1 | grep -qw pmix ||
  skip "this Slurm has no mpi/pmix plugin (srun --mpi=list: $(srun --mpi=list 2>&1 | tr '\n' ' '))"
munged -F --force --key-file="$W/munge/munge.key" --socket="$W/munge/munge.sock" --pid-file="$W/run/munged.pid" \
  --log-file="$W/log/munged.log" --seed-file="$W/munge/munged.seed" >"$W/log/munged.out" 2>&1 &
PIDS+=($!)
for t in $(seq 1 50); do [ -S "$W/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$W/munge/munge.sock" ] || { show_logs; fail "munged did not create its socket"; }
slurmctld -D -i >"$W/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D >"$W/log/slurmd.out" 2>&1 &
PIDS+=($!)
state=""
for t in $(seq 1 100); do
  state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || { show_logs; fail "node $NODE is '$state', not idle, 20 s after slurmd started"; }
echo "slurm: node $NODE idle (slurmctld port $CTLD_PORT, slurmd port $SLURMD_PORT)"

# 1. srun --mpi=pmix -n 2: one DDP job, one merged result.
args=(run --dir "$W/ds" --files 300 --file-size 8KiB --file-size-dist fixed --workers 2 --batch-size 8 --epochs 2
      --gpu-samples-per-s 1000000 --quiet)
check_result() {  # check_result JSON OUT WHAT
  [ "$(grep -c '^ioprobe .* run' "$2")" = 1 ] || fail "$3: expected exactly one report (rank 0's)"
  grep -q "^Hosts" "$2" || fail "$3: no Hosts section in the report"
  python3 - "$1" "$NODE" <<'PY' || fail "$3: the merged result does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
c, h, r, i = d["cluster"], d["hosts"], d["results"], d["ingest"]
print("cluster:", {k: c[k] for k in ("hosts", "mpi_ranks", "gpu_ranks", "launcher", "dataset_placement", "start_skew_s")})
assert c["launcher"] == "Slurm srun --mpi=pmix", c["launcher"]
assert c["mpi_ranks"] == 2 and c["gpu_ranks"] == 2 and c["hosts"] == 1, c
assert [x["hostname"] for x in h] == [sys.argv[2]], [x["hostname"] for x in h]
assert r["samples"] == 600 and r["errors"] == 0, (r["samples"], r["errors"])   # 300 files x 2 epochs
assert r["bytes"] == 600 * 8192, r["bytes"]
assert r["file_latency_us"]["count"] == 600, r["file_latency_us"]["count"]
assert sum(x["results"]["samples"] for x in h) == 600
assert sorted(sum((x["mpi_ranks"] for x in h), [])) == [0, 1]
assert i["gpus"] == 2 and abs(i["required_samples_per_s"] - 2e6) < 1, (i["gpus"], i["required_samples_per_s"])
assert abs(r["samples_per_s"] - 600 / r["elapsed_s"]) < 1e-6 * r["samples_per_s"] + 1e-9
assert r["elapsed_s"] >= max(x["results"]["last_done_s"] for x in h) - 1e-9
print("ok:", r["samples"], "samples,", round(r["samples_per_s"]), "samples/s")
PY
}
t0=$(date +%s)
timeout 60 srun --mpi=pmix -n 2 --chdir "$W" "$IOPROBE" "${args[@]}" --json "$W/r.json" >"$W/out" 2>"$W/err"
rc=$?
cat "$W/out" "$W/err"
[ "$rc" = 124 ] && { show_logs; fail "srun --mpi=pmix -n 2 ioprobe hung (killed after 60 s)"; }
[ "$rc" = 0 ] || { show_logs; fail "srun --mpi=pmix -n 2 ioprobe: exit $rc"; }
grep -q "started by Slurm srun --mpi=pmix" "$W/out" || fail "the text report does not name srun --mpi=pmix"
check_result "$W/r.json" "$W/out" "srun --mpi=pmix -n 2"
echo "srun --mpi=pmix -n 2: $(( $(date +%s) - t0 )) s"

# 2. The same from a batch script (docs/multihost.md's sbatch example): sbatch -n 2, srun --mpi=pmix inside.
cat >"$W/job.sh" <<EOF
#!/bin/bash
srun --mpi=pmix "$IOPROBE" ${args[*]} --json "$W/b.json"
EOF
timeout 60 sbatch --wait -n 2 --chdir "$W" -o "$W/b.out" "$W/job.sh" >"$W/sbatch.out" 2>&1
rc=$?
cat "$W/sbatch.out" "$W/b.out"
[ "$rc" = 0 ] || { show_logs; fail "sbatch --wait -n 2 job.sh: exit $rc"; }
check_result "$W/b.json" "$W/b.out" "sbatch -n 2 + srun --mpi=pmix"

# 3. srun -n 2 with no MPI plugin (MpiDefault=none): Open MPI cannot connect the tasks. ioprobe
# refuses before MPI_Init, once (task 0), exit 2, naming the fix; it does not hang, and no task
# runs alone (no dataset, no result).
t0=$(date +%s)
timeout 60 srun -n 2 --chdir "$W" "$IOPROBE" "${args[@]}" --dir "$W/nods" --json "$W/none.json" >"$W/none.out" 2>&1
rc=$?
took=$(( $(date +%s) - t0 ))
cat "$W/none.out"
[ "$rc" = 124 ] && fail "srun -n 2 without --mpi hung (killed after 60 s)"
[ "$rc" = 2 ] || fail "srun -n 2 without --mpi: exit $rc, expected 2 (a usage refusal)"
[ "$took" -lt 20 ] || fail "srun -n 2 without --mpi took $took s to end"
[ "$(grep -c '^ioprobe: error: started by Slurm srun (no MPI plugin) as one of 2 tasks' "$W/none.out")" = 1 ] ||
  fail "expected ioprobe's refusal exactly once"
grep -q "srun --mpi=pmix -n 2" "$W/none.out" || fail "the refusal does not name the fix"
grep -q "OMPI was not built" "$W/none.out" && fail "Open MPI's own abort ran (MPI_Init was called)"
[ -e "$W/nods" ] || [ -e "$W/none.json" ] && fail "a task ran alone (it wrote a dataset or a result)"

# 3b. srun --mpi=pmi2 -n 2: Slurm's PMI-2 server, which Debian's Open MPI (PMIx only) cannot use.
# ioprobe refuses before MPI_Init, once, exit 2, naming the fix. The variables the plugin sets
# in a task are printed first (the unit test's environment is modelled on them).
timeout 30 srun --mpi=pmi2 -n 1 --chdir "$W" env 2>&1 | grep -E '^(PMI|SLURM_MPI_TYPE)' | sort
timeout 60 srun --mpi=pmi2 -n 2 --chdir "$W" "$IOPROBE" "${args[@]}" --dir "$W/nods2" --json "$W/pmi2.json" \
  >"$W/pmi2.out" 2>&1
rc=$?
cat "$W/pmi2.out"
[ "$rc" = 124 ] && fail "srun --mpi=pmi2 -n 2 hung (killed after 60 s)"
[ "$rc" = 2 ] || fail "srun --mpi=pmi2 -n 2: exit $rc, expected 2 (a usage refusal)"
[ "$(grep -c '^ioprobe: error: started by srun --mpi=pmi2; this Open MPI needs PMIx: use srun --mpi=pmix' "$W/pmi2.out")" = 1 ] ||
  fail "expected ioprobe's pmi2 refusal exactly once"
grep -q "OMPI was not built" "$W/pmi2.out" && fail "Open MPI's own abort ran under pmi2 (MPI_Init was called)"
[ -e "$W/nods2" ] || [ -e "$W/pmi2.json" ] && fail "a task ran alone under pmi2 (it wrote a dataset or a result)"

# 4. A site whose slurm.conf says MpiDefault=pmix: plain `srun -n 2` starts the PMIx plugin, and
# ioprobe names it (SLURM_MPI_TYPE) though the command line has no --mpi.
sed -i 's/^MpiDefault=none$/MpiDefault=pmix/' "$SLURM_CONF"
scontrol reconfigure || fail "scontrol reconfigure (MpiDefault=pmix)"
timeout 60 srun -n 2 --chdir "$W" "$IOPROBE" "${args[@]}" --json "$W/d.json" >"$W/d.out" 2>&1
rc=$?
cat "$W/d.out"
[ "$rc" = 0 ] || { show_logs; fail "srun -n 2 under MpiDefault=pmix: exit $rc"; }
check_result "$W/d.json" "$W/d.out" "srun -n 2 under MpiDefault=pmix"
echo "ok: srun --mpi=pmix, sbatch and MpiDefault=pmix give one merged result; srun without a plugin is refused in $took s," \
  "srun --mpi=pmi2 with the fix"
