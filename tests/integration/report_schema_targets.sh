#!/usr/bin/env bash
# Every document kind ioprobe writes (run cold and warm, tune, raw, checkpoint, probe, and a merged
# run) passes reports/result.schema.json on each target kind this host can make: tmpfs and ext4 on
# a loop device (as root), and the working directory's disk. bytes_source (ingest, results,
# epochs) and served_from take one vocabulary, the schema's $defs.bytes_source, and within one
# document the ingest and the results agree.
set -uo pipefail
IOPROBE=$1
. "$(dirname "$0")/target_common.bash"
python3 -c "import jsonschema" 2>/dev/null || skip "python3-jsonschema missing (tools/setup --test installs it)"
SCHEMA=$(cd "$(dirname "$0")/../.." && pwd)/reports/result.schema.json

validate() {  # validate FILE WHAT
  python3 - "$SCHEMA" "$1" "$2" <<'PY' || fail "$2: $1 does not pass the schema"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); doc = json.load(open(sys.argv[2])); what = sys.argv[3]
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
for e in errors[:5]:
    print(f"  {what}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
names = schema["$defs"]["bytes_source"]["enum"]
def walk(j, path):
    if isinstance(j, dict):
        for k, v in j.items():
            if k in ("bytes_source", "served_from", "restore_served_from") and isinstance(v, str) and v not in names:
                errors.append(f"{path}/{k} = {v!r} is not one of {names}")
                print(f"  {what}: {path}/{k} = {v!r} is not in the vocabulary {names}")
            walk(v, f"{path}/{k}")
    elif isinstance(j, list):
        for i, v in enumerate(j): walk(v, f"{path}/{i}")
walk(doc, "")
if doc.get("kind") == "run" and "bytes_source" in doc.get("ingest", {}) and "device_io" in doc.get("results", {}):
    a, b = doc["ingest"]["bytes_source"], doc["results"]["device_io"].get("bytes_source")
    if a != b:
        errors.append("disagree"); print(f"  {what}: ingest.bytes_source {a!r} but results.device_io.bytes_source {b!r}")
sys.exit(1 if errors else 0)
PY
}

every_kind() {  # every_kind DIR NAME
  local d=$1 name=$2 k
  "$IOPROBE" --quiet --dir "$d/ds" --files 300 --file-size 16KiB --workers 1 --duration 2s --json "$d/run.json" \
    > /dev/null || fail "$name: run failed"
  "$IOPROBE" --quiet --dir "$d/ds" --files 300 --file-size 16KiB --workers 1 --duration 2s --cache warm \
    --json "$d/warm.json" > /dev/null || fail "$name: warm run failed"
  "$IOPROBE" report --merge "$d/run.json" "$d/warm.json" --json "$d/merged.json" > /dev/null 2>&1 ||
    "$IOPROBE" report --merge "$d/run.json" "$d/run.json" --json "$d/merged.json" > /dev/null ||
    fail "$name: report --merge failed"
  "$IOPROBE" raw --filename "$d/raw.bin" --size 8MiB --rw randread --bs 4k --runtime 1s --quiet \
    --json "$d/raw.json" > /dev/null || fail "$name: raw failed"
  "$IOPROBE" tune --quiet --files 300 --dir "$d/ds" --file-size 16KiB --workers 1,2 --prefetch-factors 2 \
    --repeats 1 --point-time 2s --budget 30s --json "$d/tune.json" > /dev/null || fail "$name: tune failed"
  "$IOPROBE" checkpoint --quiet --dir "$d/ck" --size 16MiB --restore --raw-baseline off --json "$d/ck.json" \
    > /dev/null || fail "$name: checkpoint failed"
  "$IOPROBE" probe --dir "$d" --json "$d/probe.json" > /dev/null || fail "$name: probe failed"
  for k in run warm merged raw tune ck probe; do validate "$d/$k.json" "$name $k"; done
  echo "ok: $name: run, warm run, merged run, raw, tune, checkpoint and probe pass the schema" \
       "(bytes from: $(python3 -c "import json; print(json.load(open('$d/run.json'))['ingest'].get('bytes_source'))"))"
}

mkdir -p "$WORK/disk"
every_kind "$WORK/disk" "$(stat -f -c %T "$WORK/disk")"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$WORK/tmpfs"
  mount -t tmpfs ioprobe-schema "$WORK/tmpfs" && on_exit "umount -l '$WORK/tmpfs'" && every_kind "$WORK/tmpfs" tmpfs
  if command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null; then
    make_ext4_loop 256M
    every_kind "$MNT" "ext4 on $LOOP"
  fi
else
  echo "note: not root: tmpfs and loop ext4 not made"
fi
echo "all documents pass the schema"
