#!/usr/bin/env bash
# --data DIR and --file-list FILE read your own files, all of them: the options that shape a
# generated dataset (--files, --dir, --file-size, ...) would be ignored, so they are refused with
# exit 2 and a message naming both options and what to do. A preset's values for them are not
# refused (the preset describes the synthetic set the files replace).
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-own-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/own"
for i in 1 2 3; do head -c 5000 /dev/zero > "$work/own/$i.bin"; done
printf '%s\n' "$work/own/1.bin" "$work/own/2.bin" > "$work/list.txt"

expect2() {  # expect2 "text" "text2" args...: exit 2, both texts in the message
  local want=$1 want2=$2; shift 2
  local out rc
  out=$("$IOPROBE" "$@" --quiet 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe $* exited $rc, expected 2; output: $out"
  echo "$out" | grep -qF -- "$want" || fail "ioprobe $*: message lacks '$want': $out"
  echo "$out" | grep -qF -- "$want2" || fail "ioprobe $*: message lacks '$want2': $out"
  echo "ok: $* -> $(echo "$out" | head -1)"
}
expect2 "--files 200 cannot go with --data $work/own" "leave --files out" --data "$work/own" --files 200
expect2 "--dir $work/x cannot go with --data $work/own" "give one of them" --data "$work/own" --dir "$work/x"
expect2 "--file-size 1MiB cannot go with --data" "leave --file-size out" --data "$work/own" --file-size 1MiB
expect2 "--dirs 4 cannot go with --data" "leave --dirs out" --data "$work/own" --dirs 4
expect2 "--files 2 cannot go with --file-list $work/list.txt" "leave --files out" --file-list "$work/list.txt" --files 2
expect2 "--dir $work/x cannot go with --file-list" "--file-list to read your own files" --file-list "$work/list.txt" --dir "$work/x"
expect2 "--seq-len 512 cannot go with --file-list" "leave --seq-len out" --file-list "$work/list.txt" --seq-len 512
expect2 "--files 8 cannot go with --data" "leave --files out" tune --data "$work/own" --files 8
[ ! -e "$work/x" ] || fail "a refused run created --dir"

# The same options from a preset (imagenet-like sets files and file-size) are fine, and every file is read.
"$IOPROBE" --quiet --data "$work/own" --dataset imagenet-like --workers 1 --batch-size 1 --json "$work/r.json" > /dev/null \
  || fail "--data with a preset was refused"
[ "$(json "$work/r.json" "d['results']['samples']")" = 3 ] || fail "--data did not read all 3 files"
"$IOPROBE" --help | grep -q "all of them" || fail "--help does not say --data reads all the files"
echo "ok: own-data refusals"
