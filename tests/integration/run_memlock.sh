#!/usr/bin/env bash
# ioprobe_test: io_uring and the locked-memory limit, as an unprivileged user
# (nobody, via setpriv) with a low `ulimit -l`, as in many containers. Kernels before 5.12 and
# from 6.14 charge every io_uring ring to RLIMIT_MEMLOCK (engine/uring_memlock.hpp), so
#  - run, --engine auto, 8 workers, ulimit -l 64: falls back to psync, the header says why;
#  - run, --engine io_uring: exit 1 naming needed vs limit and the fix;
#  - run, 4 workers: fits (5 rings of 8 KiB), io_uring is used (the model does not over-refuse);
#  - soft 64 KiB under a 1 MiB hard limit: the soft limit is raised and io_uring runs;
#  - tune: sized for the sweep's largest point (refused like run);
#  - probe: reports the limit and what it allows;
#  - raw --engine io_uring and checkpoint, ulimit -l 4: the message names RLIMIT_MEMLOCK, not
#    the sysctl or seccomp.
# Root only (to switch user); skips without setpriv or on kernels that do not charge rings.
set -u
IOPROBE=$(readlink -f "$1")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run commands as user nobody"
command -v setpriv > /dev/null || skip "setpriv (util-linux) missing"
id nobody > /dev/null 2>&1 || skip "no user nobody"
IFS=. read -r major minor _ <<< "$(uname -r)"
v=$((major * 1000 + minor))
[ $v -lt 5012 ] || [ $v -ge 6014 ] || skip "kernel $(uname -r) charges io_uring rings to the memory cgroup, not RLIMIT_MEMLOCK"
work=$(mktemp -d /var/tmp/ioprobe-memlock-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
"$IOPROBE" gen --quiet --dir "$work/ds" --files 256 --file-size 64KiB --file-size-dist fixed > /dev/null || fail "gen failed"
chmod -R a+rX "$work/ds"
mkdir "$work/out" && chown nobody "$work/out"
# as_nobody SOFT_KIB HARD_KIB CMD...: runs CMD as nobody with those RLIMIT_MEMLOCK limits.
as_nobody() {
  local soft=$1 hard=$2
  shift 2
  setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all \
    bash -c 'ulimit -S -l "$0" && ulimit -H -l "$1" && cd "$2" && shift 2 && exec "$@"' "$soft" "$hard" "$work/out" "$@"
}
common=(run --quiet --dir "$work/ds" --files 256 --file-size 64KiB --file-size-dist fixed --cache cold
        --duration 1s --gpu-samples-per-s 100000)

as_nobody 64 64 "$IOPROBE" "${common[@]}" --json "$work/out/auto.json" > "$work/auto.txt" 2>&1 \
  || fail "auto run with ulimit -l 64 failed: $(cat "$work/auto.txt")"
python3 - "$work/out/auto.json" <<'PY' || fail "auto did not fall back with the reason: $(cat "$work/auto.txt")"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
assert d['loader']['num_workers'] == 8, d['loader']['num_workers']
assert t['engine'] == 'psync', t['engine']
r = t['engine_reason']
assert 'fallback' in r and 'RLIMIT_MEMLOCK is 64 KiB' in r and 'needs 72 KiB' in r, r
assert any('ulimit -l 72' in w for w in d['warnings']), d['warnings']
print(f"ok: auto, 8 workers, ulimit -l 64: psync ({r})")
PY
grep -q "engine.*psync (fallback: io_uring locked memory" "$work/auto.txt" || fail "header lacks the fallback: $(grep engine "$work/auto.txt")"

out=$(as_nobody 64 64 "$IOPROBE" "${common[@]}" --engine io_uring 2>&1); rc=$?
[ $rc = 1 ] || fail "--engine io_uring with ulimit -l 64: exit $rc, expected 1: $out"
for want in "needs 72 KiB" "RLIMIT_MEMLOCK is 64 KiB" "ulimit -l 72" "limits.conf" "CAP_IPC_LOCK"; do
  echo "$out" | grep -qF "$want" || fail "--engine io_uring message lacks '$want': $out"
done
echo "$out" | grep -qi "seccomp\|io_uring_disabled" && fail "--engine io_uring message blames seccomp/sysctl: $out"
echo "ok: --engine io_uring, ulimit -l 64: exit 1: $(echo "$out" | tail -1 | cut -c1-160)..."

out=$(as_nobody 64 64 "$IOPROBE" tune --quiet --dir "$work/ds" --files 256 --file-size 64KiB --file-size-dist fixed \
      --cache cold --workers 2,8 --engine io_uring 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qF "needs 72 KiB" || fail "tune --workers 2,8 --engine io_uring: exit $rc: $out"
echo "ok: tune --workers 2,8 --engine io_uring, ulimit -l 64: exit 1 naming needed vs limit"

as_nobody 64 64 "$IOPROBE" "${common[@]}" --workers 4 --engine io_uring --json "$work/out/w4.json" > "$work/w4.txt" 2>&1 \
  || fail "4 workers with ulimit -l 64 failed: $(cat "$work/w4.txt")"
[ "$(json "$work/out/w4.json" "d['target']['engine']")" = io_uring ] || fail "4 workers did not run io_uring"
[ "$(json "$work/out/w4.json" "d['results']['errors']")" = 0 ] || fail "4 workers had errors"
echo "ok: 4 workers (5 rings, 40 KiB) under ulimit -l 64: io_uring, no errors"

as_nobody 64 1024 "$IOPROBE" "${common[@]}" --engine io_uring --json "$work/out/raise.json" > "$work/raise.txt" 2>&1 \
  || fail "soft 64 KiB / hard 1 MiB failed: $(cat "$work/raise.txt")"
python3 - "$work/out/raise.json" <<'PY' || fail "soft limit not raised"
import json, sys
t = json.load(open(sys.argv[1]))['target']
assert t['engine'] == 'io_uring' and 'raised to 72 KiB' in t['engine_reason'], t['engine_reason']
print(f"ok: soft 64 KiB, hard 1 MiB: io_uring ({t['engine_reason']})")
PY

out=$(as_nobody 64 64 "$IOPROBE" probe --dir "$work/ds" 2>&1) || fail "probe failed: $out"
echo "$out" | grep "locked memory" | grep -q "64 KiB.*(8 KiB per 8-entry ring).*at most 7 loader workers" \
  || fail "probe does not say what the limit allows: $(echo "$out" | grep -A3 '^io_uring')"
echo "ok: probe: $(echo "$out" | grep 'locked memory' | sed 's/  */ /g')"

out=$(as_nobody 4 4 "$IOPROBE" raw --filename "$work/out/raw.bin" --size 4MiB --rw read --engine io_uring 2>&1); rc=$?
[ $rc = 1 ] || fail "raw --engine io_uring with ulimit -l 4: exit $rc: $out"
echo "$out" | grep -q "RLIMIT_MEMLOCK is 4 KiB" || fail "raw message does not name the memlock limit: $out"
echo "$out" | grep -qi "seccomp\|io_uring_disabled" && fail "raw message blames seccomp/sysctl: $out"
echo "ok: raw --engine io_uring, ulimit -l 4: exit 1 naming RLIMIT_MEMLOCK"

out=$(as_nobody 4 4 "$IOPROBE" checkpoint --dir "$work/out/ck" --size 4MiB 2>&1); rc=$?
[ $rc = 1 ] || fail "checkpoint with ulimit -l 4: exit $rc: $out"
echo "$out" | grep "FAILED:" | grep -q "RLIMIT_MEMLOCK is 4 KiB" || fail "checkpoint does not name the memlock limit: $out"
echo "$out" | grep "FAILED:" | grep -qi "seccomp\|io_uring_disabled" && fail "checkpoint blames seccomp/sysctl: $out"
echo "ok: checkpoint, ulimit -l 4: exit 1 naming RLIMIT_MEMLOCK"
