#!/bin/bash
# ioprobe checkpoint: option combinations that are refused before any work (exit 2, the values
# named, nothing written) and ones that run with a warning.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckpt-refusals.XXXXXX")
trap 'rm -rf "$W"' EXIT
refused() {  # expected message fragment, then the options
  local want=$1; shift
  "$IOPROBE" checkpoint --dir "$W/ck" --raw-baseline off "$@" >"$W/out" 2>&1
  local rc=$?
  echo "--- $* -> exit $rc"; cat "$W/out"
  [ $rc = 2 ] || fail "$*: exit $rc, expected 2"
  grep -qF -- "$want" "$W/out" || fail "$*: no '$want' in the message"
  [ ! -e "$W/ck" ] || [ -z "$(ls -A "$W/ck")" ] || fail "$*: files written: $(ls -A "$W/ck")"
}
warned() {  # expected warning fragment, then the options
  local want=$1; shift
  "$IOPROBE" checkpoint --dir "$W/ck" --raw-baseline off --quiet "$@" >"$W/out" 2>&1
  local rc=$?
  echo "--- $* -> exit $rc"; grep warning "$W/out"
  [ $rc = 0 ] || fail "$*: exit $rc"
  grep -qF -- "$want" "$W/out" || fail "$*: no warning '$want'"
}
refused "above half of this host's memory" --size 8MiB --io-size 1GiB --io-depth 64
mkdir "$W/ck"
refused "is where rank 0's shard goes" --size 8MiB --json "$W/ck/__0_0.distcp"
rmdir "$W/ck"
refused "is above 1e15" --params 1e20
refused "ranks in the job: at most" --params 8B --tp 4096 --pp 4096 --dp 4096
refused "is not a multiple of tp 3 x pp 1" --params 8B --tp 3 --ranks 8
refused "only with --restore" --size 8MiB --restore-threads 2
refused "only with --async" --size 8MiB --step-time 1s
refused "below 1 ms" --size 8MiB --async --step-time 0
refused "only with --compress-pool zstd" --size 8MiB --compress zstd:1 --zstd-job-size 1MiB
refused "with --compress none there are none" --size 8MiB --compress-threads 4
refused "chunks per rank (an index of" --size 2GiB --chunk-size 16
refused "both give the parameter count" --model llama3-8b --params 70B
refused "nothing to decompress" --size 8MiB --restore --restore-threads 2
warned "has no effect with --compress-pool zstd" --size 8MiB --compress zstd:1 --compress-pool zstd --restore --restore-threads 1
warned "holds 1 job(s) of zstd's job size 2.00 MiB (2,097,152 B) at level 1: 1 of 2 workers busy per chunk" \
  --size 8MiB --compress zstd:1 --compress-pool zstd --compress-threads 2 --chunk-size 2MiB
# zstd sizes its jobs from the chunk: the advice is a chunk size at which both workers get a job.
warned "use chunks of at least 4.00 MiB (4,194,304 B) (at that size zstd's jobs are 2.00 MiB" \
  --size 8MiB --compress zstd:1 --compress-pool zstd --compress-threads 2 --chunk-size 256KiB
warned "--zstd-job-size 100.00 KiB (102,400 B) is below zstd's minimum job size: zstd uses 512.00 KiB" \
  --size 8MiB --compress zstd:1 --compress-pool zstd --compress-threads 2 --chunk-size 1MiB --zstd-job-size 100KiB
warned "every chunk adds a 48 B index entry" --size 1MiB --chunk-size 1KiB --compress zstd:1
grep -q "ratio 0\.[0-9]*x -- larger than the state (.*% more): 1024 chunks of" "$W/out" \
  || fail "1 KiB zstd chunks: the ratio line does not say the shard grew and why"
cpus=$(nproc)
warned "compression workers ($((cpus * 2)) per rank) on $cpus allowed CPUs" --size 8MiB --compress zstd:1 --compress-threads $((cpus * 2))
warned "restore decompression workers ($((cpus + 1)) per rank)" --size 8MiB --compress zstd:1 --restore --restore-threads $((cpus + 1))
# A temporary file of an ioprobe that was killed: named in a warning, never removed.
sleep 100 & dead=$!; kill $dead; wait $dead 2>/dev/null
mkdir -p "$W/ck"; touch "$W/ck/__0_0.distcp.ioprobe-tmp.$dead"
warned "__0_0.distcp.ioprobe-tmp.$dead was left by ioprobe process $dead" --size 1MiB
[ -e "$W/ck/__0_0.distcp.ioprobe-tmp.$dead" ] || fail "the killed run's temporary file was removed"
# A killed 4-rank run leaves a file per rank: one warning names the first 3 and counts the rest.
for r in 1 2 3; do touch "$W/ck/__${r}_0.distcp.ioprobe-tmp.$dead"; done
warned "__2_0.distcp.ioprobe-tmp.$dead and 1 more were left by ioprobe process $dead" --size 1MiB
n=$(grep -c '^ioprobe checkpoint: warning: .*left by ioprobe' "$W/out")
[ "$n" = 1 ] || fail "leftover files: $n warnings on stderr, expected 1"
rm -rf "$W/ck"
# A leftover whose PID now belongs to another program (PID reuse after a kill) is named as well.
sleep 100 & alive=$!
mkdir -p "$W/ck"; touch "$W/ck/__0_0.distcp.ioprobe-tmp.$alive"
warned "__0_0.distcp.ioprobe-tmp.$alive was left by ioprobe process $alive" --size 1MiB
kill $alive; wait $alive 2>/dev/null
rm -rf "$W/ck"
# A temporary file its process still holds open (a save in progress) is not a leftover.
mkdir -p "$W/ck"
bash -c 'exec 7<>"$0.$$"; sleep 100' "$W/ck/__0_0.distcp.ioprobe-tmp" & holder=$!
for _ in $(seq 50); do [ -e "$W/ck/__0_0.distcp.ioprobe-tmp.$holder" ] && break; sleep 0.1; done
"$IOPROBE" checkpoint --dir "$W/ck" --raw-baseline off --quiet --size 1MiB >"$W/out" 2>&1 || { cat "$W/out"; fail "run beside a held temporary file failed"; }
grep -q "left by ioprobe" "$W/out" && { kill $holder; fail "a temporary file held open by process $holder was called a leftover"; }
kill $holder; wait $holder 2>/dev/null
rm -rf "$W/ck"
# --json inside a --dir this run creates; params is null for a state sized by --size.
"$IOPROBE" checkpoint --dir "$W/new/ck" --size 1MiB --raw-baseline off --quiet --json "$W/new/ck/result.json" >"$W/out" 2>&1 \
  || { rc=$?; cat "$W/out"; fail "--json inside a new --dir: exit $rc"; }
[ "$(ls -A "$W/new/ck")" = result.json ] || fail "--json inside a new --dir: files there: $(ls -A "$W/new/ck")"
"$IOPROBE" checkpoint --dir "$W/new2/ck" --size 1MiB --raw-baseline off --quiet --json "$W/new2/result.json" >"$W/out" 2>&1 \
  || { rc=$?; cat "$W/out"; fail "--json in a new --dir's new parent: exit $rc"; }
[ "$(ls -A "$W/new2")" = result.json ] || fail "--json in a new --dir's new parent: files there: $(ls -A "$W/new2")"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["checkpoint"]["state"]["params"]; sys.exit(p is not None)' \
  "$W/new/ck/result.json" || fail "state.params is not null for a --size run"
echo "ok: refusals and warnings"
