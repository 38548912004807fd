#!/usr/bin/env bash
# The HTML report of a run, a tune and a checkpoint renders in headless Chromium: each page's DOM
# holds its inline SVG charts (timeline, latency, workers, checkpoint) and the screenshot is not blank.
set -uo pipefail
IOPROBE=$1
source "$IOPROBE_SOURCE_DIR/tests/integration/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (apt-get install chromium)"
W=$(mktemp -d /var/tmp/ioprobe-html.XXXXXX)
trap 'rm -rf "$W"' EXIT
chrome() { timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$W/profile" "$@" 2>/dev/null; }

"$IOPROBE" run --quiet --files 400 --dir "$W/ds" --workers 2 --json "$W/run.json" > /dev/null || fail "run failed"
"$IOPROBE" tune --quiet --files 400 --dir "$W/ds" --workers 1,2 --prefetch-factors 2 --repeats 2 --point-time 2s \
  --budget 60s --json "$W/tune.json" --html "$W/tune.html" --csv "$W/tune.csv" > "$W/tune.txt" || fail "tune failed"
grep -q "DataLoader(num_workers=" "$W/tune.txt" || fail "tune printed no DataLoader recommendation"
grep -q "no NUMA binding needed" "$W/tune.txt" || fail "single-node machine: expected 'no NUMA binding needed'"
[ "$(wc -l < "$W/tune.csv")" -eq 3 ] || fail "tune.csv: expected a header and 2 points"
"$IOPROBE" report "$W/run.json" --html "$W/run.html" > /dev/null || fail "report --html (run) failed"
"$IOPROBE" checkpoint --dir "$W/ck" --size 32MiB --chunk-size 8MiB --json "$W/ckpt.json" > /dev/null 2>"$W/ckpt.err" \
  || fail "checkpoint failed: $(cat "$W/ckpt.err")"
"$IOPROBE" report "$W/ckpt.json" --html "$W/ckpt.html" > /dev/null || fail "report --html (checkpoint) failed"
"$IOPROBE" report "$W/run.json" "$W/tune.json" --html "$W/cmp.html" > "$W/cmp.txt" || fail "report A B failed"
grep -q "B/A" "$W/cmp.txt" || fail "comparison has no B/A column"

if python3 -c "import jsonschema" 2>/dev/null; then
  for f in run.json tune.json ckpt.json; do
    python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
      "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$W/$f" || fail "$f does not match reports/result.schema.json"
  done
else
  echo "note: python3-jsonschema absent; schema validation not run"
fi

check() {  # page, then the data-chart names that must be in its DOM
  local page=$1; shift
  chrome --dump-dom "file://$W/$page" > "$W/$page.dom" || fail "chromium could not load $page"
  for c in "$@"; do
    grep -q "<svg[^>]*data-chart=\"$c\"" "$W/$page.dom" || fail "$page: no <svg data-chart=\"$c\"> in the rendered DOM"
  done
  grep -qi "parsererror\|lacks fields" "$W/$page.dom" && fail "$page: rendering error in the DOM"
  chrome --screenshot="$W/$page.png" --window-size=1100,2400 "file://$W/$page" > /dev/null
  python3 - "$W/$page.png" <<'PY' || fail "$page: screenshot blank or missing"
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
# Decode IDAT and count distinct bytes: a blank page compresses to a handful of values.
pos, idat = 8, b''
while pos < len(data):
    n, t = struct.unpack('>I4s', data[pos:pos+8]); idat += data[pos+8:pos+8+n] if t == b'IDAT' else b''; pos += 12 + n
raw = zlib.decompress(idat)
assert len(set(raw[:2_000_000])) > 20, 'blank'
PY
  echo "ok: $page renders $*"
}
check run.html timeline latency
check tune.html workers timeline latency
check ckpt.html checkpoint
check cmp.html timeline workers
echo PASS
