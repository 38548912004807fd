#!/usr/bin/env bash
# ioprobe_test: one writer per directory. Two `gen` into one --dir: the second
# waits, naming the first (PID and command), then reuses the finished set; neither fails with a
# rename ENOENT and the set is complete. A `gen --regenerate` of another shape waits while a run
# reads the dataset. A second `checkpoint` into one --dir waits, naming the first, instead of
# measuring against its I/O. The first process is stopped (SIGSTOP) while it holds the lock, so
# the overlap is certain, not a matter of timing: IOPROBE_TEST_STOP_HOLDING_LOCK makes it stop
# itself (SIGSTOP) once it holds and has recorded the lock (core/dir_lock.cpp).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-conc-XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
cd "$work"

# wait_stopped PID: up to 60 s for PID to stop itself (state T), as it does once it holds the lock.
wait_stopped() {
  local i st
  for ((i = 0; i < 600; i++)); do
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ "$st" = T ] && return 0
    [ -z "$st" ] && fail "PID $1 ended before it held the lock"
    sleep 0.1
  done
  fail "PID $1 did not stop holding the lock within 60 s"
}

# wait_for FILE PATTERN: up to 60 s for PATTERN to appear in FILE.
wait_for() {
  local i
  for ((i = 0; i < 600; i++)); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "timed out waiting for '$2' in $1: $(cat "$1" 2>/dev/null)"
}

# 1. Two gen into one --dir.
IOPROBE_TEST_STOP_HOLDING_LOCK=1 "$IOPROBE" gen --dir ds --files 3000 --file-size 8KiB > a.out 2> a.err &
a=$!; pids+=($a)
wait_stopped $a
grep -q "pid=$a" ds/.ioprobe-lock || fail "the lock file does not name PID $a: $(cat ds/.ioprobe-lock)"
"$IOPROBE" gen --dir ds --files 3000 --file-size 8KiB > b.out 2> b.err &
b=$!; pids+=($b)
wait_for b.err "is locked by PID $a"
grep -q "ioprobe gen --dir ds" b.err || fail "the waiting message does not name the holder's command: $(cat b.err)"
kill -CONT $a
wait $a || fail "the first gen failed: $(cat a.err)"
wait $b || fail "the second gen failed: $(cat b.err)"
grep -q "generated 3,000 files" a.out || fail "first gen: $(cat a.out)"
grep -q "reused 3,000 files" b.out || fail "second gen did not reuse the finished set: $(cat b.out) $(cat b.err)"
[ "$(find ds -type f ! -name '.ioprobe-*' | wc -l)" = 3000 ] || fail "ds holds $(find ds -type f | wc -l) files"
[ ! -e ds/.ioprobe-lock ] || fail "the lock file was left behind"
ls ds | grep -q 'ioprobe-tmp' && fail "a temporary file was left behind"
echo "ok: second gen waited for PID $a, then reused the set"

# 1b. Started together, without a stop: both succeed (no shared temporary name), one generates.
rm -rf ds2
"$IOPROBE" gen --dir ds2 --files 500 --file-size 4KiB > c.out 2> c.err & c=$!; pids+=($c)
"$IOPROBE" gen --dir ds2 --files 500 --file-size 4KiB > d.out 2> d.err & d=$!; pids+=($d)
wait $c || fail "concurrent gen 1: $(cat c.err)"
wait $d || fail "concurrent gen 2: $(cat d.err)"
[ "$(cat c.out d.out | grep -c 'generated 500 files')" = 1 ] && [ "$(cat c.out d.out | grep -c 'reused 500 files')" = 1 ] \
  || fail "expected one generated and one reused: $(cat c.out d.out)"
echo "ok: two gen started together: one generated, one reused"

# 2. A reader holds the set: a --regenerate of another shape waits for it.
IOPROBE_TEST_STOP_HOLDING_LOCK=1 "$IOPROBE" --quiet --dir ds --files 3000 --file-size 8KiB --cache warm --duration 1s --workers 1 > r.out 2> r.err &
r=$!; pids+=($r)
wait_stopped $r
"$IOPROBE" gen --dir ds --files 200 --file-size 4KiB --regenerate > g.out 2> g.err &
g=$!; pids+=($g)
wait_for g.err "is locked by PID $r"
[ "$(find ds -type f ! -name '.ioprobe-*' | wc -l)" = 3000 ] || fail "the dataset changed under the reader"
kill -CONT $r
wait $r || fail "the reading run failed: $(cat r.err)"
wait $g || fail "the regenerating gen failed: $(cat g.err)"
grep -q "regenerated" g.out || fail "gen --regenerate: $(cat g.out)"
echo "ok: --regenerate waited for the reading run (PID $r)"

# 3. Two checkpoint runs into one --dir.
IOPROBE_TEST_STOP_HOLDING_LOCK=1 "$IOPROBE" checkpoint --dir ck --size 16MiB --duration 4s --raw-baseline off > k1.out 2> k1.err &
k1=$!; pids+=($k1)
wait_stopped $k1
grep -q "pid=$k1" ck/.ioprobe-lock || fail "the lock file does not name PID $k1: $(cat ck/.ioprobe-lock)"
"$IOPROBE" checkpoint --dir ck --size 16MiB --raw-baseline off > k2.out 2> k2.err &
k2=$!; pids+=($k2)
wait_for k2.err "is in use by PID $k1"
grep -q "measure each other's I/O" k2.err || fail "the message does not say why it waits: $(cat k2.err)"
grep -q "generating" k2.err && fail "the second checkpoint built its state before the first ended"
kill -CONT $k1
wait $k1 || fail "first checkpoint: $(cat k1.err)"
wait $k2 || fail "second checkpoint: $(cat k2.err)"
[ ! -e ck/.ioprobe-lock ] || fail "the checkpoint lock file was left behind"
echo "ok: second checkpoint waited for PID $k1"
echo "all concurrency checks passed"
