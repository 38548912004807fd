#!/bin/bash
# --content jpeg and --decode jpeg: `gen --content jpeg` writes real JPEG files of exactly the
# listed sizes that PIL (/usr/bin/python3's python3-pil) decodes, every one; `run --decode jpeg`
# reuses the set (its manifest names the content) and reports the measured decode cost in the
# JSON and the text; --decode jpeg on synthetic or non-JPEG files is refused (exit 2) naming them.
# Skips (77) where no python3 imports PIL.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import PIL.Image' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
[ -n "$PY" ] || skip "no python3 imports PIL (Debian: python3-pil)"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-jpeg.XXXXXX")
trap 'rm -rf "$W"' EXIT

"$IOPROBE" gen --dataset imagenet-like --content jpeg --files 120 --dirs 4 --seed 3 --dir "$W/jpeg" \
  > "$W/gen.txt" 2>&1 || { cat "$W/gen.txt"; fail "gen --content jpeg exit $?"; }
[ "$(json "$W/jpeg/.ioprobe-dataset.json" 'd["spec"]["content"]')" = jpeg ] || fail "manifest content"

# Every listed file: exactly its size, and PIL decodes it whole (load(), not just the header).
"$PY" - "$W/jpeg" > "$W/pil.txt" 2>&1 <<'PYEOF' || { cat "$W/pil.txt"; fail "PIL check"; }
import os, sys
from PIL import Image
root = sys.argv[1]
n = 0
with open(os.path.join(root, ".ioprobe-files.tsv")) as f:
    for line in f:
        size, rel = line.rstrip("\n").split("\t")
        p = os.path.join(root, rel)
        assert os.path.getsize(p) == int(size), f"{p}: {os.path.getsize(p)} B, listed {size}"
        with Image.open(p) as im:
            assert im.format == "JPEG", f"{p}: {im.format}"
            im.load()
            assert im.mode == "RGB" and min(im.size) >= 8, f"{p}: {im.mode} {im.size}"
        n += 1
print(f"decoded {n}")
PYEOF
grep -q "decoded 120" "$W/pil.txt" || fail "PIL decoded $(cat "$W/pil.txt")"

# The run reuses the set without --content (its manifest says jpeg) and decodes every sample.
"$IOPROBE" run --dataset imagenet-like --files 120 --dirs 4 --seed 3 --dir "$W/jpeg" --decode jpeg --workers 2 \
  --batch-size 16 --cache warm --gpu-samples-per-s 1e9 --json "$W/run.json" > "$W/run.txt" 2>&1 \
  || { cat "$W/run.txt"; fail "run --decode jpeg exit $?"; }
[ "$(json "$W/run.json" 'd["dataset"]["content"]')" = jpeg ] || fail "dataset content in the document"
[ "$(json "$W/run.json" 'd["dataset"]["action"]')" = reused ] || fail "not reused: $(json "$W/run.json" 'd["dataset"]["action"]')"
[ "$(json "$W/run.json" 'd["loader"]["decode"]')" = jpeg ] || fail "loader decode"
[ "$(json "$W/run.json" 'd["results"]["decode"]["samples"]')" = 120 ] || fail "decoded samples: $(json "$W/run.json" 'd["results"].get("decode")')"
[ "$(json "$W/run.json" 'd["results"]["decode"]["errors"]')" = 0 ] || fail "decode errors"
[ "$(json "$W/run.json" 'int(d["results"]["decode"]["cpu_us_per_sample"] > 0)')" = 1 ] || fail "no decode cost"
grep -q "JPEG decode" "$W/run.txt" || fail "no decode line in the text: $(cat "$W/run.txt")"
for p in /usr/bin/python3 python3; do  # the schema check where a python3 has jsonschema (tools/setup --test)
  if "$p" -c 'import jsonschema' 2>/dev/null; then
    "$p" -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
      "$W/run.json" "$(dirname "$0")/../../reports/result.schema.json" || fail "the document does not match the schema"
    break
  fi
done

# Refusals: a synthetic dataset (its manifest says so), and your own files that are not JPEG.
"$IOPROBE" gen --dataset imagenet-like --files 20 --dir "$W/syn" > /dev/null 2>&1 || fail "gen synthetic"
"$IOPROBE" run --dataset imagenet-like --files 20 --dir "$W/syn" --decode jpeg --quiet > "$W/r1.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "--decode jpeg on synthetic data: exit $rc, want 2: $(cat "$W/r1.txt")"
grep -q -- "--decode jpeg" "$W/r1.txt" && grep -q "$W/syn" "$W/r1.txt" && grep -q "synthetic" "$W/r1.txt" \
  || fail "the refusal names neither the option, the dataset nor its content: $(cat "$W/r1.txt")"
mkdir "$W/own"
head -c 5000 /dev/urandom > "$W/own/a.jpg"
"$IOPROBE" run --data "$W/own" --decode jpeg --quiet > "$W/r2.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "--decode jpeg on --data non-JPEG: exit $rc, want 2: $(cat "$W/r2.txt")"
grep -q "$W/own/a.jpg" "$W/r2.txt" || fail "the refusal does not name the file: $(cat "$W/r2.txt")"
"$IOPROBE" gen --dataset unet3d-like --content jpeg --files 2 --dir "$W/big" > "$W/r3.txt" 2>&1
rc=$?
[ $rc = 2 ] || fail "--content jpeg with 146 MB files: exit $rc, want 2: $(cat "$W/r3.txt")"
echo "PASS: 120 JPEG files of the listed sizes decode with PIL; run --decode jpeg: $(json "$W/run.json" 'round(d["results"]["decode"]["cpu_us_per_sample"])') µs per sample"
