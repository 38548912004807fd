#!/usr/bin/env bash
# `ioprobe capacity` and its time: a --budget too short for one point is a usage error (exit 2)
# found before the dataset is touched, naming the budget, the minimum and why (the runs are
# lengthened to 8 GPU steps after the warm-up); a SIGINT mid-search says the search was
# interrupted (never that its budget ran out), exit 130, with an honest partial document.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
W=$(mktemp -d /dev/shm/ioprobe-capbudget-XXXXXX)
trap 'rm -rf "$W"' EXIT
ds=(--dataset imagenet-like --files 2000 --file-size 4KiB --file-size-dist fixed --dirs 1 --batch-size 64 --workers 2
    --cache warm)

# 64 samples per step at 1 sample/s per GPU: 64 s steps, runs of 1 s + 8 x 64 s.
"$IOPROBE" capacity "${ds[@]}" --dir "$W/never" --gpu-samples-per-s 1 --budget 30s > "$W/short.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "--budget 30s with 64 s GPU steps: exit $rc, expected 2: $(cat "$W/short.out")"
grep -q -- "--budget 30s: too short for even one point" "$W/short.out" && grep -q "8 GPU steps of 64.000 s" "$W/short.out" &&
  grep -qE "give --budget [0-9]+s or more" "$W/short.out" || fail "the refusal does not say why and what: $(cat "$W/short.out")"
[ ! -e "$W/never" ] || fail "the dataset was touched before the budget was checked"
echo "ok: $(cat "$W/short.out")"

"$IOPROBE" gen --quiet "${ds[@]}" --dir "$W/ds" > /dev/null || fail "gen failed"
"$IOPROBE" capacity "${ds[@]}" --dir "$W/ds" --gpu-samples-per-s 500 --point-time 2s --repeats 1 --max-gpus 64 \
  --budget 300s --json "$W/cap.json" > "$W/cap.txt" 2> "$W/cap.err" &
pid=$!
sleep 5
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "SIGINT mid-search: exit $rc, expected 130: $(cat "$W/cap.err")"
grep -q "interrupted" "$W/cap.txt" || fail "the text does not say the search was interrupted: $(cat "$W/cap.txt")"
grep -q "budget ran out" "$W/cap.txt" && fail "an interrupted search blamed its budget: $(cat "$W/cap.txt")"
python3 - "$W/cap.json" <<'PY' || fail "capacity JSON after SIGINT: $(cat "$W/cap.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
c = d['capacity']
assert d['partial'] is True, d['partial']
assert c['stop_reason'] == 'interrupted', c['stop_reason']
assert c['bound'] == 'interrupted', c['bound']
assert 'budget' not in c['answer'], c['answer']
assert not any("left no room" in w for w in d.get("warnings", [])), d["warnings"]
for p in c['points']:
    assert p['repeats'] == 1 and p['samples_per_s'] > 0, p   # only whole, measured points
print('points measured before the signal:', [p['gpus'] for p in c['points']], '|', c['answer'])
PY
if [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null; then
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$W/cap.json" || fail "cap.json does not match the schema"
fi
echo "ok: SIGINT mid-search: exit 130, $(grep '^Capacity:' "$W/cap.txt")"
