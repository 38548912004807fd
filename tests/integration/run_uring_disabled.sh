#!/usr/bin/env bash
# With kernel.io_uring_disabled=2, `--engine io_uring` exits non-zero
# blaming the sysctl (never "errno 0"/"Success"), and `--engine auto` falls back to psync with
# the reason in the header; `checkpoint` fails blaming io_uring. The sysctl is restored by a trap.
# Root only.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
sys=/proc/sys/kernel/io_uring_disabled
[ -e $sys ] || skip "kernel has no $sys (before 6.6)"
[ "$(id -u)" = 0 ] || skip "needs root to set kernel.io_uring_disabled"
old=$(cat $sys)
work=$(mktemp -d /var/tmp/ioprobe-uring-XXXXXX)
trap 'echo "$old" > '$sys'; rm -rf "$work"' EXIT
"$IOPROBE" gen --quiet --dir "$work/ds" --files 64 --file-size 64KiB > /dev/null || fail "gen failed"
echo 2 > $sys 2>/dev/null || skip "cannot write $sys (read-only /proc/sys in this container)"
out=$("$IOPROBE" run --quiet --dir "$work/ds" --files 64 --file-size 64KiB --engine io_uring 2>&1); rc=$?
[ $rc != 0 ] || fail "--engine io_uring with io_uring_disabled=2 exited 0"
echo "$out" | grep -q "io_uring_disabled" || fail "message does not blame the sysctl: $out"
echo "$out" | grep -qiE "errno 0|Success" && fail "message says errno 0/Success: $out"
echo "ok: --engine io_uring: exit $rc: $(echo "$out" | grep -m1 io_uring_disabled)"
"$IOPROBE" run --quiet --dir "$work/ds" --files 64 --file-size 64KiB --engine auto --json "$work/a.json" \
   > "$work/a.txt" 2>&1 || fail "--engine auto failed: $(cat "$work/a.txt")"
python3 - "$work/a.json" <<'PY' || fail "auto did not fall back with the reason"
import json, sys
t = json.load(open(sys.argv[1]))['target']
assert t['engine'] == 'psync', t['engine']
assert 'io_uring_disabled=2' in t['engine_reason'] or 'sysctl' in t['engine_reason'], t['engine_reason']
print(f"ok: --engine auto: {t['engine']} ({t['engine_reason']})")
PY
# ioprobe checkpoint: the save's failure and the raw baseline's note blame io_uring, not
# permissions or free space; nothing is left in --dir.
out=$("$IOPROBE" checkpoint --dir "$work/ck" --size 4MiB 2>&1); rc=$?
[ $rc = 1 ] || fail "checkpoint with io_uring_disabled=2: exit $rc, expected 1: $out"
echo "$out" | grep "FAILED:" | grep -q "io_uring could not be set up" || fail "the save's failure does not blame io_uring: $out"
echo "$out" | grep -qi "permission denied\|free space" && fail "the message blames permissions or space: $out"
[ ! -e "$work/ck" ] || [ -z "$(ls -A "$work/ck")" ] || fail "files left: $(ls -A "$work/ck")"
echo "ok: checkpoint: exit 1 blaming io_uring"
