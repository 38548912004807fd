#!/bin/bash
# Ctrl-C during a save: exit 130, a partial labelled result (JSON partial=true),
# no file under a final name, no temporary file. SIGTERM: 143.
set -u
IOPROBE=$1
DIR=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckpt-int.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for sig in INT TERM; do
  want=130; [ $sig = TERM ] && want=143
  # 256 MiB in 4 KiB writes at depth 1 with fsync takes seconds; the signal is sent once the save
  # has started (its progress line is on stderr), so it always lands mid-save, whatever the disk.
  "$IOPROBE" checkpoint --dir "$DIR/ck" --size 256MiB --io-size 4KiB --io-depth 1 \
    --raw-baseline off --json "$DIR/r.json" >"$DIR/out" 2>"$DIR/err" &
  pid=$!
  for _ in $(seq 1 300); do grep -q "saving checkpoint" "$DIR/err" 2>/dev/null && break; sleep 0.05; done
  sleep 0.2
  kill -s $sig $pid
  wait $pid
  rc=$?
  cat "$DIR/out"
  [ $rc = $want ] || { cat "$DIR/err"; fail "SIG$sig: exit $rc, expected $want"; }
  grep -q INTERRUPTED "$DIR/out" || fail "SIG$sig: report not labelled INTERRUPTED"
  python3 -c "import json,sys; d=json.load(open('$DIR/r.json')); assert d['partial'] is True" || fail "JSON partial"
  if [ -d "$DIR/ck" ]; then
    [ -z "$(ls -A "$DIR/ck")" ] || fail "SIG$sig: files left: $(ls -A "$DIR/ck")"
  fi
  rm -f "$DIR/r.json"
done
echo ok
