#!/usr/bin/env bash
# ioprobe_test: every document kind ioprobe writes (run, raw, tune, checkpoint, probe) renders
# again as text, HTML and CSV with its key figures; a comparison of runs under
# different cache states says so beside the numbers.
set -uo pipefail
IOPROBE=$1
source "$(dirname "$0")/lib.sh"
W=$(mktemp -d /var/tmp/ioprobe-every.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"

"$IOPROBE" --quiet --dir ds --files 300 --file-size 16KiB --workers 1 --duration 2s --json run.json > /dev/null \
  || fail "run failed"
"$IOPROBE" --quiet --dir ds --files 300 --file-size 16KiB --workers 1 --duration 2s --cache warm --json warm.json \
  > /dev/null || fail "warm run failed"
"$IOPROBE" raw --filename raw.bin --size 8MiB --rw randread --bs 4k --runtime 1s --json raw.json > /dev/null \
  || fail "raw failed"
"$IOPROBE" tune --quiet --files 300 --dir ds --file-size 16KiB --workers 1,2 --prefetch-factors 2 --repeats 1 \
  --point-time 2s --budget 30s --json tune.json > /dev/null || fail "tune failed"
"$IOPROBE" checkpoint --quiet --dir ck --size 16MiB --raw-baseline off --json ck.json > /dev/null || fail "checkpoint failed"
"$IOPROBE" probe --dir . --json probe.json > /dev/null || fail "probe failed"

# kind: text must hold these words; the CSV must hold this field (a JSON pointer).
declare -A TEXT=([run]="samples/s" [raw]="IOPS" [tune]="num_workers" [ck]="MB/s" [probe]="io_uring")
declare -A CSV=([run]="/results/samples_per_s," [raw]="/raw/results/iops," [tune]="num_workers,prefetch_factor"
                [ck]="/checkpoint/save/" [probe]="/target/fs_type,")
for k in run raw tune ck probe; do
  out=$("$IOPROBE" report $k.json 2>&1) || fail "report $k.json (text) exited $?: $out"
  echo "$out" | grep -qF "${TEXT[$k]}" || fail "report $k.json: no '${TEXT[$k]}' in the text: $out"
  "$IOPROBE" report $k.json --html $k.html > /dev/null 2>&1 || fail "report $k.json --html failed"
  grep -q "<title>ioprobe report</title>" $k.html || fail "$k.html is not a report page"
  "$IOPROBE" report $k.json --csv $k.csv > /dev/null 2>&1 || fail "report $k.json --csv failed"
  grep -qF "${CSV[$k]}" $k.csv || fail "$k.csv lacks '${CSV[$k]}': $(head -5 $k.csv)"
  echo "ok: $k renders as text, HTML and CSV"
done
# A CSV ioprobe wrote may be written again (it carries ioprobe's mark); a file of the user's may not.
"$IOPROBE" report raw.json --csv raw.csv > /dev/null 2>&1 || fail "report --csv over its own earlier CSV was refused"
echo "user,data" > mine.csv
out=$("$IOPROBE" report raw.json --csv mine.csv 2>&1); [ $? = 2 ] || fail "report --csv replaced a user's file: $out"
grep -q "user,data" mine.csv || fail "the user's CSV changed"
# The raw figures themselves, in text and HTML: IOPS, MB/s, latency percentiles, CPU per I/O.
txt=$("$IOPROBE" report raw.json)
for w in "IOPS" "throughput" "p99.9" "per I/O"; do
  echo "$txt" | grep -qF "$w" || fail "raw text lacks '$w': $txt"
  grep -qF "$w" raw.html || fail "raw.html lacks '$w'"
done
iops=$(json raw.json "int(d['raw']['results']['iops'] + 0.5)")
grep -q "<th>IOPS</th><td>$iops</td>" raw.html || fail "raw.html does not show the document's IOPS ($iops)"
# The checkpoint chart's words are not JSON keys; long lines wrap.
grep -q "waiting for writes" ck.html && ! grep -q ">write_wait_s" ck.html || fail "ck.html labels its chart with JSON keys"
grep -q "pre{white-space:pre-wrap" ck.html || fail "ck.html: long lines are not wrapped"

# Cold against warm: the comparison says so beside the numbers.
cmp=$("$IOPROBE" report run.json warm.json --html cmp.html) || fail "report run warm: $cmp"
echo "$cmp" | grep -q "^  cache  *DIFFERS" || fail "the comparison has no cache row marked DIFFERS: $cmp"
echo "$cmp" | grep -q "warning: B was measured warm" || fail "no warning about the cache states: $cmp"
grep -q "B was measured warm" cmp.html || fail "cmp.html has no cache warning"
echo "ok: a cold/warm comparison says so"

echo "all report checks passed"
