#!/bin/bash
# Threads that cannot start (a pids limit; root, cgroup v1 or v2 pids controller): `raw` with
# many jobs and `run` with many DataLoader workers exit 1 with a message that names the limit,
# never abort (SIGABRT from a joinable std::thread) or hang.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to create a pids cgroup"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-threads.XXXXXX")
CG=""
cleanup() { [ -z "$CG" ] || rmdir "$CG" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  grep -qw pids /sys/fs/cgroup/cgroup.controllers || skip "cgroup v2 without the pids controller"
  echo +pids >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  CG=/sys/fs/cgroup/ioprobe-threads.$$
elif [ -d /sys/fs/cgroup/pids ]; then
  CG=/sys/fs/cgroup/pids/ioprobe-threads.$$
else
  skip "no pids cgroup controller here"
fi
mkdir "$CG" 2>/dev/null || { CG=""; skip "cannot create a pids cgroup"; }
[ -f "$CG/pids.max" ] || skip "no pids.max in $CG"
limited() {  # runs "$@" in the cgroup with at most 4 tasks (the process and 3 more threads)
  echo 4 >"$CG/pids.max"
  timeout 120 bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}
expect_refused() {  # what, then the command
  local what=$1; shift
  limited "$@" >"$W/out" 2>&1
  local rc=$?
  echo "--- $what -> exit $rc"; tail -3 "$W/out"
  [ $rc = 1 ] || fail "$what: exit $rc, expected 1 (134 = abort, 124 = hang)"
  grep -q "refused a resource (threads or memory)" "$W/out" || fail "$what: no message naming the limit"
}
"$IOPROBE" gen --quiet --dir "$W/ds" --files 64 --file-size 4KiB --file-size-dist fixed >/dev/null 2>&1 || fail "gen failed"
expect_refused "raw --numjobs 16" "$IOPROBE" raw --filename "$W/raw.bin" --size 1MiB --rw write --numjobs 16
expect_refused "run --workers 16" "$IOPROBE" run --quiet --data "$W/ds" --workers 16 --epochs 1
# Room for ioprobe's own threads (main, 1 rank, 2 workers) but none for io_uring's io-wq workers:
# io_uring cancels the reads it cannot hand off; the run stops after a few, names the likely
# cause, and gives no storage verdict.
cp -r "$W/ds" /dev/shm/ioprobe-threads-ds.$$ || skip "cannot copy the dataset to /dev/shm"
trap 'rm -rf /dev/shm/ioprobe-threads-ds.$$; cleanup' EXIT
echo 4 >"$CG/pids.max"
timeout 120 bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
  "$IOPROBE" run --quiet --data /dev/shm/ioprobe-threads-ds.$$ --workers 2 --engine io_uring >"$W/out" 2>&1
rc=$?
grep -E "delivered .* in|verdict|ECANCELED from" "$W/out"
if [ $rc = 0 ]; then
  echo "note: this kernel completed every read without an io-wq thread; the canceled-read stop was not exercised"
  echo "ok: thread limits end with exit 1 and a message"; exit 0
fi
[ $rc = 1 ] || fail "io_uring without io-wq threads: exit $rc, expected 1"
grep -q "stopped early: io_uring canceled" "$W/out" || fail "io_uring without io-wq threads: the run did not stop early"
grep -q "ECANCELED from io_uring: most likely .* pids.max" "$W/out" || fail "io_uring without io-wq threads: no hint"
grep -q "verdict *failed" "$W/out" || fail "io_uring without io-wq threads: a storage verdict was given"
echo "ok: thread limits end with exit 1 and a message"
