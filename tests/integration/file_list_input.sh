#!/usr/bin/env bash
# ioprobe_test: --file-list and --data input: a CRLF list with comments and
# blank lines reads exactly the listed files; a file listed twice is warned about (its second
# read comes from the page cache); a missing list or directory says "does not exist"; a control
# byte in a path never reaches the terminal raw.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-flist-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir own && head -c 5000 /dev/zero > own/a.bin && head -c 7000 /dev/zero > own/b.bin

printf '# dataset for job 12\r\n\r\n%s\r\n   \r\n%s\r\n' "$PWD/own/a.bin" "$PWD/own/b.bin" > crlf.txt
out=$("$IOPROBE" --quiet --file-list crlf.txt --workers 1 --batch-size 2 --json crlf.json 2>&1); rc=$?
[ $rc = 0 ] || fail "CRLF list with comments exited $rc: $out"
[ "$(json crlf.json "d['results']['samples']")" = 2 ] && [ "$(json crlf.json "d['results']['bytes']")" = 12000 ] \
  || fail "CRLF list: not exactly the two listed files were read: $out"
echo "ok: CRLF list with comments and blank lines reads the 2 listed files"

printf '%s\n' "$PWD/own/a.bin" "$PWD/own/./a.bin" "$PWD/own/b.bin" > dup.txt
out=$("$IOPROBE" --quiet --file-list dup.txt --workers 1 --batch-size 3 --json dup.json 2>&1); rc=$?
[ $rc = 0 ] || fail "list with a duplicate exited $rc: $out"
echo "$out" | grep -q "1 of 3 entries name a file already listed" || fail "no duplicate warning: $out"
[ "$(json dup.json "d['dataset']['duplicates']")" = 1 ] || fail "dataset.duplicates is not 1"
echo "ok: duplicate path warned about"

ln own/a.bin own/hard.bin
out=$("$IOPROBE" --quiet --data own --workers 1 --batch-size 3 --json hard.json 2>&1)
echo "$out" | grep -q "hard links or symlinks" || fail "no hard-link warning for --data: $out"
echo "ok: hard link in --data warned about"

for args in "--file-list nosuch.txt" "--data nosuch-dir"; do
  out=$("$IOPROBE" --quiet $args 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "does not exist" || fail "$args: exit $rc, $out"
  echo "ok: $args -> $(echo "$out" | head -1)"
done
out=$("$IOPROBE" --quiet --file-list own 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "is a directory" || fail "--file-list DIR: exit $rc, $out"

# A list naming a missing file whose name holds ESC and CR: the error shows \x1B and \x0D.
printf '%s\n' "$PWD/own/a.bin" "$PWD/own/gone"$'\x1b'"[2J"$'\r'"x.bin" > ctl.txt
out=$("$IOPROBE" --quiet --file-list ctl.txt --workers 1 --batch-size 2 2>&1)
echo "$out" | grep -q $'\x1b' && fail "a raw ESC reached the terminal: $(echo "$out" | od -c | head)"
echo "$out" | grep -q $'\r' && fail "a raw CR reached the terminal"
echo "$out" | grep -qF 'gone\x1B[2J\x0Dx.bin' || fail "the missing file is not named with escapes: $out"
echo "ok: control bytes in a path are escaped"
# A FIFO, /dev/zero and a directory in the list: left out with a warning, never opened (a FIFO's
# open blocked a worker until a writer came, and one signal could not end the run).
mkfifo own.fifo
printf '%s\n' "$PWD/own.fifo" "$PWD/own/a.bin" /dev/zero "$PWD/own" "$PWD/own/b.bin" > odd.txt
out=$(timeout -s KILL 60 "$IOPROBE" --quiet --file-list odd.txt --workers 2 --batch-size 2 --epochs 1 --cache warm \
  --json odd.json 2>&1); rc=$?
[ $rc = 0 ] || fail "a list with a FIFO, /dev/zero and a directory: exit $rc (137: it hung), $out"
echo "$out" | grep -q "skipped 3 of the 5 listed paths: not regular files (first: '$PWD/own.fifo': a FIFO" ||
  fail "the skipped paths are not named: $out"
[ "$(json odd.json "d['results']['samples']")" = 2 ] || fail "expected the 2 regular files read"
[ "$(json odd.json "d['results']['errors']")" = 0 ] || fail "a skipped path counted as a read error"
printf '%s\n' "$PWD/own.fifo" > fifo-only.txt
out=$(timeout -s KILL 30 "$IOPROBE" --quiet --file-list fifo-only.txt 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "none of its 1 paths is a regular file" || fail "a list of a FIFO only: exit $rc, $out"
echo "ok: a FIFO, /dev/zero and a directory in a list are skipped, named"
echo "all file-list checks passed"
