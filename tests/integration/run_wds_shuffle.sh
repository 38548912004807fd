#!/usr/bin/env bash
# --shuffle-buffer on a tiny sharded dataset: the run completes, every record is delivered and every
# shard byte read once per epoch, and the document and the text report record the buffer settings;
# without the option the document has no buffer fields; on a files dataset the option is refused
# with exit 2, naming the option and its value; tune and capacity refuse it as run's; an initial fill
# above the buffer is warned about and emulated as the buffer's size. The document
# is checked against the schema when python3-jsonschema is installed.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-wds-XXXXXX)
trap 'rm -rf "$work"' EXIT
SHAPE=(--dataset resnet50-tfrecord-like --files 5 --records-per-file 40 --record-size 8KB
       --record-size-stdev 4KB --record-size-min 1KB --record-size-max 64KB --record-size-dist lognormal)
COMMON=(--quiet --dir "$work/ds" "${SHAPE[@]}" --workers 2 --batch-size 8 --epochs 2 --read-size 64KiB
        --cache warm --step-time 0.001s)

"$IOPROBE" "${COMMON[@]}" --shuffle-buffer 30 --shuffle-initial 12 --json "$work/wds.json" > "$work/wds.txt" 2>&1 \
  || fail "--shuffle-buffer run exited $?: $(cat "$work/wds.txt")"
disk=$(sum_sizes "$work/ds")
python3 - "$work/wds.json" "$disk" <<'PY' || fail "--shuffle-buffer run: document figures"
import json, sys
d = json.load(open(sys.argv[1])); disk = int(sys.argv[2]); r = d['results']; l = d['loader']
assert r['errors'] == 0, r['error_samples']
assert r['samples'] == 5 * 40 * 2, f"samples {r['samples']} != 5 x 40 x 2"
assert r['bytes'] == disk * 2, f"bytes {r['bytes']} != on-disk {disk} x 2 epochs"
assert l['shuffle_buffer_samples'] == 30 and l['shuffle_initial_samples'] == 12, l
assert 'webdataset' in l['pattern'] and 'shuffle buffer of 30 samples' in l['pattern'], l['pattern']
print(f"ok: --shuffle-buffer 30 --shuffle-initial 12: {r['samples']} records, {r['bytes']} B = {disk} B x 2 epochs")
PY
if python3 -c "import jsonschema" 2>/dev/null; then
  python3 - "$work/wds.json" "$(dirname "$0")/../../reports/result.schema.json" <<'PY' || fail "the document does not match the schema"
import json, sys, jsonschema
doc, schema = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
print("ok: the document matches reports/result.schema.json")
PY
else
  echo "note: python3-jsonschema missing (tools/setup --test installs it): the schema check is skipped"
fi
grep -q "shuffle buffer of 30 samples (it yields its first once it holds 12 samples)" "$work/wds.txt" \
  || fail "the text report does not name the buffer: $(cat "$work/wds.txt")"

"$IOPROBE" "${COMMON[@]}" --json "$work/plain.json" > "$work/plain.txt" 2>&1 \
  || fail "plain sharded run exited $?: $(cat "$work/plain.txt")"
python3 - "$work/plain.json" <<'PY' || fail "plain sharded run: the document has buffer fields"
import json, sys
l = json.load(open(sys.argv[1]))['loader']
assert 'shuffle_buffer_samples' not in l and 'shuffle_initial_samples' not in l, l
assert 'IterableDataset' in l['pattern'], l['pattern']
print("ok: without --shuffle-buffer: no buffer fields, the IterableDataset order")
PY

"$IOPROBE" --quiet --dir "$work/files" --dataset imagenet-like --files 20 --shuffle-buffer 500 \
  > "$work/refused.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "--shuffle-buffer on a files dataset: exit $rc, expected 2: $(cat "$work/refused.txt")"
grep -q -- "--shuffle-buffer 500" "$work/refused.txt" || fail "the refusal does not name the option and value: $(cat "$work/refused.txt")"
[ ! -e "$work/files" ] || fail "the refused run generated a dataset before refusing"
echo "ok: --shuffle-buffer on a files dataset: exit 2, $(head -c 160 "$work/refused.txt")"

# A sharded run from the default (files) preset: the refusal names the sharded presets to start from.
"$IOPROBE" --quiet --dir "$work/sh" --dataset-kind sharded --record-size 100KB --shuffle-buffer 100 \
  > "$work/kind.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "--dataset-kind sharded from the files preset: exit $rc, expected 2: $(cat "$work/kind.txt")"
grep -q -- "--dataset resnet50-tfrecord-like" "$work/kind.txt" \
  || fail "the refusal does not name a sharded preset: $(cat "$work/kind.txt")"
echo "ok: --dataset-kind sharded from imagenet-like: exit 2, names the sharded presets"

# tune and capacity do not take it (their documents would not record the buffer): exit 2, named.
for sub in tune capacity; do
  "$IOPROBE" "$sub" --dir "$work/ds" --shuffle-buffer 30 > "$work/$sub.txt" 2>&1
  rc=$?
  [ "$rc" = 2 ] || fail "$sub --shuffle-buffer: exit $rc, expected 2: $(cat "$work/$sub.txt")"
  grep -q -- "--shuffle-buffer is an option of 'ioprobe run' only" "$work/$sub.txt" \
    || fail "$sub: the refusal does not say the option is run's: $(cat "$work/$sub.txt")"
done
echo "ok: tune and capacity refuse --shuffle-buffer, saying it is run's"

# An initial fill above the buffer is emulated as webdataset does (the buffer's size), and said.
"$IOPROBE" "${COMMON[@]}" --shuffle-buffer 10 --shuffle-initial 25 --json "$work/clamp.json" \
  > "$work/clamp.txt" 2>&1 || fail "--shuffle-initial above the buffer exited $?: $(cat "$work/clamp.txt")"
grep -q "warning: --shuffle-initial 25 is more than --shuffle-buffer 10" "$work/clamp.txt" \
  || fail "--shuffle-initial 25 > --shuffle-buffer 10: no warning: $(cat "$work/clamp.txt")"
python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['loader']; assert l['shuffle_initial_samples'] == 10, l" \
  "$work/clamp.json" || fail "--shuffle-initial above the buffer: the document does not record the buffer's 10"
echo "ok: --shuffle-initial 25 with --shuffle-buffer 10: warned, emulated as 10"
