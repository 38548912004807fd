#!/bin/bash
# ioprobe calibrate measures a torch IterableDataset, not only a map-style Dataset: a stream that
# splits its files across the DataLoader's workers (get_worker_info, as a sharded stream must) and
# burns 1 ms of its thread's CPU per sample. Its samples are counted as the workers collate them
# (the stream's length is not known before its end): the rows' steady samples, the worker and the
# in-process CPU per sample (1 ms plus the loader's small overhead: 0.95-1.6 ms) and the document's
# code.dataset "iterable", named in the text. A map-style Dataset of several rows per file and a
# stream its workers do not split are said as such; a factory returning a plain generator
# (neither kind), a stream that yields nothing and an empty --data are refused, exit 2, saying why.
# Skips (77) where no python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=$(torch_python) || exit 77
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate-iterable.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 192); do head -c 4096 /dev/urandom > "$W/data/f$i.bin"; done

cat > "$W/stream_ds.py" <<'PYEOF'
import time

import torch
from torch.utils.data import IterableDataset, get_worker_info

BURN_S = 0.001


def mine(paths):
    """This worker's share of the files: every num_workers-th, as a sharded stream deals them."""
    info = get_worker_info()
    return paths[info.id::info.num_workers] if info else paths


class Stream(IterableDataset):
    def __init__(self, paths):
        self.paths = paths

    def __iter__(self):
        for p in mine(self.paths):
            t0 = time.thread_time()
            with open(p, "rb") as f:
                data = f.read()
            while time.thread_time() - t0 < BURN_S:
                pass
            yield torch.frombuffer(bytearray(data), dtype=torch.uint8)[:1000].float()


def make(paths):
    return Stream(paths)


class Shards(IterableDataset):
    """Each file holds 4 samples of 1 KiB, back to back; the files are dealt to the workers."""

    def __init__(self, paths):
        self.paths = paths

    def __iter__(self):
        for p in mine(self.paths):
            with open(p, "rb") as f:
                data = f.read()
            for i in range(0, len(data), 1024):
                t0 = time.thread_time()
                while time.thread_time() - t0 < BURN_S:
                    pass
                yield torch.frombuffer(bytearray(data[i:i + 1024]), dtype=torch.uint8).float()


def make_shards(paths):
    return Shards(paths)


class NoSplit(IterableDataset):
    """Every worker iterates every file: the stream is not split across workers."""

    def __init__(self, paths):
        self.paths = paths

    def __iter__(self):
        for p in self.paths:
            yield torch.zeros(4)


def make_nosplit(paths):
    return NoSplit(paths)


class Rows(torch.utils.data.Dataset):
    """A map-style Dataset of 4 rows per file, as a table's rows are read by index."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return 4 * len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i // 4], "rb") as f:
            f.seek(1024 * (i % 4))
            return torch.frombuffer(bytearray(f.read(1024)), dtype=torch.uint8).float()


def make_rows(paths):
    return Rows(paths)


def make_generator(paths):
    return (p for p in paths)


class Empty(IterableDataset):
    def __iter__(self):
        return iter(())


def make_empty(paths):
    return Empty()
PYEOF

cal() { "$IOPROBE" calibrate --data "$W/data" --batch-size 16 --python "$PY" "$@"; }
cal --dataset-factory "$W/stream_ds.py:make" --samples 192 --oversubscribe none --json "$W/cal.json" > "$W/out.txt" 2> "$W/err.txt"
rc=$?
[ $rc = 0 ] || fail "calibrate exit $rc: $(cat "$W/err.txt")"
json "$W/cal.json" 'd["code"]["dataset"]' | grep -qx iterable || fail "code.dataset: $(json "$W/cal.json" 'd["code"]')"
grep -q "stream_ds.py:make (IterableDataset, torch default_collate)" "$W/out.txt" || fail "the text does not name the IterableDataset: $(head -3 "$W/out.txt")"
within() {  # WHAT VALUE
  json "$W/cal.json" "950 <= $2 <= 1600" | grep -qx True || fail "$1 is $(json "$W/cal.json" "$2") µs, not 1000 µs (950-1600)"
}
within "worker CPU per sample" 'd["figures"]["worker_cpu_per_sample_us"]["value"]'
within "in-process CPU per sample" 'd["figures"]["inprocess_cpu_per_sample_us"]["value"]'
for r in 0 1 2 3 4 5; do
  within "row $r's CPU per sample" "[r.get('worker_cpu_per_sample_us', r.get('inprocess_cpu_per_sample_us')) for r in d['rows']][$r]"
done
# 12 batches of 16 whatever num_workers (the stream is split, not repeated, across workers): the
# rates are over batches 2-12, 176 samples, counted from the workers' collates.
json "$W/cal.json" 'sorted(set((r["batches"], r["samples"]) for r in d["rows"]))' | grep -qxF "[(11, 176)]" \
  || fail "samples counted: $(json "$W/cal.json" '[(r["num_workers"], r["batches"], r["samples"]) for r in d["rows"]]')"
json "$W/cal.json" 'all(r["pass_samples"] == 192 for r in d["rows"] if r["num_workers"])' | grep -qx True \
  || fail "pass samples: $(json "$W/cal.json" '[r.get("pass_samples") for r in d["rows"]]')"
# A stream of one sample per file reads in its own order: the command printed says --no-shuffle.
grep -A1 "^written:" "$W/out.txt" | grep -q -- "--no-shuffle" || fail "no --no-shuffle in the hint: $(tail -3 "$W/out.txt")"
# The calibration drives a run like any other.
"$IOPROBE" run --data "$W/data" --batch-size 16 --workers 1 --calibration "$W/cal.json" --json "$W/run.json" > "$W/run.txt" 2>&1 \
  || fail "run --calibration: $(tail -3 "$W/run.txt")"

# Files that hold several samples (shards): 48 files of 4 samples. --samples counts files; the
# stream's samples (192) are counted in its first pass and kept (data.samples), the crowded passes
# read as many files as hold their samples, and the command printed emulates the shards' shape.
cal --dataset-factory "$W/stream_ds.py:make_shards" --samples 48 --oversubscribe 2 --json "$W/shards.json" \
  > "$W/out.txt" 2> "$W/err.txt" || fail "calibrate of a sharded stream: $(tail -3 "$W/err.txt")"
json "$W/shards.json" '(d["data"]["files"], d["data"]["samples"])' | grep -qxF "(48, 192)" || fail "shard data: $(json "$W/shards.json" 'd["data"]')"
json "$W/shards.json" 'sorted(r["pass_samples"] for r in d["rows"] if r.get("oversubscribed"))' | grep -qxF "[192, 384]" \
  || fail "crowded passes of the stream: $(json "$W/shards.json" '[(r["num_workers"], r.get("pass_samples")) for r in d["rows"]]')"
grep -q "your IterableDataset's 48 files held 192 samples (4 per file, 1024 B per sample" "$W/out.txt" || fail "no shard hint: $(tail -3 "$W/out.txt")"
cmd=$(grep -A1 "^written:" "$W/out.txt" | tail -1 | sed 's/^ *ioprobe //')
grep -qF -- "--records-per-file 4 --record-size 1024 --record-size-dist fixed --files 48 --batch-size 16" <<< "$cmd" || fail "hint: $cmd"
eval "\"$IOPROBE\" $cmd --dir \"$W/gen\" --json \"$W/shardrun.json\"" > "$W/run.txt" 2>&1 || fail "the printed command: $(tail -3 "$W/run.txt")"
json "$W/shardrun.json" 'd["results"]["samples"]' | grep -qx 192 || fail "the printed command read $(json "$W/shardrun.json" 'd["results"]["samples"]') samples"

# A map-style Dataset of 4 rows per file: its 192 samples over 48 files are said, and no `run --data`
# command (which would read each file as one sample) is printed.
cal --dataset-factory "$W/stream_ds.py:make_rows" --samples 48 --oversubscribe none --json "$W/rows.json" \
  > "$W/out.txt" 2> "$W/err.txt" || fail "calibrate of rows: $(tail -3 "$W/err.txt")"
grep -q "48 files holding 192 samples" "$W/out.txt" && grep -q "held 192 samples (4 per file): .ioprobe run --data. would read each file as one sample" "$W/out.txt" \
  && ! grep -q "^  ioprobe run --data" "$W/out.txt" || fail "rows: $(grep -A2 "^  data\|^written" "$W/out.txt")"
# A stream that every worker iterates whole is measured, with a warning that it repeats.
cal --dataset-factory "$W/stream_ds.py:make_nosplit" --samples 192 --oversubscribe none --json "$W/nosplit.json" \
  > "$W/out.txt" 2> "$W/err.txt" || fail "calibrate of a stream not split: $(tail -3 "$W/err.txt")"
grep -q "warning: your IterableDataset yielded 384 samples at num_workers=2 against 192 at num_workers=0: it does not split" "$W/err.txt" \
  || fail "no warning for a stream not split across workers: $(grep -i warn "$W/err.txt")"
# An empty --data is refused in words, exit 2 (no traceback).
mkdir "$W/empty"
"$IOPROBE" calibrate --data "$W/empty" --batch-size 16 --python "$PY" --dataset-factory "$W/stream_ds.py:make" > "$W/e.txt" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "error: --data $W/empty: no files to calibrate on" "$W/e.txt" && ! grep -q Traceback "$W/e.txt" \
  || fail "an empty --data: exit $rc: $(cat "$W/e.txt")"

cal --dataset-factory "$W/stream_ds.py:make_generator" --samples 192 --oversubscribe none > "$W/e.txt" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "returned a generator, neither a map-style Dataset" "$W/e.txt" && grep -q "nor a torch IterableDataset" "$W/e.txt" \
  || fail "a generator: exit $rc: $(cat "$W/e.txt")"
cal --dataset-factory "$W/stream_ds.py:make_empty" --samples 192 --oversubscribe none > "$W/e.txt" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "the IterableDataset yielded no sample over the 192 paths" "$W/e.txt" || fail "an empty stream: exit $rc: $(cat "$W/e.txt")"
echo "PASS"
