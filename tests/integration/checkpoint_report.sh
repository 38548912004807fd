#!/usr/bin/env bash
# `ioprobe report` re-renders a checkpoint document (a save with its restore, and a --verify-only
# read-back) as the command printed it, and refuses one with a removed or mistyped field: exit 2,
# naming the file and the field's path, instead of rendering a default in its place.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-ckrep-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$IOPROBE" checkpoint --dir ck --size 8MiB --chunk-size 1MiB --raw-baseline off --restore --keep --json save.json \
  > save.txt 2>/dev/null || fail "checkpoint save failed"
"$IOPROBE" checkpoint --verify-only --dir ck --json verify.json > verify.txt 2>/dev/null || fail "--verify-only failed"
for d in save verify; do
  "$IOPROBE" report "$d.json" > "$d.report" 2>&1 || fail "report $d.json: $(cat "$d.report")"
  # The command's text ends with what report does not repeat (the kept files, the directories the
  # run made, the result line).
  grep -v -e '^kept: ' -e '^created for this run' "$d.txt" | cmp -s - "$d.report" || fail "report $d.json differs from the command's text: \
$(grep -v -e '^kept: ' -e '^created for this run' "$d.txt" | diff - "$d.report")"
done
refused() {  # refused FILE "path in the message" PYTHON-EDIT
  local f=$1 want=$2 edit=$3 out rc
  python3 -c "import json; d = json.load(open('${f%%-*}.json')); $edit; json.dump(d, open('$f', 'w'))" \
    || fail "editing $f"
  out=$("$IOPROBE" report "$f" 2>&1); rc=$?
  [ $rc = 2 ] || fail "report $f exited $rc, expected 2: $out"
  echo "$out" | grep -qF -- "$f" || fail "report $f: the message does not name the file: $out"
  echo "$out" | grep -qF -- "$want" || fail "report $f: the message does not name '$want': $out"
  echo "ok: $f -> $out"
}
refused save-no-ok.json "checkpoint.save: missing key 'ok'" "del d['checkpoint']['save']['ok']"
refused save-bad-rate.json "checkpoint.restore.restore_bytes_per_s" \
  "d['checkpoint']['restore']['restore_bytes_per_s'] = 'fast'"
refused verify-no-verify.json "missing key 'verify'" "del d['checkpoint']['verify']"
refused verify-bad-shard.json "checkpoint.shards[0].file_bytes" "d['checkpoint']['shards'][0]['file_bytes'] = '1 MiB'"
echo PASS
