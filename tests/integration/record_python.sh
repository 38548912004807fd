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
    # memmap reads one byte of every page: every page of the file was touched.
    expect(lines[0]["mapped"]["sampled"] and lines[0]["mapped"]["touched_bytes"] == npy_bytes,
           "touched bytes %s" % lines[0]["mapped"])
opens = sum(o["op"] == "open" for o in ops)
expect(opens == 8 + (2 if npy_bytes else 0), "one open per file (two for the .npy: fromfile, memmap): %d" % opens)
print("plain job: %d ops, %d bytes" % (len(ops), got))
PY

# An interrupted recording keeps what the job read, marked partial (exit 130 for SIGINT, 143 for
# SIGTERM), and the job's "odd/../sN.bin" is recorded as "sN.bin" (paths normalised).
mkdir "$W/data/odd"
cat > "$W/slow.py" <<'PY'
import os, sys, time
os.chdir(os.path.join(sys.argv[1], "odd"))
i = 0
while True:
    with open("../s%d.bin" % (i % 8), "rb") as f:
        f.read()
    i += 1
    time.sleep(0.02)
PY
for sig in INT TERM; do
  rc=0
  timeout --preserve-status -s $sig 3 "$BIN" record --out "$W/int-$sig.jsonl" -- "$PY" "$W/slow.py" "$W/data" \
    > /dev/null 2> "$W/int-$sig.err" || rc=$?
  want=130; [ $sig = TERM ] && want=143
  [ "$rc" = "$want" ] || fail "record stopped by SIG$sig exited $rc, expected $want: $(cat "$W/int-$sig.err")"
  grep -q "partial (interrupted)" "$W/int-$sig.err" || fail "the summary does not say partial: $(cat "$W/int-$sig.err")"
  python3 - "$W/int-$sig.jsonl" "$W/data" <<'PY' || fail "SIG$sig: the partial trace"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
files = {l["file"]: l["path"] for l in lines if "file" in l}
reads = [l for l in lines if l.get("op") == "read" and l["ret"] > 0]
if not lines[0].get("partial") or "interrupted" not in lines[0].get("partial_reason", ""):
    sys.exit("FAIL: header not marked partial: %s" % lines[0])
if len(reads) < 10:
    sys.exit("FAIL: %d reads kept from a 3 s job reading every 20 ms" % len(reads))
bad = [p for p in files.values() if ".." in p or not p.startswith(sys.argv[2] + "/s")]
if bad:
    sys.exit("FAIL: paths not normalised: %s" % bad[:3])
print("interrupted: %d reads kept, header %s" % (len(reads), lines[0]["partial_reason"]))
PY
done

# The default trace name never replaces a file: names for this second and the next two exist.
host=$(hostname)
now=$(date +%s)
for k in 0 1 2; do
  echo "not a trace" > "$W/ioprobe-trace-$host-$(date -d "@$((now + k))" +%Y%m%d-%H%M%S).jsonl"
done
(cd "$W" && "$BIN" record -- true > /dev/null 2> "$W/default.err") || fail "record with a taken default name: $(cat "$W/default.err")"
[ "$(grep -l "not a trace" "$W"/ioprobe-trace-*.jsonl | wc -l)" = 3 ] || fail "the default name replaced an earlier file"
[ "$(ls "$W"/ioprobe-trace-*-2.jsonl | wc -l)" = 1 ] || fail "no -2 trace next to the taken name: $(ls "$W")"

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
