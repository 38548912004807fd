#!/bin/bash
# ioprobe calibrate with a tiny Dataset under a Python that imports torch: the document's figures
# (bytes per batch exactly what the Dataset returns), the errors that name the user's file, an
# unreadable --data or file named (as nobody, where root may), and `run --calibration` and `tune`
# taking the figures. Skips (77) where no python3 imports torch.
set -u
source "$(dirname "$0")/lib.sh"
IOPROBE=$1
PY=$(torch_python) || exit 77
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-calibrate.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/data"
for i in $(seq -w 1 200); do head -c $((1000 + 10#$i * 7)) /dev/urandom > "$W/data/f$i.bin"; done

# Each sample: 256 float32 values (1024 B) from the file's first bytes; default_collate stacks 32.
cat > "$W/tiny_ds.py" <<'PYEOF'
import torch
from torch.utils.data import Dataset

class Tiny(Dataset):
    def __init__(self, paths):
        self.paths = paths
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            b = f.read()
        return torch.frombuffer(bytearray(b[:256]), dtype=torch.uint8).float()

def make(paths):
    return Tiny(paths)

def nones(paths):
    class S(Tiny):
        def __getitem__(self, i):
            return None
    return S(paths)
PYEOF
echo "import no_such_module_for_ioprobe" > "$W/bad_import.py"

"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --batch-size 32 --samples 192 \
  --python "$PY" --json "$W/cal.json" > "$W/out.txt" 2> "$W/err.txt" || { cat "$W/err.txt"; fail "calibrate exit $?"; }
grep -q "worker CPU per sample" "$W/out.txt" || fail "no figures in the text: $(cat "$W/out.txt")"
[ "$(json "$W/cal.json" 'd["kind"]')" = calibration ] || fail "kind"
[ "$(json "$W/cal.json" 'd["figures"]["bytes_per_batch"]["value"]')" = "32768.0" ] || fail "bytes per batch: $(json "$W/cal.json" 'd["figures"]["bytes_per_batch"]')"
[ "$(json "$W/cal.json" 'd["code"]["file"]')" = "$(realpath "$W/tiny_ds.py")" ] || fail "code file"
[ "$(json "$W/cal.json" 'd["data"]["files"]')" = 192 ] || fail "files used"
json "$W/cal.json" 'd["figures"]["worker_cpu_per_sample_us"]["value"] > 0 and d["figures"]["main_cpu_per_batch_us"]["value"] > 0 and d["figures"]["worker_startup_s"]["value"] > 0' | grep -qx True || fail "zero figures"
json "$W/cal.json" 'sorted((r["num_workers"], r["pin_memory"]) for r in d["rows"] if not r.get("oversubscribed"))' | grep -qF "[(0, False), (0, True), (1, False), (1, True), (2, False), (2, True)]" || fail "rows"
json "$W/cal.json" 'd["python"]["torch_version"]' | grep -q . || fail "torch version"
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
    "$W/cal.json" "${IOPROBE_SOURCE_DIR:-$(dirname "$0")/../..}/reports/calibration.schema.json" || fail "schema"
fi

# run takes the figures: the main-process cost and the calibration's name reach the document.
"$IOPROBE" run --data "$W/data" --calibration "$W/cal.json" --batch-size 32 --workers 1 --cache warm \
  --gpu-samples-per-s 1e9 --pin-memory --quiet --json "$W/run.json" > /dev/null || fail "run --calibration exit $?"
json "$W/run.json" 'abs(d["loader"]["main_cpu_per_batch_us"] - '"$(json "$W/cal.json" 'd["figures"]["main_cpu_per_batch_us"]["value"]')"') < 1e-6' | grep -qx True || fail "main cost not taken"
# The worker's cost splits into its loop (the workers' per-sample CPU) and its feeder thread's put.
json "$W/run.json" 'abs(d["loader"]["cpu_per_sample_us"] - '"$(json "$W/cal.json" 'd["figures"]["worker_cpu_split"]["loop_per_sample_us"]["value"]')"') < 1e-6' | grep -qx True || fail "loop cost not taken"
json "$W/run.json" 'abs(d["loader"]["worker_put_cpu_per_sample_us"] - '"$(json "$W/cal.json" 'd["figures"]["worker_cpu_split"]["put_per_sample_us"]["value"]')"') < 1e-6' | grep -qx True || fail "put cost not taken"
# The feeder thread's own clock was read: the rest of the worker's CPU is its other threads (the
# resource sharer), burned in one round trip per tensor of the batch as the main process receives it.
json "$W/cal.json" '"other_per_sample_us" in d["figures"]["worker_cpu_split"] and d["figures"]["tensors_per_batch"]["value"] >= 1' \
  | grep -qx True || fail "no other-thread figure or tensors per batch: $(json "$W/cal.json" 'd["figures"]["worker_cpu_split"]')"
json "$W/run.json" 'abs(d["loader"]["worker_other_cpu_per_sample_us"] - '"$(json "$W/cal.json" 'd["figures"]["worker_cpu_split"]["other_per_sample_us"]["value"]')"') < 1e-6' | grep -qx True || fail "other cost not taken"
json "$W/run.json" 'd["loader"]["tensors_per_batch"] >= 1 and sum(w["other_cpu_s"] for w in d["results"]["workers"]) > 0' \
  | grep -qx True || fail "no round trips with the worker's sharer: $(json "$W/run.json" 'd["loader"]')"
json "$W/run.json" 'd["loader"]["calibration"]["function"]' | grep -qx make || fail "calibration not named"
# ioprobe's own read of the files was measured, and the run leaves its engine's figure out of the burn.
json "$W/cal.json" 'd["figures"]["own_read"]["measured"] and d["figures"]["own_read"]["psync_cpu_per_file_us"]["value"] > 0' \
  | grep -qx True || fail "own read not measured: $(json "$W/cal.json" 'd["figures"].get("own_read")')"
ENGINE=$(json "$W/run.json" 'd["target"]["engine"]')
json "$W/run.json" 'abs(d["loader"]["own_read_cpu_per_file_us"] - '"$(json "$W/cal.json" 'd["figures"]["own_read"]["'"$ENGINE"'_cpu_per_file_us"]["value"]')"') < 1e-6' \
  | grep -qx True || fail "run did not take the $ENGINE own read: $(json "$W/run.json" 'd["loader"].get("own_read_cpu_per_file_us")')"
grep -q "ioprobe's own read" "$W/out.txt" || fail "no own read line in the text"
# The feeder's GIL share: measured with 2 CPUs (a share 0..1 the run takes), else the reason.
if [ "$(nproc)" -ge 2 ]; then
  json "$W/cal.json" 'd["figures"]["feeder_gil"]["measured"] and 0 <= d["figures"]["feeder_gil"]["share"]["value"] <= 1' \
    | grep -qx True || fail "feeder GIL share not measured: $(json "$W/cal.json" 'd["figures"].get("feeder_gil")')"
  json "$W/run.json" 'abs(d["loader"]["worker_put_gil_share"] - '"$(json "$W/cal.json" 'd["figures"]["feeder_gil"]["share"]["value"]')"') < 1e-6' \
    | grep -qx True || fail "run did not take the feeder's GIL share: $(json "$W/run.json" 'd["loader"].get("worker_put_gil_share")')"
else
  json "$W/cal.json" 'd["figures"]["feeder_gil"]["method"]' | grep -q "needs 2 CPUs" || fail "one CPU: no reason given"
fi
grep -q "feeder under the GIL" "$W/out.txt" || fail "no feeder GIL line in the text"
# A calibration without the figure (an older one): the run says the share is not measured, and warns.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); del d['figures']['feeder_gil']; json.dump(d, open(sys.argv[2], 'w'))" "$W/cal.json" "$W/nogil.json"
"$IOPROBE" run --data "$W/data" --calibration "$W/nogil.json" --batch-size 32 --workers 1 --cache warm --gpu-samples-per-s 1e9 \
  --json "$W/nogil_run.json" > "$W/nogil.txt" 2>&1 || fail "run without the GIL share: exit $?"
json "$W/nogil_run.json" 'd["loader"]["worker_put_gil_share"] == 1 and d["loader"]["worker_put_gil_share_basis"].startswith("not measured")' \
  | grep -qx True || fail "share without the figure: $(json "$W/nogil_run.json" 'd["loader"]')"
grep -q "GIL share was not measured" "$W/nogil.txt" || fail "no warning for the missing GIL share: $(cat "$W/nogil.txt")"
# Records in shard files are not one file read per sample: nothing is taken off their loop cost.
"$IOPROBE" run --dataset resnet50-tfrecord-like --files 2 --records-per-file 64 --dir "$W/shards" --calibration "$W/cal.json" \
  --batch-size 32 --workers 1 --cache warm --gpu-samples-per-s 1e9 --quiet --json "$W/shard.json" > /dev/null || fail "sharded run exit $?"
json "$W/shard.json" 'd["loader"]["own_read_cpu_per_file_us"]' | grep -qx "0.0" \
  || fail "own read taken off records: $(json "$W/shard.json" 'd["loader"]["own_read_cpu_per_file_us"]')"
# An own read above the loop cost (a Dataset that does not read its files, or an edited document) is said.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['figures']['own_read']; r['io_uring_cpu_per_file_us']=r['psync_cpu_per_file_us']={'value': 5e5, 'min': 5e5, 'max': 5e5}; json.dump(d, open(sys.argv[2], 'w'))" "$W/cal.json" "$W/bigread.json"
"$IOPROBE" run --data "$W/data" --calibration "$W/bigread.json" --batch-size 32 --workers 1 --cache warm \
  --gpu-samples-per-s 1e9 --quiet --json "$W/bigread_run.json" > /dev/null || fail "run with a large own read exit $?"
json "$W/bigread_run.json" 'any("is below ioprobe" in w and "own read of a file" in w for w in d["warnings"])' | grep -qx True \
  || fail "no warning of an own read above the loop cost: $(json "$W/bigread_run.json" 'd["warnings"]')"
json "$W/run.json" 'd["ingest"]["main_ceiling_samples_per_s"] > 0 and d["ingest"]["pin_ceiling_samples_per_s"] > 0' | grep -qx True || fail "no ceilings"
# The pin thread copies for itself: the calibration's pin figure is said not to be used.
json "$W/run.json" 'any("pin_memory figure" in w and "is not used" in w for w in d["warnings"])' | grep -qx True \
  || fail "pin note missing: $(json "$W/run.json" 'd["warnings"]')"
"$IOPROBE" run --data "$W/data" --calibration "$W/cal.json" --cpu-per-sample 5 --quiet > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -q "give one" "$W/e.txt" || fail "--calibration with --cpu-per-sample: $(cat "$W/e.txt")"
echo '{"kind": "calibration", "schema": "ioprobe.calibration/1", "schema_version": 9}' > "$W/bad.json"
"$IOPROBE" run --data "$W/data" --calibration "$W/bad.json" --quiet > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -q "schema_version 9" "$W/e.txt" || fail "bad calibration accepted: $(cat "$W/e.txt")"
# The "schema" field is checked as well, naming the file and the field.
echo '{"kind": "calibration", "schema_version": 1}' > "$W/noschema.json"
"$IOPROBE" run --data "$W/data" --calibration "$W/noschema.json" --quiet > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -qF "noschema.json: field \"schema\" is missing" "$W/e.txt" \
  || fail "calibration without a schema accepted: $(cat "$W/e.txt")"

# The oversubscribed passes (default 2 and 4 worker processes per CPU, on K = min(2, CPUs) CPUs):
# a point per level, and a run at 4 x CPUs workers takes the 4-per-CPU point's costs, saying so.
CPUS=$(nproc); K=$(( CPUS < 2 ? CPUS : 2 ))
json "$W/cal.json" '[(p["workers_per_cpu"], p["num_workers"], p["cpus"]) for p in d["figures"]["oversubscription"]["points"]]' \
  | grep -qxF "[(2.0, $((2 * K)), $K), (4.0, $((4 * K)), $K)]" \
  || fail "oversubscription points: $(json "$W/cal.json" 'd["figures"]["oversubscription"]')"
json "$W/cal.json" 'sum(1 for r in d["rows"] if r.get("oversubscribed"))' | grep -qx 4 || fail "not two passes per level"
grep -q "With more worker processes than CPUs" "$W/out.txt" || fail "no oversubscription lines in the text"
if [ "$CPUS" -le 4 ]; then
  "$IOPROBE" run --data "$W/data" --calibration "$W/cal.json" --batch-size 8 --workers $((4 * CPUS)) --cache warm \
    --gpu-samples-per-s 1e9 --quiet --json "$W/crowd.json" > /dev/null || fail "run at $((4 * CPUS)) workers exit $?"
  json "$W/crowd.json" 'abs(d["loader"]["cpu_per_sample_us"] - '"$(json "$W/cal.json" 'd["figures"]["oversubscription"]["points"][1]["loop_per_sample_us"]')"') < 1e-6' \
    | grep -qx True || fail "crowded run did not take the 4-per-CPU loop cost: $(json "$W/crowd.json" 'd["loader"]')"
  json "$W/crowd.json" 'any("= 4 worker processes per CPU" in w and "measured at this level" in w for w in d["warnings"])' \
    | grep -qx True || fail "no note of the crowding: $(json "$W/crowd.json" 'd["warnings"]')"
  # tune: each point's worker costs at its own level, and the point past the last level named.
  "$IOPROBE" tune --data "$W/data" --calibration "$W/cal.json" --batch-size 8 --cache warm --gpu-samples-per-s 1e9 \
    --workers 1,$((2 * CPUS)),$((3 * CPUS)),$((8 * CPUS)) --prefetch-factors 2 --repeats 1 --point-time 2s \
    --budget 60s --quiet --json "$W/tune.json" > /dev/null
  rc=$?; [ $rc = 0 ] || [ $rc = 1 ] || fail "tune --calibration exit $rc"  # 1: no setting reached a steady state
  json "$W/tune.json" '[p["worker_costs"]["basis"] for p in d["points"]]' \
    | grep -qxF "['uncrowded', 'measured', 'interpolated', 'beyond']" \
    || fail "tune points' worker costs: $(json "$W/tune.json" '[p.get("worker_costs") for p in d["points"]]')"
  json "$W/tune.json" 'any("num_workers '"$((8 * CPUS))"' (8 per CPU)" in w and "level calibrated, 4 worker" in w for w in d["warnings"])' \
    | grep -qx True || fail "tune: no note of the point past the last level: $(json "$W/tune.json" 'd["warnings"]')"
fi
# --oversubscribe none: no passes, no points, and a crowded run is told its costs are the uncrowded ones.
"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --batch-size 32 --samples 192 \
  --python "$PY" --oversubscribe none --json "$W/cal0.json" > /dev/null 2> "$W/err0.txt" || fail "--oversubscribe none exit $?"
! grep -q "worker processes per CPU" "$W/err0.txt" || fail "--oversubscribe none ran the passes"
json "$W/cal0.json" 'd["figures"]["oversubscription"]["measured"]' | grep -qx False || fail "--oversubscribe none measured"
"$IOPROBE" run --data "$W/data" --calibration "$W/cal0.json" --batch-size 8 --workers $((2 * CPUS)) --cache warm \
  --gpu-samples-per-s 1e9 --quiet --json "$W/crowd0.json" > /dev/null || fail "run with cal0 exit $?"
json "$W/crowd0.json" 'any("no figures for more worker processes than CPUs" in w for w in d["warnings"])' \
  | grep -qx True || fail "no note of the missing crowded figures: $(json "$W/crowd0.json" 'd["warnings"]')"
for bad in 1 "2,2" "4,2" "x" "2,,4" 65; do
  "$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --batch-size 32 --samples 192 \
    --python "$PY" --oversubscribe "$bad" > "$W/e.txt" 2>&1
  [ $? = 2 ] && grep -q -- "--oversubscribe '$bad'" "$W/e.txt" && ! grep -q "one pass" "$W/e.txt" \
    || fail "--oversubscribe $bad not refused up front: $(cat "$W/e.txt")"
done
"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --python "$PY" --oversubscribe 4,2 > "$W/e.txt" 2>&1
grep -q "2 is not above 4, the level before it" "$W/e.txt" || fail "--oversubscribe 4,2 does not name the level: $(cat "$W/e.txt")"
"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --python "$PY" --oversubscribe "" > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -q -- "--oversubscribe is empty" "$W/e.txt" || fail "empty --oversubscribe: $(cat "$W/e.txt")"
"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --python "$PY" \
  --oversubscribe-cpus $((CPUS + 1)) > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -q -- "--oversubscribe-cpus $((CPUS + 1)): this process may run on $CPUS CPU" "$W/e.txt" \
  || fail "--oversubscribe-cpus beyond the CPUs: $(cat "$W/e.txt")"

# The user's errors name their file and exit 2.
expect_error() {  # WHAT FACTORY PATTERN [PYTHON]
  "$IOPROBE" calibrate --dataset-factory "$2" --data "$W/data" --batch-size 32 --samples 192 --python "${4:-$PY}" > "$W/e.txt" 2>&1
  local rc=$?
  [ $rc = 2 ] || fail "$1: exit $rc, not 2: $(cat "$W/e.txt")"
  grep -q -- "$3" "$W/e.txt" || fail "$1: message lacks '$3': $(cat "$W/e.txt")"
}
expect_error "missing function" "$W/tiny_ds.py:nope" "tiny_ds.py: defines no function 'nope'"
expect_error "module not found" "$W/bad_import.py:make" "bad_import.py: importing it failed"
expect_error "None samples" "$W/tiny_ds.py:nones" "refuses sample of the Dataset's samples, as a DataLoader would: TypeError: default_collate"
printf '#!/bin/sh\nexec %s -S "$@"\n' "$PY" > "$W/notorch"; chmod +x "$W/notorch"   # -S: no site packages, no torch
expect_error "no torch" "$W/tiny_ds.py:make" "imports torch" "$W/notorch"
# Fewer than 6 batches (3 per worker at num_workers=2) is refused before any pass runs.
"$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" --batch-size 32 --samples 160 \
  --python "$PY" > "$W/e.txt" 2>&1
[ $? = 2 ] && grep -q -- "--samples 160: calibration needs at least 6 batches" "$W/e.txt" && ! grep -q "one pass" "$W/e.txt" \
  || fail "5 batches not refused up front: $(cat "$W/e.txt")"

# Data the user may not read (root runs it as nobody): the directory, then one file, each named
# with what to do, exit 2, before any pass (no Python traceback).
if [ "$(id -u)" = 0 ] && command -v runuser > /dev/null && runuser -u nobody -- true 2> /dev/null \
   && runuser -u nobody -- test -r "$IOPROBE" && runuser -u nobody -- "$PY" -c "import torch" 2> /dev/null; then
  chmod 755 "$W"
  mkdir "$W/noperm"
  cp "$W/data/"* "$W/noperm/"
  chmod 644 "$W/noperm/"*
  chmod 700 "$W/noperm"
  runuser -u nobody -- "$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/noperm" --python "$PY" \
    --batch-size 32 --samples 192 --oversubscribe none > "$W/e.txt" 2>&1
  [ $? = 2 ] && grep -q "cannot read it (permission denied); run as a user who may read it" "$W/e.txt" \
    || fail "unreadable --data: $(cat "$W/e.txt")"
  chmod 755 "$W/noperm"
  chmod 600 "$W/noperm/f100.bin"
  runuser -u nobody -- "$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/noperm" --python "$PY" \
    --batch-size 32 --samples 192 --oversubscribe none > "$W/e.txt" 2>&1
  [ $? = 2 ] && grep -q "cannot read .*noperm/f100.bin: Permission denied; run as a user who may read every file" \
    "$W/e.txt" && ! grep -q Traceback "$W/e.txt" || fail "unreadable file in --data: $(cat "$W/e.txt")"
  echo "ok: unreadable --data and file named"
else
  echo "skip: the unreadable --data part needs root, runuser and a torch Python the user nobody may run"
fi
# No --python: a python3 first on PATH that has no torch is passed over with a warning (the
# calibration goes on with /usr/bin/python3), never an "error:" line.
if [ "$PY" = /usr/bin/python3 ]; then
  mkdir "$W/notorch"
  printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' > "$W/notorch/python3"  # -S: no site-packages, no torch
  chmod +x "$W/notorch/python3"
  PATH="$W/notorch:$PATH" "$IOPROBE" calibrate --dataset-factory "$W/tiny_ds.py:make" --data "$W/data" \
    --batch-size 32 --samples 192 --json "$W/fb.json" > "$W/fb.txt" 2>&1 || fail "calibrate after a python3 without torch: $(cat "$W/fb.txt")"
  grep -q "^ioprobe calibrate: warning: .* cannot import torch .*; trying /usr/bin/python3$" "$W/fb.txt" \
    || fail "the python3 without torch is not named in a warning: $(head -3 "$W/fb.txt")"
  grep -q "error:" "$W/fb.txt" && fail "an error: line before a calibration that succeeded: $(grep error: "$W/fb.txt")"
  echo "ok: a python3 without torch passed over with a warning"
fi
echo "PASS"
