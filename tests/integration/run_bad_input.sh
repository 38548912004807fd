#!/usr/bin/env bash
# ioprobe_test: bad input gets one clear line naming the value, and exit code 2; nothing is
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
expect2 "--file-size" --file-size 4XB
expect2 "--batch-size" --batch-size 1.5
expect2 "--cache" --cache lukewarm
expect2 "--gpu 'tpu9'" --gpu tpu9
expect2 "unrecognised option" --frobnicate
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
[ ! -e ioprobe-data ] || fail "a failed run generated a dataset"
echo "all bad-input checks passed"
