#!/usr/bin/env bash
# Resource limits are found in the preflight and named with numbers.
#  - RLIMIT_NOFILE 20 with --workers 64: stops before generating anything, needed vs limit.
#  - a 16 MiB tmpfs and a ~100 MiB dataset: stops with needed vs available space, and leaves
#    nothing that looks like a complete dataset (root only, for the mount).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-res-XXXXXX)
mnt=
trap '[ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$work"' EXIT

out=$(ulimit -n 20; "$IOPROBE" run --quiet --dir "$work/ds" --files 100 --workers 64 2>&1); rc=$?
[ $rc != 0 ] || fail "ulimit -n 20 --workers 64 exited 0"
echo "$out" | grep -qE "need about [0-9]+ descriptors, RLIMIT_NOFILE is 20" || fail "no numbers in: $out"
[ ! -e "$work/ds" ] || fail "a dataset was started before the open-files preflight"
echo "ok: RLIMIT_NOFILE: exit $rc: $out"

[ "$(id -u)" = 0 ] || skip "needs root to mount a 16 MiB tmpfs (the RLIMIT_NOFILE part passed)"
mkdir "$work/small" && mount -t tmpfs -o size=16m ioprobe-small "$work/small" 2>/dev/null || skip "cannot mount tmpfs"
mnt="$work/small"
out=$("$IOPROBE" gen --quiet --dir "$mnt/ds" --files 100 --file-size 1MiB --file-size-dist fixed 2>&1); rc=$?
[ $rc != 0 ] || fail "gen of 100 MiB into 16 MiB exited 0"
echo "$out" | grep -qE "not enough space in .*need [0-9.]+ [MG]iB.*available [0-9.]+ [KM]iB" || fail "no needed/available numbers: $out"
[ ! -e "$mnt/ds/.ioprobe-dataset.json" ] || fail "a manifest was written although the space check failed"
[ -z "$(ls -A "$mnt")" ] || fail "left behind: $(ls -A "$mnt")"
echo "ok: disk too small: exit $rc: $out"

# A result that cannot be written (the filesystem filled up) is named by its --json path, not the
# temporary's, and leaves neither a half-written document nor the temporary.
"$IOPROBE" gen --quiet --dir "$work/tinyds" --files 8 --file-size 4KiB --file-size-dist fixed >/dev/null 2>&1 \
  || fail "gen of the tiny dataset failed"
dd if=/dev/zero of="$mnt/fill" bs=1M 2>/dev/null   # fills the 16 MiB tmpfs (dd stops on ENOSPC)
out=$("$IOPROBE" run --quiet --data "$work/tinyds" --gpu-samples-per-s 1e6 --json "$mnt/r.json" 2>&1); rc=$?
[ $rc = 1 ] || fail "a result on a full filesystem: exit $rc, not 1: $out"
echo "$out" | grep -qF "$mnt/r.json: " && echo "$out" | grep -q "nothing was written" \
  || fail "the full-disk error does not name the --json path and say nothing was written: $out"
[ -z "$(ls "$mnt" | grep -v '^fill$')" ] || fail "left behind on the full filesystem: $(ls -A "$mnt")"
echo "ok: --json on a full filesystem: $(echo "$out" | grep "r.json" | head -1)"

