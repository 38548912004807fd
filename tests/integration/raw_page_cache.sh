#!/usr/bin/env bash
# `ioprobe raw` with buffered reads (the default) on a file it just laid out: the layout leaves the
# file in the page cache, so the run evicts it first (--cache cold, the default) and says so; the
# residency at start is near 0 and the reads are labelled as from the device. --cache warm keeps
# the pages and labels the figures page cache, with a warning. Buffered writes are labelled as
# reaching the page cache, not made durable.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-rawpc-XXXXXX)
trap 'rm -rf "$work"' EXIT
case "$(stat -f -c %T "$work")" in tmpfs|ramfs) skip "$work is memory-backed: nothing to evict";; esac
f=$work/t.bin
"$IOPROBE" raw --filename "$f" --size 32MiB --rw read --bs 1M --json "$work/cold.json" > "$work/cold.txt" 2>&1 \
  || fail "cold run failed: $(cat "$work/cold.txt")"
python3 - "$work/cold.json" <<'PY' || fail "cold run: $(cat "$work/cold.txt")"
import json, sys
raw = json.load(open(sys.argv[1]))['raw']
assert raw['layout']['created'] is True
assert raw['cache'] == 'cold', raw['cache']
assert raw['page_cache_evicted'] is True, raw['page_cache_evicted']
assert 0 <= raw['page_cache_resident_fraction'] <= 0.05, f"{raw['page_cache_resident_fraction']} resident after eviction"
assert raw['reads_from'] == 'device', raw['reads_from']
print(f"ok: cold: {100 * raw['page_cache_resident_fraction']:.1f}% resident at start, reads from the device")
PY
grep -q "evicted before the run (--cache cold): the reads come from the device" "$work/cold.txt" \
  || fail "cold text lacks the eviction: $(cat "$work/cold.txt")"

# The file was just read buffered: it is (largely) resident again; warm keeps it and says so.
cat "$f" > /dev/null
"$IOPROBE" raw --filename "$f" --rw read --bs 1M --cache warm --json "$work/warm.json" > "$work/warm.txt" 2>&1 \
  || fail "warm run failed: $(cat "$work/warm.txt")"
python3 - "$work/warm.json" "$work/warm.txt" <<'PY' || fail "warm run: $(cat "$work/warm.txt")"
import json, sys
d = json.load(open(sys.argv[1])); raw = d['raw']
assert raw['cache'] == 'warm' and raw['page_cache_evicted'] is None, (raw['cache'], raw['page_cache_evicted'])
if raw['page_cache_resident_fraction'] < 0.95:
    print(f"note: only {raw['page_cache_resident_fraction']:.2f} resident after cat (memory pressure?)"); sys.exit(0)
assert raw['reads_from'] == 'page cache', raw['reads_from']
assert any('page-cache (memory) figures' in w for w in d['warnings']), d['warnings']
assert 'reads come from the page cache' in open(sys.argv[2]).read(), "warm text does not label the page cache"
print("ok: warm: reads from the page cache, warned")
PY
"$IOPROBE" report "$work/cold.json" | grep -q "evicted before the run" || fail "report FILE lacks the eviction"
echo "ok: raw evicts before buffered reads and labels where they came from"

# Buffered writes land in the page cache and raw does not fsync them: the figures say so, in the
# text, the JSON and `report` of the JSON; O_DIRECT writes go to the device.
"$IOPROBE" raw --filename "$f" --rw write --bs 1M --runtime 0.5s --json "$work/w.json" > "$work/w.txt" 2>&1 \
  || fail "buffered write failed: $(cat "$work/w.txt")"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['raw']; \
assert r['writes_to'] == 'page cache (not durable: no fsync)' and r['cache'] == 'buffered write', r" "$work/w.json" \
  || fail "buffered write: the JSON does not say the writes went to the page cache"
"$IOPROBE" report "$work/w.json" > "$work/w-report.txt" || fail "report of the buffered write failed"
for t in "$work/w.txt" "$work/w-report.txt"; do
  grep -q "writes      to the page cache, not made durable" "$t" || fail "buffered write: no page-cache line in the text"
done
"$IOPROBE" raw --filename "$f" --rw write --bs 1M --runtime 0.5s --direct 1 --json "$work/wd.json" > "$work/wd.txt" 2>&1 \
  || fail "O_DIRECT write failed: $(cat "$work/wd.txt")"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['raw']; assert r['writes_to'] == 'device (O_DIRECT)', r" \
  "$work/wd.json" || fail "O_DIRECT write: writes_to is not the device"
! grep -q "writes      to the page cache" "$work/wd.txt" || fail "O_DIRECT write labelled as page cache"
echo "ok: buffered writes are labelled page cache, not durable; O_DIRECT writes device"
