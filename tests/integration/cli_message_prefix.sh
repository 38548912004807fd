#!/bin/bash
# One prefix per command: every line a subcommand writes on stderr starts with
# "ioprobe SUBCOMMAND: " (then "error: " or "warning: " for those), whether it refuses bad input,
# warns, or reports progress.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-prefix.XXXXXX")
trap 'rm -rf "$W"' EXIT

# expect_prefix CMD EXIT_CODE ARGS...: runs `ioprobe CMD ARGS...`, checks the exit code, that
# stderr is not empty and that every stderr line starts with "ioprobe CMD: ".
expect_prefix() {
  local cmd=$1 want=$2
  shift 2
  "$IOPROBE" "$cmd" "$@" >"$W/out" 2>"$W/err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "ioprobe $cmd $*: exit $rc, expected $want: $(cat "$W/err")"
  [ -s "$W/err" ] || fail "ioprobe $cmd $*: nothing on stderr"
  local bad
  bad=$(grep -v "^ioprobe $cmd: " "$W/err")
  [ -z "$bad" ] || fail "ioprobe $cmd $*: stderr lines without the prefix 'ioprobe $cmd: ': $bad"
  # The command named once: not again after "error: " (an option parser's message names it).
  bad=$(grep -E "^ioprobe $cmd: (error|warning): $cmd: " "$W/err")
  [ -z "$bad" ] || fail "ioprobe $cmd $*: the command named twice: $bad"
}

# Refusals of bad input: "ioprobe CMD: error: ...".
expect_prefix run 2 --workers lots --dir "$W/ds"
grep -q "^ioprobe run: error: .*--workers" "$W/err" || fail "run refusal: $(cat "$W/err")"
expect_prefix gen 2 --files many --dir "$W/ds"
expect_prefix checkpoint 2 --restore-only --dir "$W/nothing-here"
grep -q "^ioprobe checkpoint: error: --dir .*nothing-here: no such directory" "$W/err" || fail "checkpoint: $(cat "$W/err")"
expect_prefix raw 2 --filename "$W/f" --rw sideways
expect_prefix report 2 "$W/missing.json"
expect_prefix tune 2 --budget never --dir "$W/ds"
expect_prefix run 2 --wokers 4 --dir "$W/ds"
expect_prefix report 2
[ -e "$W/ds" ] && fail "a refused command generated a dataset"

# Progress and warnings of a command that runs: a checkpoint save whose raw baseline is off
# (progress lines), then a warned one: --restore-threads with more workers than allowed CPUs.
expect_prefix checkpoint 0 --dir "$W/ck" --size 4MiB --raw-baseline off --restore --compress zstd:1 \
  --restore-threads 64
grep -q "^ioprobe checkpoint: saving" "$W/err" || fail "no checkpoint progress line: $(cat "$W/err")"
grep -q "^ioprobe checkpoint: warning: " "$W/err" || echo "note: no warning printed by the checkpoint run"
# A run that generates a tiny dataset and reads it: its progress lines.
expect_prefix run 0 --dir "$W/ds" --files 20 --file-size 4KiB --workers 2 --batch-size 4
# record's summary of a command that writes nothing itself on stderr (and touches no data file: a warning).
expect_prefix record 0 --out "$W/t.jsonl" -- true
grep -q "^ioprobe record:   trace: $W/t.jsonl" "$W/err" || fail "record summary: $(cat "$W/err")"
grep -q "^ioprobe record: warning: no call on a data file" "$W/err" || fail "record warning: $(cat "$W/err")"
# calibrate's Python driver: a refusal carrying the user's traceback has the prefix on each of its lines.
PYTHONPATH="$(dirname "$0")/../../python" python3 -c '
import traceback, ioprobe_user
try:
    raise ValueError("bad sample")
except ValueError as e:
    ioprobe_user.fail(f"ds.py: make(paths) raised {e}\n{traceback.format_exc()}fix make", 2)
' 2> "$W/err"
[ $? = 2 ] || fail "ioprobe_user.fail did not exit 2"
grep -q "^ioprobe calibrate:   ValueError: bad sample" "$W/err" || fail "calibrate traceback: $(cat "$W/err")"
bad=$(grep -v "^ioprobe calibrate: " "$W/err")
[ -z "$bad" ] || fail "calibrate driver lines without the prefix: $bad"
echo ok
