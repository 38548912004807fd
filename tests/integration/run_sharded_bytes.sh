#!/usr/bin/env bash
# A sharded (TFRecord-like) dataset read as an IterableDataset delivers every record
# once per epoch and reads every shard byte once per epoch: results.samples = shards x records x
# epochs and results.bytes = sum of shard sizes on disk x epochs, on ext4 (O_DIRECT, io_uring and
# psync, 1 and 2 ranks) and tmpfs (warm); --duration stops on time; SIGINT gives a partial result.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-shards-XXXXXX)
shm=""
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
SHAPE=(--dataset resnet50-tfrecord-like --files 7 --records-per-file 53 --record-size 20KB
       --record-size-stdev 10KB --record-size-min 1KB --record-size-max 200KB --record-size-dist lognormal)

check() {  # $1 = base dir, $2 = label, then run options
  local base=$1 label=$2; shift 2
  local ds="$base/ds" out="$work/$label.json"
  "$IOPROBE" --quiet --dir "$ds" "${SHAPE[@]}" --workers 3 --batch-size 16 --epochs 2 --read-size 64KiB \
      --step-time 0.001s --json "$out" "$@" > "$work/$label.txt" || fail "$label: exited $?: $(cat "$work/$label.txt")"
  local disk shards
  disk=$(sum_sizes "$ds"); shards=$(find "$ds" -type f ! -name '.ioprobe-*' | wc -l)
  [ "$shards" = 7 ] || fail "$label: $shards shard files on disk, expected 7"
  python3 - "$out" "$disk" "$label" <<'PY' || fail "$label: figures do not match the generated dataset"
import json, sys
d = json.load(open(sys.argv[1])); disk = int(sys.argv[2]); r = d['results']; ds = d['dataset']
assert ds['kind'] == 'sharded' and ds['records_per_file'] == 53 and ds['records'] == 7 * 53, ds
assert r['errors'] == 0, r['error_samples']
assert r['samples'] == 7 * 53 * 2, f"samples {r['samples']} != 7 x 53 x 2"
assert r['bytes'] == disk * 2, f"bytes {r['bytes']} != on-disk {disk} x 2 epochs"
assert r['io_bytes'] == r['bytes'], f"io_bytes {r['io_bytes']} != bytes {r['bytes']} (aligned reads, no drop_last)"
assert ds['bytes'] == disk, f"dataset.bytes {ds['bytes']} != {disk}"
assert sum(w['bytes'] for w in r['workers']) == r['bytes']
assert 'IterableDataset' in d['loader']['pattern'] and d['loader']['read_size_bytes'] == 65536
print(f"ok: {sys.argv[3]}: {r['samples']} records, {r['bytes']} B = {disk} B x 2 epochs, engine {d['target']['engine']}, "
      f"direct {d['target']['direct']}")
PY
  grep -q "records in 7 shards of 53 records" "$work/$label.txt" || fail "$label: text report lacks the records line"
}

check "$work" ext4-uring-cold --engine io_uring --cache cold
check "$work" ext4-psync-cold --engine psync --cache cold
check "$work" ext4-psync-2ranks --engine psync --cache cold --gpus 2
check "$work" ext4-uring-warm --engine io_uring --cache warm
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  shm=$(mktemp -d /dev/shm/ioprobe-shards-XXXXXX)
  check "$shm" tmpfs-warm --cache warm
fi

# --duration: stops on time with whole batches only (bytes are reads of delivered batches).
out="$work/duration.json"
"$IOPROBE" --quiet --dir "$work/ds" "${SHAPE[@]}" --workers 2 --batch-size 8 --duration 1.5s --step-time 0.05s \
    --json "$out" > /dev/null || fail "duration run exited $?"
python3 - "$out" <<'PY' || fail "duration run figures"
import json, sys
r = json.load(open(sys.argv[1]))['results']
assert r['stop_reason'] == 'duration reached', r['stop_reason']
assert 1.4 <= r['elapsed_s'] <= 2.5, r['elapsed_s']
assert r['samples'] > 0, r['samples']
assert r['io_bytes'] >= r['bytes'] > 0
print(f"ok: duration: {r['samples']} records in {r['elapsed_s']:.2f} s")
PY

# SIGINT mid-run: exit 130, partial JSON.
out="$work/int.json"
timeout --preserve-status -s INT 2 "$IOPROBE" --quiet --dir "$work/ds" "${SHAPE[@]}" --workers 2 --batch-size 8 \
    --duration 60s --step-time 0.05s --json "$out" > "$work/int.txt" 2>&1
rc=$?
[ "$rc" = 130 ] || fail "SIGINT: exit $rc, expected 130: $(cat "$work/int.txt")"
[ "$(json "$out" "d['partial']")" = True ] || fail "SIGINT: partial is not true"
echo "ok: SIGINT: exit 130, partial result with $(json "$out" "d['results']['samples']") records"
