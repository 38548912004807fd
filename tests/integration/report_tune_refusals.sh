#!/usr/bin/env bash
# Refusals of `report` and `tune` that must come before any work or write (exit 2, one line):
# an output that is one of report's inputs, a comparison of kinds without the compared figures,
# a tune --point-time of 0 or shorter than the steady-state rule needs, a tune --budget too short for its sweep.
set -uo pipefail
IOPROBE=$1
source "$IOPROBE_SOURCE_DIR/tests/integration/lib.sh"
W=$(mktemp -d /tmp/ioprobe-refusals.XXXXXX)
trap 'rm -rf "$W"' EXIT

# Minimal result documents (the header read_json_file checks, and a kind).
doc() { printf '{\n  "kind": "%s",\n  "schema": "ioprobe.result/1"\n}\n' "$1" > "$2"; }
doc checkpoint "$W/ck.json"; doc checkpoint "$W/ck2.json"; doc tune "$W/tune.json"
cp "$W/ck.json" "$W/ck.orig"
ln -s "$W/ck.json" "$W/link.json"

# 1. An output that is an input: refused, the input kept byte for byte.
for args in "--html $W/ck.json" "--csv $W/ck.json" "--html $W/link.json" "--html $W/./ck.json"; do
  # shellcheck disable=SC2086
  out=$("$IOPROBE" report "$W/ck.json" $args 2>&1); rc=$?
  [ $rc = 2 ] || fail "report ck.json $args: exit $rc, expected 2: $out"
  echo "$out" | grep -q "ck.json" || fail "report ck.json $args: the message does not name the path: $out"
  cmp -s "$W/ck.json" "$W/ck.orig" || fail "report ck.json $args: the input was changed"
  echo "$out" | grep -q "wrote" && fail "report ck.json $args: printed 'wrote': $out"
done
[ ! -L "$W/link.json" ] && fail "the symlink input was replaced"

# 2. Comparisons of kinds without the compared figures: refused, naming both files and kinds.
out=$("$IOPROBE" report "$W/ck.json" "$W/ck2.json" 2>&1); rc=$?
[ $rc = 2 ] || fail "report ck ck2: exit $rc, expected 2: $out"
echo "$out" | grep "ck.json' is a checkpoint result" | grep "ck2.json' is a checkpoint result" | grep -q "run results" \
  || fail "report ck ck2: message lacks the files, their kinds or what is supported: $out"
out=$("$IOPROBE" report "$W/tune.json" "$W/ck.json" --html "$W/cmp.html" 2>&1); rc=$?
[ $rc = 2 ] || fail "report tune ck: exit $rc, expected 2: $out"
echo "$out" | grep "tune.json' is a tune result" | grep -q "ck.json' is a checkpoint result" \
  || fail "report tune ck: message lacks the files or kinds: $out"
[ -e "$W/cmp.html" ] && fail "report tune ck: wrote an HTML page although refused"

# 3./4. tune --point-time 0 and below the steady-state minimum: usage errors before any dataset work.
for v in 0 0s 1s 1.9s; do
  out=$(timeout 60 "$IOPROBE" tune --quiet --budget 10s --files 50 --dir "$W/ds" --point-time "$v" 2>&1); rc=$?
  [ $rc = 2 ] || fail "tune --point-time $v: exit $rc, expected 2: $out"
  echo "$out" | grep -q "at least 2 s" || fail "tune --point-time $v: the message does not state the minimum: $out"
  [ -e "$W/ds" ] && fail "tune --point-time $v: the dataset was generated before the refusal"
done
# 5. A --budget too short for the sweep: a usage error naming it, before any dataset work (it was
#    found after the dataset was generated).
out=$(timeout 60 "$IOPROBE" tune --quiet --budget 5s --workers 1,2,4 --files 50 --dir "$W/ds" 2>&1); rc=$?
[ $rc = 2 ] || fail "tune --budget 5s: exit $rc, expected 2: $out"
echo "$out" | grep -q -- "--budget 5.00 s: 9 settings x 3 repeats need at least" || fail "tune --budget 5s: message: $out"
[ -e "$W/ds" ] && fail "tune --budget 5s: the dataset was generated before the refusal"
out=$(timeout 60 "$IOPROBE" tune --quiet --budget 20s --point-time 5s --workers 1,2 --files 50 --dir "$W/ds" 2>&1); rc=$?
[ $rc = 2 ] || fail "tune --point-time 5s --budget 20s: exit $rc, expected 2: $out"
echo "$out" | grep -q -- "more than --budget 20.00 s" || fail "tune --point-time 5s --budget 20s: message: $out"
[ -e "$W/ds" ] && fail "tune --point-time 5s --budget 20s: the dataset was generated before the refusal"
# Into a file first: with pipefail, grep -q leaving early would fail the pipeline (SIGPIPE).
"$IOPROBE" tune --help >"$W/tune-help" 2>&1 || fail "tune --help: exit $?"
grep -q "at least 2 s" "$W/tune-help" || fail "tune --help does not state the --point-time minimum"
echo "ok"
