#!/usr/bin/env bash
# Bad input gets one clear line naming the value, and exit code 2; nothing is
# written into directories ioprobe did not create.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-bad-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

expect2() {  # expect2 "text that must appear" args...
  local want=$1; shift
  local out rc
  out=$("$IOPROBE" --quiet "$@" 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe $* exited $rc, expected 2; output: $out"
  echo "$out" | grep -qF -- "$want" || fail "ioprobe $*: message lacks '$want': $out"
  echo "ok: $* -> $(echo "$out" | head -1)"
}
expect2 "unknown dataset preset 'nosuch'" --dataset nosuch
expect2 "--workers" --workers -3
expect2 "--workers" --workers abc
expect2 "--workers: 0 is out of range" --workers 0
expect2 "--files: 99999999999999999999 is out of range; give a value from 1 to 100,000,000" --files 99999999999999999999
expect2 "--file-size: 99999999999PB is out of range; give a size from 1 B to" --file-size 99999999999PB
expect2 "--file-size: '1e3' has an exponent, which a size does not take; a size is a whole number of bytes or a number with a unit, e.g. 4096, 4k, 115KB, 1MiB" --file-size 1e3
expect2 "--file-size" --file-size 4XB
expect2 "--batch-size" --batch-size 1.5
expect2 "--cache" --cache lukewarm
expect2 "--calibration is empty" --calibration ''
expect2 "--record-size-dist: 'foo'" --dataset resnet50-tfrecord-like --record-size-dist foo
expect2 "--file-size-dist: 'bar'" --file-size-dist bar
expect2 "--gpu 'tpu9'" --gpu tpu9
expect2 "unrecognised option" --frobnicate
expect2 "--drop-last true with 10 samples per rank and --batch-size 256 gives no batch at all" --files 10 --drop-last true
# A stray word is named, not the value of the option before it.
expect2 "unexpected argument 'junk'" --workers 8 junk
expect2 "unexpected argument 'parsecs'" --duration 5 parsecs
out=$("$IOPROBE" checkpoint --size 1GiB junk 2>&1); [ $? = 2 ] && echo "$out" | grep -q "unexpected argument 'junk'" \
  || fail "checkpoint --size 1GiB junk: $out"
out=$("$IOPROBE" frob 2>&1); [ $? = 2 ] && echo "$out" | grep -q "unknown subcommand" || fail "frob: $out"
expect2 "--duration" --duration 5parsecs

mkdir foreign && echo precious > foreign/keep.txt
expect2 "not empty and was not created by ioprobe" --dir foreign --files 10
[ "$(cat foreign/keep.txt)" = precious ] && [ "$(ls -A foreign | wc -l)" = 1 ] || fail "foreign dir was touched"
echo x > afile
expect2 "is a file" --dir afile --files 10
expect2 "parent directory does not exist" --dir missing/child --files 10
expect2 "--data" --data "$work/does-not-exist"
printf '[oops\nfiles = 5\n' > bad.ini
expect2 "bad.ini" --dataset ./bad.ini
printf 'nosuchkey = 5\n' > bad2.ini
expect2 "bad2.ini" --dataset ./bad2.ini
if [ "$(id -u)" != 0 ]; then
  mkdir ro && chmod 555 ro
  expect2 "cannot create" --dir ro/x --files 10
fi
"$IOPROBE" --help | grep -q -- "--prefetch-factor" || fail "--help lacks --prefetch-factor"
"$IOPROBE" --version | grep -q "ioprobe" || fail "--version"
out=$("$IOPROBE" --version junk 2>&1); [ $? = 2 ] && echo "$out" | grep -q "takes no argument (got 'junk')" \
  || fail "--version junk: $out"
expect2 "checkpoint preset" --dataset llama3-8b
expect2 "--gpu 'tpu9' is not in the accelerator catalog" --gpu tpu9
mkdir outdir
expect2 "--json 'outdir' is a directory" --json outdir --files 10
expect2 "a parent of it is a file" --dir afile/sub --files 10
out=$("$IOPROBE" report outdir 2>&1); [ $? = 2 ] && echo "$out" | grep -q "not a regular file" || fail "report on a directory: $out"
# Numbers are decimal: hexadecimal was read by strtod (--au-target 0x50 = 80, --params 0x10B = 16e9).
expect2 "--au-target: '0x50' is not a decimal number" --au-target 0x50 --files 10
# --au-target is a percentage: a fraction-style value is refused, not taken as 1.5%.
expect2 "--au-target 1.5: a percentage" --au-target 1.5 --files 10
expect2 "--file-size: 0 is out of range" --file-size 0 --file-size-dist fixed --files 10
expect2 "--files: '0x10' is written in base 16" --files 0x10
out=$("$IOPROBE" checkpoint --params 0x10B 2>&1); [ $? = 2 ] && echo "$out" | grep -q "params: '0x10B' is not a parameter count" \
  || fail "checkpoint --params 0x10B: $out"
# --gpu and a rate of one's own both set the GPU's step time: refused, not --gpu silently dropped.
expect2 "--gpu h100 and --step-time 0.1 both set the GPU's step time" --gpu h100 --step-time 0.1 --files 10
expect2 "--gpu h200 and --gpu-samples-per-s 500 both set" --gpu h200 --gpu-samples-per-s 500 --files 10
# More GPU ranks than samples: ranks that read nothing are refused, naming the counts, before generation.
expect2 "--gpus 1000 with 402 samples: 598 rank(s) would get no samples" --gpus 1000 --workers 1 --files 402
# The commands without progress lines say which ones take --quiet; raw and scaling take it.
out=$("$IOPROBE" probe --quiet 2>&1); [ $? = 2 ] && echo "$out" | grep -q "takes no --quiet (the commands with" \
  || fail "probe --quiet: $out"
"$IOPROBE" raw --quiet --filename "$work/raw.bin" --size 1M --bs 64k > raw.txt 2>&1 || fail "raw --quiet: $(cat raw.txt)"
[ ! -e ioprobe-data ] || fail "a failed run generated a dataset"

# A file that cannot be read is counted and named, the run goes on, and the exit code says so (1).
mkdir -p own && head -c 5000 /dev/zero > own/a.bin && head -c 7000 /dev/zero > own/b.bin
printf '%s\n' "$PWD/own/a.bin" "$PWD/own/missing.bin" "$PWD/own/b.bin" > list.txt
out=$("$IOPROBE" --quiet --file-list list.txt --workers 1 --batch-size 2 --json fl.json 2>&1); rc=$?
[ $rc = 1 ] || fail "file list with a missing file exited $rc, expected 1: $out"
echo "$out" | grep -q "missing.bin" || fail "the missing file is not named: $out"
[ "$(json fl.json "d['results']['samples']")" = 2 ] && [ "$(json fl.json "d['results']['bytes']")" = 12000 ] \
  || fail "the readable files were not all read"
echo "ok: missing file named, 2 samples read, exit 1"
echo "all bad-input checks passed"
