#!/bin/bash
# ioprobe calibrate measures a Hugging Face `datasets` table (tools/bench_datasets/hf_arrow.py): 64
# files become one memory-mapped Arrow file of 64 rows (each file's bytes and its index), read
# through a transform to a 256-bin byte histogram and a label per row. The calibration document is
# written (map-style, 64 files, every batch of 8 rows 8 x 256 int64 + 8 int64 = 16448 B), the table
# holds the files' bytes, and the calibration drives `ioprobe run`.
# Skips (77) where .venv-bench/ (tools/setup --bench-venv) is missing or its Python cannot import
# datasets and torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
SRC=${IOPROBE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=$SRC/.venv-bench/bin/python
[ -x "$PY" ] || skip "no $PY (tools/setup --bench-venv makes it)"
"$PY" -c 'import torch, datasets' 2>/dev/null || skip "$PY cannot import torch and datasets (tools/setup --bench-venv installs them)"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate-hf-arrow.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 64); do head -c $((1000 + 37 * 10#$i)) /dev/urandom > "$W/data/f$i.bin"; done

HF_ARROW_CACHE=$W/cache "$IOPROBE" calibrate --dataset-factory "$SRC/tools/bench_datasets/hf_arrow.py:make" \
  --data "$W/data" --python "$PY" --batch-size 8 --samples 64 --oversubscribe none --json "$W/cal.json" \
  > "$W/out.txt" 2> "$W/err.txt"
rc=$?
[ $rc = 0 ] || fail "calibrate exit $rc: $(tail -5 "$W/err.txt")"
[ -s "$W/cal.json" ] || fail "no calibration document: $(tail -3 "$W/out.txt")"
json "$W/cal.json" '(d["code"]["dataset"], d["data"]["files"])' | grep -qxF "('map-style', 64)" \
  || fail "code/data: $(json "$W/cal.json" '(d["code"], d["data"])')"
json "$W/cal.json" 'sorted(set(r["bytes_per_batch"]["max"] for r in d["rows"]))' | grep -qxF "[16448]" \
  || fail "bytes per batch: $(json "$W/cal.json" '[r["bytes_per_batch"] for r in d["rows"]]')"
json "$W/cal.json" 'd["figures"]["worker_cpu_per_sample_us"]["value"] > 0' | grep -qx True \
  || fail "worker CPU per sample: $(json "$W/cal.json" 'd["figures"]["worker_cpu_per_sample_us"]')"
# One table, built once over the 64 files, row i holding file i's bytes.
tables=("$W"/cache/*/)
[ ${#tables[@]} = 1 ] || fail "tables built: ${tables[*]}"
"$PY" - "${tables[0]}" "$W/data" <<'PYEOF' || fail "the Arrow table does not hold the files"
import os, sys
import datasets
t = datasets.load_from_disk(sys.argv[1])
names = sorted(os.listdir(sys.argv[2]))
assert len(t) == 64, len(t)
for i in (0, 17, 63):
    with open(os.path.join(sys.argv[2], names[i]), "rb") as f:
        assert t[i]["data"] == f.read() and t[i]["label"] == i, i
PYEOF
"$IOPROBE" run --data "$W/data" --batch-size 8 --workers 1 --calibration "$W/cal.json" --json "$W/run.json" \
  > "$W/run.txt" 2>&1 || fail "run --calibration: $(tail -3 "$W/run.txt")"
json "$W/run.json" 'd["results"]["samples"]' | grep -qx 64 || fail "run read $(json "$W/run.json" 'd["results"]["samples"]') samples"
echo "PASS"
