#!/usr/bin/env bash
# ioprobe_test: every subcommand's --help has the same shape: the first line is its usage line
# ("usage: ioprobe NAME ..."), the last paragraph its exit codes ("Exit codes: ...", continued only
# by indented lines), exit 0. And no subcommand takes an abbreviation of an option: "--hel" and a
# typo'd prefix of a real option exit 2 naming what was given, as a script with a typo must fail.
# The subcommands are read from 'ioprobe --help', so a new one is covered without editing this.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"

subs=$("$IOPROBE" --help | awk '/^subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1; next} on {exit}')
[ -n "$subs" ] || fail "'ioprobe --help' lists no subcommands"
n=0
for s in $subs; do
  out=$("$IOPROBE" "$s" --help 2>&1); rc=$?
  [ $rc = 0 ] || fail "ioprobe $s --help exited $rc: $out"
  first=$(printf '%s\n' "$out" | head -1)
  case "$first" in
    "usage: ioprobe $s "* | "usage: ioprobe [$s] "*) ;;
    *) fail "ioprobe $s --help: the first line is not its usage line: '$first'" ;;
  esac
  # The last line that does not start with a space must be the exit-code line.
  last=$(printf '%s\n' "$out" | grep -v '^ ' | grep -v '^$' | tail -1)
  case "$last" in
    "Exit codes: "*) ;;
    *) fail "ioprobe $s --help: the last paragraph is not the exit-code line: '$last'" ;;
  esac
  printf '%s\n' "$out" | sed -n '/^Exit codes: /,$p' | grep -q "2 bad usage" ||
    fail "ioprobe $s --help: the exit codes do not name 2 (bad usage)"
  # An abbreviation of --help is an unknown option, not --help.
  out=$("$IOPROBE" "$s" --hel 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe $s --hel exited $rc (an abbreviation was taken): $out"
  echo "$out" | grep -q -- "--hel" || fail "ioprobe $s --hel: the message does not name '--hel': $out"
  n=$((n + 1))
  echo "ok: $s: '$first' ... '$last'; --hel refused"
done
[ $n -ge 10 ] || fail "only $n subcommands checked: $subs"

# A prefix of a real option (--workers) is refused with the option named, before any work.
out=$("$IOPROBE" run --work 4 --files 10 --dir /nonexistent-ioprobe-help 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--work" || fail "run --work 4: exit $rc: $out"
echo "ok: run --work 4 -> $out"
