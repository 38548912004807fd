#!/usr/bin/env bash
# The man page (docs/ioprobe.1) against the binary's --help: every subcommand `ioprobe --help` lists
# has a section `.SS "ioprobe NAME"`, every option its `--help` lists is in that section, and the
# section lists no option `--help` no longer has. tools/manpage rewrites the page from --help.
# Usage: tests/man_page_test.sh BINARY [MANPAGE]   (MANPAGE defaults to docs/ioprobe.1 beside this file)
set -euo pipefail
bin=${1:?usage: man_page_test.sh BINARY [MANPAGE]}
page=${2:-"$(dirname "$0")/../docs/ioprobe.1"}
[ -f "$page" ] || { echo "man_page_test: no man page at '$page'" >&2; exit 1; }

# The option names a --help text defines: its option lines, "  --name ..." or "  -h [ --help ]".
help_options() { grep -oE '^  (-[[:alnum:]] \[ )?--[[:alnum:]][[:alnum:]-]*' | grep -oE -- '--[[:alnum:]-]+$' | sort -u; }
# The lines of the page's section for subcommand $1, up to the next .SS or .SH.
man_section() { awk -v h=".SS \"ioprobe $1\"" '$0 == h {on = 1; next} on && /^\.S[SH] / {exit} on' "$page"; }
# The options a section lists as items: the line after each .TP, "\fB\-\-name\fR ..." (roff dashes).
man_items() { awk 'prev == ".TP" {print} {prev = $0}' | sed 's/\\-/-/g' | grep -oE -- '--[[:alnum:]][[:alnum:]-]*' | sort -u; }

mapfile -t subs < <("$bin" --help | awk '/^subcommands:/ {on = 1; next} on && !NF {exit} on {print $1}')
[ ${#subs[@]} -gt 0 ] || { echo "man_page_test: '$bin --help' lists no subcommands" >&2; exit 1; }
failures=0 checked=0
for sub in "${subs[@]}"; do
  section=$(man_section "$sub")
  if [ -z "$section" ]; then
    echo "man_page_test: $page has no section '.SS \"ioprobe $sub\"' (run tools/manpage)" >&2
    failures=$((failures + 1)); continue
  fi
  help=$("$bin" "$sub" --help) || { echo "man_page_test: '$bin $sub --help' failed" >&2; failures=$((failures + 1)); continue; }
  # `ioprobe --help` (no subcommand) shows run's options: they must be in run's section too.
  [ "$sub" = run ] && help+=$'\n'$("$bin" --help)
  mapfile -t opts < <(help_options <<< "$help")
  [ ${#opts[@]} -gt 0 ] || { echo "man_page_test: '$bin $sub --help' lists no options" >&2; failures=$((failures + 1)); continue; }
  mapfile -t items < <(man_items <<< "$section")
  declare -A in_help=() in_page=()
  for opt in "${opts[@]}"; do in_help[$opt]=1; done
  for item in "${items[@]}"; do in_page[$item]=1; done
  for opt in "${opts[@]}"; do
    checked=$((checked + 1))
    if [ -z "${in_page[$opt]:-}" ]; then
      echo "man_page_test: 'ioprobe $sub --help' lists $opt; the man page's 'ioprobe $sub' section does not (run tools/manpage)" >&2
      failures=$((failures + 1))
    fi
  done
  for item in "${items[@]}"; do
    if [ -z "${in_help[$item]:-}" ]; then
      echo "man_page_test: the man page's 'ioprobe $sub' section lists $item; 'ioprobe $sub --help' does not (run tools/manpage)" >&2
      failures=$((failures + 1))
    fi
  done
  unset in_help in_page
done
if [ $failures -gt 0 ]; then
  echo "man_page_test: $failures difference(s) between $page and --help" >&2
  exit 1
fi
echo "man_page_test: ${#subs[@]} subcommands, $checked options: all in $page"
