#!/usr/bin/env bash
# ioprobe_test: exit codes and validation, one check per kind of defect:
# a directory that does not exist is refused (probe describes no other place instead); --numa
# names a node the host has; a directory is checked by creating a file in it before any heavy
# work (checkpoint --dir /proc built the whole state first); a parameter count is whole (1.5 was
# cut to 1); a compressed save that saved nothing does not blame the data for a fast zstd level;
# record names the file it cannot create; checkpoint names the --dir it made and removed; the
# signal line names the command; gen never overwrites or removes a file it did not write.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-valid-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

expect2() {  # expect2 "text that must appear" args...
  local want=$1; shift
  local out rc
  out=$("$IOPROBE" "$@" 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe $* exited $rc, expected 2; output: $out"
  echo "$out" | grep -qF -- "$want" || fail "ioprobe $*: message lacks '$want': $out"
  echo "ok: $* -> $(echo "$out" | head -1)"
}

expect2 "does not exist" probe --dir /nonexistent-ioprobe-dir
expect2 "does not exist" probe --dir "$work/missing/child"
# A regular file is probed where it lives, and the report says it is a file, not a directory.
echo data > "$work/afile"
out=$("$IOPROBE" probe --dir "$work/afile" 2>&1) || fail "probe --dir FILE failed: $out"
echo "$out" | grep -qF -- "--dir '$work/afile' is a file, not a directory: this describes the filesystem" ||
  fail "probe --dir FILE does not say it probed a file: $out"
expect2 "is neither a directory nor a regular file" probe --dir /dev/null
if [ ! -d /sys/devices/system/node/node7 ]; then
  expect2 "no NUMA node 7" --numa node:7 --dir ds --files 10
  [ ! -e ds ] || fail "--numa node:7 generated a dataset before refusing"
fi
expect2 "--numa 'node:x'" --numa node:x --files 10

# A directory root may "write" (access(W_OK) says yes) but where no file can be made.
if [ "$(id -u)" = 0 ]; then
  out=$(timeout 30 "$IOPROBE" checkpoint --dir /proc --size 64MiB 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "cannot create a file there" || fail "checkpoint --dir /proc: exit $rc: $out"
  echo "$out" | grep -q "generating" && fail "checkpoint --dir /proc built the state before refusing: $out"
  echo "ok: checkpoint --dir /proc refused before the state was built"
  expect2 "cannot create '/proc/x.bin': its directory '/proc' takes no new files" raw --filename /proc/x.bin --size 1M
fi

# record names the file it cannot create, then the directory.
expect2 "--out '/proc/x.trace': cannot create a file in '/proc'" record --out /proc/x.trace -- true

# report of a trace says what it is and what to do with it (not "not valid JSON").
if "$IOPROBE" record --out job.trace -- cat /etc/hostname > /dev/null 2>&1; then
  expect2 "'job.trace' is an ioprobe trace (\`ioprobe record\`), not a result document" report job.trace
fi

# A --dir made by the run (with its missing parent) is named, and said to be gone again.
"$IOPROBE" checkpoint --quiet --dir "$work/made/ck" --size 4MiB --raw-baseline off > made.txt 2>&1 \
  || fail "checkpoint into a missing --dir failed: $(cat made.txt)"
grep -qF "created for this run and removed again (empty at its end): '$work/made/ck', '$work/made'" made.txt \
  || fail "checkpoint does not say it made and removed its --dir: $(cat made.txt)"
[ ! -e "$work/made" ] || fail "the --dir the checkpoint made is still there"
"$IOPROBE" checkpoint --quiet --dir "$work/made2/ck" --size 4MiB --raw-baseline off --keep > made2.txt 2>&1 \
  || fail "checkpoint --keep into a missing --dir failed: $(cat made2.txt)"
grep -qF "created for this run, kept: '$work/made2/ck', '$work/made2'" made2.txt \
  || fail "checkpoint --keep does not say it made --dir: $(cat made2.txt)"
echo "ok: checkpoint names the directories it made: $(tail -1 made.txt)"

# gen never overwrites or removes a file it did not write: one at a path the new generation would
# write, and one put in place of a file the earlier generation listed.
"$IOPROBE" gen --quiet --files 20 --file-size 4KiB --dir gd > /dev/null 2>&1 || fail "gen of 20 files failed"
mkdir -p gd/c0020 && echo "my notes" > gd/c0020/00000020.bin
expect2 "'gd/c0020/00000020.bin' already exists where the dataset puts one of its files, and ioprobe did not write it" \
  gen --files 21 --file-size 4KiB --dir gd --regenerate
[ "$(cat gd/c0020/00000020.bin)" = "my notes" ] || fail "gen --regenerate overwrote a file it did not write"
rm gd/c0020/00000020.bin
"$IOPROBE" gen --quiet --files 20 --file-size 4KiB --dir gd > /dev/null 2>&1 || fail "gen after the refusal failed"
echo "mine" > gd/c0003/00000003.bin
expect2 "'gd/c0003/00000003.bin' is listed by the earlier generation" gen --files 22 --file-size 4KiB --dir gd --regenerate
[ "$(cat gd/c0003/00000003.bin)" = "mine" ] || fail "gen --regenerate removed a file it did not write"

expect2 "not a whole number" checkpoint --params 1.5 --dir ck
expect2 "not a whole number" checkpoint --params 7.25 --dir ck
expect2 "not a whole number" checkpoint --params 1.0000005K --dir ck
[ ! -e ck ] || fail "a refused checkpoint left its --dir"

# zstd's fast levels: a ratio of about 1 is the level's doing, not "incompressible data".
"$IOPROBE" checkpoint --quiet --dir ck2 --size 16MiB --compress zstd:-5 --raw-baseline off > z.txt 2>&1 \
  || fail "checkpoint --compress zstd:-5 failed: $(cat z.txt)"
if grep -q "ratio" z.txt && grep -q "no saving\|larger than the state" z.txt; then
  grep -q "incompressible" z.txt && fail "zstd:-5 blamed the data: $(grep ratio z.txt)"
  grep -q "fast (negative) levels" z.txt || fail "zstd:-5: the cause is not named: $(grep ratio z.txt)"
fi
echo "ok: zstd:-5 $(grep -m1 'ratio' z.txt)"
# raw's I/Os are whole --bs blocks: a --size that is not a multiple says what it leaves out.
"$IOPROBE" raw --filename tail.bin --size 10000 --rw read --bs 4k --runtime 0.2s > tail.txt 2>&1 \
  || fail "raw --size 10000 failed: $(cat tail.txt)"
grep -qF "the last 1.77 KiB (1,808 B) of the --size are not covered (less than one --bs 4.00 KiB (4,096 B) block)" tail.txt \
  || fail "raw does not say --size 10000 left a tail out: $(grep region tail.txt)"
echo "ok: raw --size 10000 --bs 4k: $(grep region tail.txt)"
# SIGTERM: every summary says why it stopped (raw said nothing).
timeout --preserve-status -s TERM 2 "$IOPROBE" raw --filename raw.bin --size 16MiB --rw randread --bs 4k --runtime 30s --json raw.json \
  > raw.txt 2>&1; rc=$?
[ $rc = 143 ] || fail "raw after SIGTERM exited $rc, expected 143: $(cat raw.txt)"
grep -q "^ioprobe raw: terminated (SIGTERM)" raw.txt || fail "the signal line does not name the command: $(cat raw.txt)"
grep -q "PARTIAL: interrupted (SIGTERM)" raw.txt || fail "raw's summary does not say it was interrupted: $(cat raw.txt)"
[ "$(json raw.json "d['raw']['results']['stop_reason']")" = "interrupted (SIGTERM)" ] || fail "raw JSON stop_reason"
echo "ok: raw after SIGTERM: $(grep -m1 PARTIAL raw.txt)"
# A saved document with a negative count (edited or damaged) is refused, naming the file and the
# field, instead of being shown as 18,446,744,073,709,551,611.
"$IOPROBE" --quiet --dir ds2 --files 40 --file-size 4KiB --workers 1 --duration 1s --json run.json > /dev/null 2>&1 \
  || fail "run for the report check failed"
python3 -c "import json; d=json.load(open('run.json')); d['results']['samples']=-5; json.dump(d, open('neg.json','w'))"
out=$("$IOPROBE" report neg.json 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "'neg.json'.results.samples: a count cannot be negative, found -5" || fail "negative count: exit $rc: $out"
python3 -c "import json; d=json.load(open('run.json')); d['results']['bytes']=2**64-5; json.dump(d, open('wrap.json','w'))"
out=$("$IOPROBE" report wrap.json 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "'wrap.json'.results.bytes: a size this large is a wrapped negative number, found 18446744073709551611" || fail "wrapped count: exit $rc: $out"
"$IOPROBE" report run.json > /dev/null || fail "the original document is refused"
echo "ok: negative and wrapped counts refused: $out"
echo "all validation checks passed"
