#!/usr/bin/env bash
# A token dataset (Megatron-style) is read map-style, one read per sample:
# results.samples = files x sequences x epochs and results.bytes = samples x seq_len x token_bytes
# = the token files' sizes x epochs, with io_uring and psync, O_DIRECT (aligned 8 KiB samples, and
# unaligned 2,000 B samples through the bounce read) and warm, 1 and 2 ranks.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d /var/tmp/ioprobe-tokens-XXXXXX)
trap 'rm -rf "$work"' EXIT

check() {  # $1 label, $2 seq_len, $3 token_bytes, then run options
  local label=$1 seq=$2 tb=$3; shift 3
  local ds="$work/ds-$seq-$tb" out="$work/$label.json"
  "$IOPROBE" --quiet --dataset llm-tokens-like --dir "$ds" --files 2 --records-per-file 300 --seq-len "$seq" \
      --token-bytes "$tb" --workers 3 --batch-size 16 --epochs 2 --gpu-samples-per-s 100000 --json "$out" "$@" \
      > "$work/$label.txt" || fail "$label: exited $?: $(cat "$work/$label.txt")"
  local disk
  disk=$(sum_sizes "$ds")
  [ "$disk" = $((2 * 300 * seq * tb)) ] || fail "$label: token files hold $disk B, expected 2 x 300 x $seq x $tb"
  python3 - "$out" "$disk" "$label" "$seq" "$tb" <<'PY' || fail "$label: figures do not match the generated dataset"
import json, sys
d = json.load(open(sys.argv[1])); disk = int(sys.argv[2]); seq = int(sys.argv[4]); tb = int(sys.argv[5])
r = d['results']; ds = d['dataset']
assert ds['kind'] == 'token' and ds['records_per_file'] == 300 and ds['seq_len'] == seq and ds['token_bytes'] == tb, ds
assert r['errors'] == 0, r['error_samples']
assert r['samples'] == 2 * 300 * 2, f"samples {r['samples']} != 2 x 300 x 2"
assert r['bytes'] == r['samples'] * seq * tb == disk * 2, f"bytes {r['bytes']} != {disk} x 2"
assert r['file_latency_us']['count'] == r['samples'], "not one read per sample"
aligned = (seq * tb) % 4096 == 0
if d['target']['direct'] and not aligned:
    assert r['io_bytes'] > r['bytes'], "O_DIRECT bounce reads should transfer the aligned span"
else:
    assert r['io_bytes'] == r['bytes'], (r['io_bytes'], r['bytes'])
print(f"ok: {sys.argv[3]}: {r['samples']} samples, {r['bytes']} B = {disk} B x 2 epochs "
      f"(transferred {r['io_bytes']} B), engine {d['target']['engine']}, direct {d['target']['direct']}")
PY
}

check uring-cold-8k 2048 4 --engine io_uring --cache cold
check psync-cold-8k 2048 4 --engine psync --cache cold --gpus 2
check uring-cold-unaligned 1000 2 --engine io_uring --cache cold --direct on
check psync-cold-unaligned 1000 2 --engine psync --cache cold --direct on
check psync-warm 1000 2 --engine psync --cache warm
