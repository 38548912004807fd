#!/usr/bin/env bash
# A root with a space and a colon, files named with spaces, colons, a leading dash, invalid UTF-8,
# Cyrillic and a newline are all read (6 samples, 6,000 B), and the JSON is valid with the invalid
# byte escaped reversibly.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-names-XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/io probe:ds"
mkdir -p "$root"
for n in 'a b.bin' 'x:y.bin' '-rf.bin' "$(printf 'V\xedctor.bin')" 'Комерція.bin' $'new\nline.bin'; do
  head -c 1000 /dev/zero > "$root/$n"
done
"$IOPROBE" --quiet --data "$root" --workers 2 --batch-size 4 --json "$work/r.json" > "$work/out.txt" \
  || fail "run exited $?: $(cat "$work/out.txt")"
python3 -m json.tool "$work/r.json" > /dev/null || fail "JSON invalid"
[ "$(json "$work/r.json" "d['results']['samples']")" = 6 ] || fail "samples != 6"
[ "$(json "$work/r.json" "d['results']['bytes']")" = 6000 ] || fail "bytes != 6000"
[ "$(json "$work/r.json" "d['dataset']['preset']")" = none ] || fail "preset != none"
json "$work/r.json" "d['target']['path']" | grep -qF 'io probe:ds' || fail "root not verbatim"
"$IOPROBE" report "$work/r.json" > /dev/null || fail "report could not re-render"
echo "ok: 6 odd names, 6000 B, valid JSON"
