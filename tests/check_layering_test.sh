#!/usr/bin/env bash
# ctest `layering.checker`: tools/check-layering must fail on each bad tree in
# tests/fixtures/layering/ and name the finding; a checker that passes everything fails this test.
# Usage: tests/check_layering_test.sh   (from anywhere)
set -uo pipefail
cd "$(dirname "$0")/.."
fixtures=tests/fixtures/layering
fail=0
expect_failure() {  # FIXTURE PATTERN: the checker exits 1 and its output matches PATTERN (grep -E)
  local out rc
  out=$(tools/check-layering "$fixtures/$1" 2>&1); rc=$?
  if [ "$rc" != 1 ]; then
    echo "FAIL: check-layering on $fixtures/$1 exited $rc, expected 1; its output:"; echo "$out"; fail=1
  elif ! grep -qE -- "$2" <<<"$out"; then
    echo "FAIL: check-layering on $fixtures/$1 did not report /$2/; its output:"; echo "$out"; fail=1
  else
    echo "ok: $1: $(grep -E -- "$2" <<<"$out" | head -1)"
  fi
}
# The undeclared include: FILE:LINE, the included folder and the declaration that lacks it.
expect_failure missing 'missing/loader/bad\.cpp:3: includes "report/\.\.\." but loader/ does not declare report: .*layers\.cmake:3 has `ioprobe_layer\(loader USES core\)` without report'
expect_failure cycle 'form a cycle: (a -> b -> a|b -> a -> b)'
expect_failure undeclared 'undeclared/extra/: no declaration: add `ioprobe_layer\(extra USES \.\.\.\)`'
# A command file that names nlohmann (FILE:LINE), and an exception that no longer applies.
expect_failure json_command 'json_command/cli/raw_command\.cpp:3: a command file names nlohmann'
expect_failure json_command "json_command/cli/report_command\.cpp: names nlohmann no more: take 'cli/report_command\.cpp' off JSON_COMMANDS"
exit $fail
