#!/bin/bash
# Long-running checkpoint mode (--repeat N, --duration T): saves again and again into one
# directory, each published then removed by ioprobe before the next (a file of the user's in the
# same directory is left alone), one line per save on stderr (none with --quiet), a summary with
# count and min / median / max MB/s; Ctrl-C mid-series: partial summary, exit 130, no file under
# a final name and no temporary file.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckrep.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The documents match reports/result.schema.json (where python3-jsonschema is installed).
schema_ok() {
  [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null || { echo "note: schema check not run"; return 0; }
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$1" || fail "$1 does not match reports/result.schema.json"
}
mkdir "$work/ck" && echo "the user's own file" > "$work/ck/notes.txt"

# 1. --repeat 3 --restore into a directory that holds a file of the user's.
"$IOPROBE" checkpoint --dir "$work/ck" --size 16MiB --repeat 3 --restore --raw-baseline off --json "$work/r.json" \
  > "$work/r.out" 2> "$work/r.err" || fail "--repeat 3: exit $?: $(cat "$work/r.err")"
cat "$work/r.out" "$work/r.err"
[ "$(grep -c '^ioprobe checkpoint: save [1-3]/3: .* MB/s (to durable); restore .* MB/s$' "$work/r.err")" = 3 ] || fail "not 3 per-save lines"
grep -q "^repeated saves: 3 completed" "$work/r.out" || fail "no summary"
grep -q "save MB/s (10^6 B/s, logical bytes / time to durable): min .* median .* max" "$work/r.out" || fail "no min/median/max"
[ "$(ls -A "$work/ck")" = notes.txt ] || fail "directory holds $(ls -A "$work/ck"), expected only the user's notes.txt"
grep -q "the user's own file" "$work/ck/notes.txt" || fail "the user's file changed"
python3 - "$work/r.json" <<'PY' || fail "JSON checks (--repeat)"
import json, statistics, sys
d = json.load(open(sys.argv[1])); s = d["checkpoint"]["series"]
assert d["partial"] is False and s["saves_completed"] == 3 and s["stopped_by"] == "repeat" and s["repeat_requested"] == 3, s
rates = []
for i, x in enumerate(s["saves"], 1):
    assert x["index"] == i and x["logical_bytes"] == 16 << 20, x
    assert abs(x["write_bytes_per_s"] - x["logical_bytes"] / x["time_to_durable_s"]) <= 1e-6 * x["write_bytes_per_s"], x
    assert x["restore_bytes_per_s"] and x["restore_bytes_per_s"] > 0, x
    rates.append(x["write_bytes_per_s"])
w = s["write_bytes_per_s"]
assert w["min"] == min(rates) and w["max"] == max(rates) and abs(w["median"] - statistics.median(rates)) < 1e-6, (w, rates)
assert d["checkpoint"]["restore"]["ok"], "the last save was restored and verified"
print("ok: 3 saves, figures consistent:", [round(r / 1e6, 1) for r in rates], "MB/s")
PY

# 2. --duration 2s --quiet: no per-save lines; stops on the time limit, after at least 2 s.
"$IOPROBE" checkpoint --quiet --dir "$work/ck" --size 8MiB --duration 2s --raw-baseline off --json "$work/d.json" \
  > "$work/d.out" 2> "$work/d.err" || fail "--duration: exit $?: $(cat "$work/d.err")"
grep -q "^ioprobe checkpoint: save" "$work/d.err" && fail "--quiet printed per-save lines"
python3 - "$work/d.json" <<'PY' || fail "JSON checks (--duration)"
import json, sys
s = json.load(open(sys.argv[1]))["checkpoint"]["series"]
assert s["stopped_by"] == "duration" and s["saves_completed"] >= 1 and s["elapsed_s"] >= 2.0, s
assert s["repeat_requested"] is None and s["duration_limit_s"] == 2.0, s
print(f"ok: --duration 2s: {s['saves_completed']} saves in {s['elapsed_s']:.2f} s")
PY
[ "$(ls -A "$work/ck")" = notes.txt ] || fail "after --duration the directory holds $(ls -A "$work/ck")"

# 3. SIGINT mid-series: slow saves (4 KiB writes at depth 1), signal after the second save.
"$IOPROBE" checkpoint --dir "$work/ck" --size 64MiB --io-size 4KiB --io-depth 1 --duration 10m --raw-baseline off \
  --json "$work/i.json" > "$work/i.out" 2> "$work/i.err" &
pid=$!
for _ in $(seq 1 1200); do [ "$(grep -c '^ioprobe checkpoint: save ' "$work/i.err")" -ge 2 ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.05; done
sleep 0.1
kill -INT $pid
wait $pid; rc=$?
cat "$work/i.out"
[ $rc = 130 ] || fail "SIGINT: exit $rc, expected 130: $(tail -3 "$work/i.err")"
grep -q "INTERRUPTED" "$work/i.out" && grep -q "^repeated saves: [0-9]* completed" "$work/i.out" || fail "no partial summary"
python3 - "$work/i.json" <<'PY' || fail "JSON checks (SIGINT)"
import json, sys
d = json.load(open(sys.argv[1])); s = d["checkpoint"]["series"]
assert d["partial"] is True and s["stopped_by"] == "interrupted" and s["saves_completed"] >= 2, s
assert s["write_bytes_per_s"]["min"] > 0, s
print(f"ok: interrupted after {s['saves_completed']} saves; partial summary written")
PY
[ "$(ls -A "$work/ck")" = notes.txt ] || fail "after SIGINT the directory holds $(ls -A "$work/ck")"
for f in r d i; do schema_ok "$work/$f.json"; done
echo PASS
