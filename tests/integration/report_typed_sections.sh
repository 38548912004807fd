#!/usr/bin/env bash
# `ioprobe report` reads a run document's target and dataset strictly: a string where a number
# belongs, or a missing key, exits 2 with the file and the field's path in the message, and the
# unedited document still renders.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-reptyped-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$IOPROBE" --quiet --dir ds --files 20 --file-size 4KiB --file-size-dist fixed --workers 1 --json run.json > /dev/null \
  || fail "run failed"
"$IOPROBE" report run.json > /dev/null || fail "the unedited document is refused"
# edit NAME PYTHON: a copy of run.json as NAME.json, changed by PYTHON (on the document d).
edit() {
  python3 - "$1" "$2" <<'PY' || fail "editing the document for $1"
import json, sys
d = json.load(open("run.json"))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1] + ".json", "w"))
PY
}
expect2() {  # expect2 NAME "text"...: report NAME.json exits 2 and says each text
  local f=$1.json out rc; shift
  out=$("$IOPROBE" report "$f" 2>&1); rc=$?
  [ $rc = 2 ] || fail "report $f exited $rc, expected 2: $out"
  for want in "'$f'" "$@"; do
    echo "$out" | grep -qF -- "$want" || fail "report $f: message lacks '$want': $out"
  done
  echo "ok: $f -> $out"
}
edit free 'd["target"]["free_bytes"] = "plenty"'
expect2 free "target.free_bytes: expected a non-negative integer" '"plenty"'
edit fstype 'd["target"]["fs_type"] = 7'
expect2 fstype "target.fs_type: expected a string, found 7"
edit nocache 'del d["target"]["cache"]'
expect2 nocache "target: missing key 'cache'"
edit files 'd["dataset"]["files"] = "20"'
expect2 files 'dataset.files: expected a non-negative integer in range, found "20"'
edit noroot 'del d["dataset"]["root"]'
expect2 noroot "dataset: missing key 'root'"
edit share 'd["targets"][0]["bytes_fraction"] = "all"'
expect2 share 'targets[0].bytes_fraction: expected a number, found "all"'
edit host 'd["host"]["cpus_allowed"] = "2"'
expect2 host 'host.cpus_allowed: expected an integer in range, found "2"'
echo "ok: report refuses edited target, targets, dataset and host fields by their path"
