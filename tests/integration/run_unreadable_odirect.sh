#!/usr/bin/env bash
# A file this user cannot open says nothing about the filesystem's O_DIRECT: run --data over a
# directory whose first file is chmod 000 (as nobody, who cannot open it) keeps O_DIRECT (it was
# "O_DIRECT refused on ext4: EACCES", the whole run buffered, and `--direct on` refused), and the
# unreadable file is counted as failed reads. Root only (to switch user); skips on a filesystem
# without O_DIRECT (tmpfs before 6.6).
set -u
IOPROBE=$(readlink -f "$1")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run commands as user nobody"
command -v setpriv > /dev/null || skip "setpriv (util-linux) missing"
id nobody > /dev/null 2>&1 || skip "no user nobody"
work=$(mktemp -d /var/tmp/ioprobe-odirect-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/d"
for i in 0 1 2 3 4 5; do head -c 65536 /dev/urandom > "$work/d/f$i.bin"; done
chmod 755 "$work" "$work/d"; chmod 644 "$work"/d/*.bin; chmod 000 "$work/d/f0.bin"
"$IOPROBE" run --data "$work/d" --direct on --duration 0.5s --gpu-samples-per-s 1e6 --quiet > /dev/null 2>&1 ||
  skip "$work: O_DIRECT is not accepted here even for root"
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all "$@"; }
out=$(as_nobody "$IOPROBE" run --data "$work/d" --direct on --duration 1s --gpu-samples-per-s 1e6 --quiet 2>&1); rc=$?
echo "$out" | grep -q "O_DIRECT not supported" && fail "--direct on refused over one unreadable file: $out"
echo "$out" | grep -q "O_DIRECT refused" && fail "one unreadable file was taken for the filesystem's answer: $out"
[ $rc = 1 ] || fail "a run with an unreadable file: exit $rc, expected 1 (read errors): $out"
echo "$out" | grep -qE "cache +cold: O_DIRECT" || fail "the run did not read with O_DIRECT: $out"
echo "$out" | grep -qE "ERRORS +[0-9,]+ failed reads of 1 file" || fail "the unreadable file is not counted: $out"
echo "ok: $(echo "$out" | grep -E 'cache +cold')"
