#!/usr/bin/env bash
# ioprobe_test: a byte-size option is echoed with its unit and its exact bytes ("1000 B",
# "8.00 KiB (8,192 B)"), never as a bare count ("--bs 1,000" read as a thousand of something).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
scratch_dir bytesize
cd "$W"

expect2() {  # expect2 "text that must appear" "text that must not" args...
  local want=$1 not=$2; shift 2
  local out rc
  out=$("$IOPROBE" "$@" 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe $* exited $rc, expected 2; output: $out"
  echo "$out" | grep -qF -- "$want" || fail "ioprobe $*: message lacks '$want': $out"
  ! echo "$out" | grep -qF -- "$not" || fail "ioprobe $*: message has '$not': $out"
  echo "ok: $* -> $(echo "$out" | head -1)"
}

expect2 "--bs 1000 B: O_DIRECT needs a multiple of 4.00 KiB (4,096 B)" "1,000" \
  raw --filename t.bin --size 1MiB --bs 1000 --direct 1
expect2 "--bs 3.91 KiB (4,000 B): O_DIRECT needs a multiple of 4.00 KiB (4,096 B); use e.g. --bs 4k or --direct 0 (KB, MB and GB are powers of 10; --bs 4KiB is 4.00 KiB (4,096 B))" \
  "--bs 4,000" raw --filename t.bin --size 1MiB --bs 4KB --direct 1
expect2 "--size 4.00 KiB (4,096 B) is smaller than --bs 8.00 KiB (8,192 B)" "--size 4096 " \
  raw --filename t.bin --size 4KiB --bs 8KiB --direct 0
expect2 "--bs 5.86 KiB (6,000 B): O_DIRECT needs a multiple of 4.00 KiB (4,096 B)" "--bs 6000:" \
  scaling --dir "$W" --bs 6000
[ ! -e t.bin ] || fail "a refused raw run created t.bin"
echo "PASS"
