#!/bin/bash
# A directory ioprobe must create a file in that is missing or not writable is the user's path to
# change: exit 2 for both, the message naming the path as given (never a temporary file of
# ioprobe's) and what to do. scaling --dir (ioprobe creates the array's file there) and raw
# --filename (a new layout file) and run/gen --dir (a dataset) on a read-only tmpfs; a missing
# directory for comparison.
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_mount dir-ro tmpfs size=8m,ro

expect() {  # $1 label, $2 exit code, $3 grep -E pattern the message must match; output in $W/out
  [ "$rc" = "$2" ] || { cat "$W/out"; fail "$1: exit $rc, expected $2"; }
  grep -Eq -e "$3" "$W/out" || { cat "$W/out"; fail "$1: message does not match: $3"; }
  grep -q "ioprobe-layout\|ioprobe-scaling-probe" "$W/out" && fail "$1: names ioprobe's temporary file: $(cat "$W/out")"
  echo "ok: $1: exit $rc: $(tail -1 "$W/out")"
}

"$IOPROBE" scaling --dir "$MNT" --runtime 1s >"$W/out" 2>&1; rc=$?
expect "scaling --dir read-only" 2 "--dir '$MNT' is not writable \(Read-only file system \(EROFS\)\).*give a --dir you may write to"
"$IOPROBE" scaling --dir "$W/missing" --runtime 1s >"$W/out" 2>&1; rc=$?
expect "scaling --dir missing" 2 "--dir '$W/missing' is not a directory"

# An existing --dir for a dataset that cannot be written and holds no dataset (it named the file
# list's temporary file, exit 1).
"$IOPROBE" --dir "$MNT" --files 10 --gpu-samples-per-s 1e9 >"$W/out" 2>&1; rc=$?
expect "run --dir read-only, empty" 2 "--dir '$MNT' is not writable \(Read-only file system \(EROFS\)\) and holds no complete dataset.*choose a writable --dir"
"$IOPROBE" gen --dir "$MNT" --files 10 >"$W/out" 2>&1; rc=$?
expect "gen --dir read-only, empty" 2 "--dir '$MNT' is not writable"
grep -q 'ioprobe-tmp' "$W/out" && fail "gen names a temporary file: $(cat "$W/out")"

"$IOPROBE" raw --filename "$MNT/new.bin" --size 1MiB --rw read --runtime 1s >"$W/out" 2>&1; rc=$?
expect "raw --filename in a read-only directory" 2 \
  "cannot create '$MNT/new.bin': its directory '$MNT' is not writable \(Read-only file system \(EROFS\)\); give a path"
"$IOPROBE" raw --filename "$W/missing/new.bin" --size 1MiB --rw read --runtime 1s >"$W/out" 2>&1; rc=$?
expect "raw --filename in a missing directory" 2 \
  "cannot create '$W/missing/new.bin': its directory '$W/missing' does not exist \(No such file or directory \(ENOENT\)\)"
[ -z "$(ls -A "$MNT")" ] || fail "files left in $MNT: $(ls -A "$MNT")"
echo PASS
