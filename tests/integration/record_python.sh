#!/bin/bash
# ioprobe record on tiny Python jobs (tests/fixtures/trace/record_job.py): a plain job (open().read(), a
# subprocess mid-way, and numpy.fromfile through stdio and numpy.memmap when numpy imports) with exact bytes,
# the mapped range, and no Python import in the trace; and a torch DataLoader with 2 fork workers (skipped
# without torch): batch marks in the main process, the workers tagged "worker 0" and "worker 1", every
# sample's bytes read by them.
. "$(dirname "$0")/lib.sh"
BIN=${1:?usage: record_python.sh path/to/ioprobe}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
JOB=$SRC/tests/fixtures/trace/record_job.py
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-record-py.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/data"
for i in 0 1 2 3 4 5 6 7; do head -c $((10000 + i * 1000)) /dev/urandom > "$W/data/s$i.bin"; done
bin_bytes=$(cat "$W"/data/*.bin | wc -c)

# The Python that has numpy, if any (Debian's /usr/bin/python3 with python3-numpy).
PY=python3
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
npy_bytes=0
if "$PY" -c 'import numpy' 2>/dev/null; then
  head -c 30000 /dev/urandom > "$W/data/arr.npy"
  npy_bytes=30000
else
  echo "note: no python3 with numpy; the numpy.fromfile (stdio) part is not run"
fi

"$BIN" record --out "$W/plain.jsonl" -- "$PY" "$JOB" plain "$W/data" > "$W/out.txt" || fail "record of the plain job failed"
grep -q "bytes $((bin_bytes + npy_bytes))" "$W/out.txt" || fail "the job's own output changed: $(cat "$W/out.txt")"
python3 - "$W/plain.jsonl" "$W/data" "$bin_bytes" "$npy_bytes" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
d, bin_bytes, npy_bytes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
files = {l["file"]: l["path"] for l in lines if "file" in l}
ops = [l for l in lines if "op" in l]
def expect(c, what):
    if not c:
        print("FAIL:", what); sys.exit(1)
bad = [p for p in files.values() if not p.startswith(d + "/")]
expect(not bad, "only the job's data files are in the trace, not: %s" % bad[:5])
got = sum(o["ret"] for o in ops if o["op"] == "read" and o["ret"] > 0 and files[o["f"]].endswith(".bin"))
expect(got == bin_bytes, "bytes read from .bin files %d, expected %d" % (got, bin_bytes))
if npy_bytes:
    fr = [o for o in ops if o["call"] == "fread" and files[o["f"]].endswith(".npy")]
    expect(sum(o["ret"] for o in fr) == npy_bytes, "numpy.fromfile's fread bytes %d, expected %d" %
           (sum(o["ret"] for o in fr), npy_bytes))
    mm = [o for o in ops if o["op"] == "mmap" and files[o["f"]].endswith(".npy")]
    expect(len(mm) == 1 and mm[0]["len"] == npy_bytes, "numpy.memmap's mmap of the whole file: %s" % mm)
    expect(lines[0]["mapped"]["mapped_bytes"] == npy_bytes, "mapped bytes %d" % lines[0]["mapped"]["mapped_bytes"])
opens = sum(o["op"] == "open" for o in ops)
expect(opens == 8 + (2 if npy_bytes else 0), "one open per file (two for the .npy: fromfile, memmap): %d" % opens)
print("plain job: %d ops, %d bytes" % (len(ops), got))
PY

TPY=$(torch_python) || { echo "SKIP (torch part): no python3 imports torch"; echo PASS; exit 0; }
"$BIN" record --out "$W/torch.jsonl" -- "$TPY" "$JOB" torch "$W/data" > "$W/out2.txt" || fail "record of the torch job failed"
grep -q "batches 4" "$W/out2.txt" || fail "the DataLoader job's output changed: $(cat "$W/out2.txt")"
python3 - "$W/torch.jsonl" "$bin_bytes" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1])]
bin_bytes = int(sys.argv[2])
streams = {l["stream"]: l for l in lines if "stream" in l}
ops = [l for l in lines if "op" in l]
marks = [l for l in lines if "mark" in l]
def expect(c, what):
    if not c:
        print("FAIL:", what); sys.exit(1)
roles = collections.Counter(s["role"] for s in streams.values())
expect(roles["worker 0"] == 1 and roles["worker 1"] == 1, "worker roles: %s" % dict(roles))
main = [i for i, s in streams.items() if s["role"] == "main"]
expect(len(main) == 1, "one main stream: %s" % dict(roles))
mk = collections.Counter(m["mark"] for m in marks if m["s"] == main[0])
# 4 batches and the wait that ends the epoch (StopIteration): 5 waits.
expect(mk["batch_wait_begin"] == 5 and mk["batch_wait_end"] == 5, "batch marks in main: %s" % dict(mk))
expect(mk["epoch_begin"] == 1 and mk["epoch_end"] == 1, "epoch marks: %s" % dict(mk))
files = {l["file"]: l["path"] for l in lines if "file" in l}
expect(all(p.endswith(".bin") for p in files.values()), "only the samples are data files: %s" % sorted(files.values()))
workers = {i for i, s in streams.items() if s["role"].startswith("worker")}
wbytes = sum(o["ret"] for o in ops if o["s"] in workers and o["op"] == "read" and o["ret"] > 0)
expect(wbytes == bin_bytes, "the workers read %d bytes, the samples hold %d" % (wbytes, bin_bytes))
for w in workers:
    expect(streams[w]["ppid"] == streams[main[0]]["pid"], "worker's ppid is the main process")
print("torch job: roles %s, main marks %s" % (dict(roles), dict(mk)))
PY
echo PASS
