#!/usr/bin/env bash
# `ioprobe report` of a capacity document: the text is the one the search printed, the HTML has
# its charts, --csv works; a document with a field removed or of the wrong type is refused (exit 2)
# naming the file, the field's path and what to do, never rendered with a default in its place.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
W=$(mktemp -d /dev/shm/ioprobe-capreport-XXXXXX)
trap 'rm -rf "$W"' EXIT
"$IOPROBE" capacity --quiet --dataset imagenet-like --files 400 --file-size 4KiB --file-size-dist fixed --dirs 1 \
  --dir "$W/ds" --batch-size 16 --workers 2 --cache warm --gpu-samples-per-s 50 --point-time 2s --repeats 1 \
  --max-gpus 2 --budget 60s --json "$W/cap.json" > "$W/cap.txt" 2> "$W/cap.err" || fail "capacity failed: $(cat "$W/cap.err")"

"$IOPROBE" report "$W/cap.json" --html "$W/cap.html" --csv "$W/cap.csv" > "$W/report.txt" 2> "$W/report.err" ||
  fail "report of the capacity document failed: $(cat "$W/report.err")"
diff "$W/cap.txt" "$W/report.txt" > "$W/diff" || fail "report's text differs from the search's: $(cat "$W/diff")"
grep -q 'data-chart="capacity-au"' "$W/cap.html" || fail "the HTML lacks the capacity chart"
grep -q "lacks fields" "$W/cap.html" && fail "the HTML refused a document ioprobe wrote: $(grep 'lacks fields' "$W/cap.html")"
grep -q "^/capacity/gpus_fed," "$W/cap.csv" || fail "the CSV lacks capacity.gpus_fed: $(head -5 "$W/cap.csv")"
echo "ok: report renders the search's text, HTML and CSV"

edit() {  # edit FILE PYTHON-STATEMENT-ON-d
  python3 - "$W/cap.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
edit "$W/missing.json" "del d['capacity']['points'][0]['au']"
"$IOPROBE" report "$W/missing.json" > "$W/missing.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "a point without au: exit $rc, expected 2: $(cat "$W/missing.out")"
grep -q "'$W/missing.json'.capacity.points\[0\]: missing key 'au'; the document was edited" "$W/missing.out" ||
  fail "the refusal does not name the file and the field: $(cat "$W/missing.out")"
edit "$W/mistyped.json" "d['capacity']['gpus_fed'] = 'two'"
"$IOPROBE" report "$W/mistyped.json" > "$W/mistyped.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "gpus_fed 'two': exit $rc, expected 2: $(cat "$W/mistyped.out")"
grep -q "capacity.gpus_fed: expected a non-negative integer in range, found \"two\"" "$W/mistyped.out" ||
  fail "the refusal does not name the field and the value: $(cat "$W/mistyped.out")"
echo "ok: $(tail -1 "$W/mistyped.out")"
