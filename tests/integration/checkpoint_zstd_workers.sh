#!/bin/bash
# zstd's multithreading never starts on chunks below its job size (~8 MiB at levels 3-4), and a
# save is either compression-bound or write-bound. 64 MiB of text-like state (--data text) at
# zstd level 3 with 2 zstd workers, in 4 MiB and in 32 MiB chunks, then 64 MiB of random bytes
# (--data random):
#  - the workers that can be busy per chunk and the job size are reported; 4 MiB chunks (below
#    zstd's job size) get the warning that multithreading stays off, 32 MiB chunks do not;
#  - the size on disk equals stat of the written files (kept with --keep), and
#    ratio = 67,108,864 / that size;
#  - random data: ratio <= 1.00 and no saving claimed;
#  - the bound (write or compression) follows from the two limits measured in the run;
#  - user CPU time and wall time are both shown.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-c5.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The documents match reports/result.schema.json (where python3-jsonschema is installed).
schema_ok() {
  [ -n "${IOPROBE_SOURCE_DIR:-}" ] && python3 -c "import jsonschema" 2>/dev/null || { echo "note: schema check not run"; return 0; }
  python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
    "$IOPROBE_SOURCE_DIR/reports/result.schema.json" "$1" || fail "$1 does not match reports/result.schema.json"
}
run() {  # NAME DATA CHUNK POOL
  local name=$1
  "$IOPROBE" checkpoint --quiet --dir "$work/$name" --size 64MiB --data "$2" --chunk-size "$3" --compress zstd:3 \
    --compress-threads 2 --compress-pool "$4" --keep --json "$work/$name.json" > "$work/$name.txt" 2> "$work/$name.err" \
    || fail "$name: exit $?: $(cat "$work/$name.err")"
  echo "== $name"; cat "$work/$name.txt" "$work/$name.err"
  # stat of every file the save published (one shard per rank), summed.
  find "$work/$name" -maxdepth 1 -type f -name '__*.distcp' -printf '%s\n' | awk '{s += $1} END {print s + 0}' > "$work/$name.stat"
}
# The case's scenario is zstd's own multithreading (--compress-pool zstd); ioprobe's default pool
# (its own threads, one frame per 4 MiB piece across chunk boundaries) must show measured busy
# workers instead and no job-size warning, even with 4 MiB chunks.
run text-4m text 4MiB zstd
run text-32m text 32MiB zstd
run random random 32MiB zstd
run text-4m-ioprobe text 4MiB ioprobe

for name in text-4m text-32m random text-4m-ioprobe; do
  python3 - "$work/$name.json" "$work/$name.txt" "$(cat "$work/$name.stat")" "$name" <<'PY' || fail "$name: checks failed"
import json, sys
doc = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
on_disk_stat, name = int(sys.argv[3]), sys.argv[4]
c = doc["checkpoint"]; s = c["save"]; cfg = c["config"]; cmp = c["comparison"]
warnings = doc.get("warnings", [])
def expect(cond, what):
    if not cond:
        print("check failed:", what); sys.exit(1)
    print("ok:", what)
logical = 67108864
expect(s["ok"] and s["logical_bytes"] == logical, "64 MiB saved")
expect(c["state"]["content"] == ("random" if name == "random" else "text"), "the data kind is recorded")
expect(cfg["compress"] == "zstd:3" and cfg["compress_threads_per_rank"] == 2, "zstd level 3, 2 workers")
job, busy = cfg["zstd_job_bytes"], cfg["zstd_workers_busy_per_chunk"]
below = [w for w in warnings if "below zstd's job size" in w]
if name.endswith("-ioprobe"):
    comp = s.get("compression", {})
    expect(cfg["compress_pool"] == "ioprobe" and comp.get("pool") == "ioprobe", "ioprobe's own pool ran")
    expect(0 < comp.get("workers_busy_mean_per_rank", 0) <= 2,
           f"measured busy workers {comp.get('workers_busy_mean_per_rank')} of 2")
    expect("compression workers busy (measured" in text, "measured busy workers printed")
    expect(not below, "no job-size warning: pieces cross chunk boundaries")
else:
    expect(cfg["compress_pool"] == "zstd", "zstd's own pool ran")
    expect(job > 0 and "job size" in text and "can be busy per chunk" in text,
           f"job size {job:,} B and busy workers {busy} shown")
    if name == "text-4m":
        expect(cfg["chunk_bytes"] < job, "4 MiB chunks are below the job size")
        expect(busy == 1, "one worker busy per 4 MiB chunk")
        expect(below and "multithreading stays off" in below[0], "warned: multithreading stays off")
    else:
        expect(cfg["chunk_bytes"] >= 2 * job and busy == 2, "32 MiB chunks keep both workers busy")
        expect(not below, "no job-size warning")
expect(on_disk_stat > 0 and s["bytes_on_disk"] == on_disk_stat,
       f"size on disk {s['bytes_on_disk']:,} B = stat of the written files {on_disk_stat:,} B")
expect(abs(s["ratio"] - logical / on_disk_stat) <= 1e-9 * s["ratio"], f"ratio {s['ratio']:.4f} = 67,108,864 / stat")
if name == "random":
    expect(round(s["ratio"], 2) <= 1.0, f"random data: ratio {s['ratio']:.4f} <= 1.00 (2 decimals, as printed)")
    expect("no saving" in text and "saved" not in text, "random data: no saving claimed")
else:
    expect(s["ratio"] > 2.0, f"text-like data compresses ({s['ratio']:.2f}x)")
    expect("no saving" not in text, "text: no 'no saving' label")
if cmp.get("available", True) and "bound" in cmp:
    want = "write" if cmp["write_limit_bytes_per_s"] <= cmp["cpu_limit_bytes_per_s"] else "compression"
    expect(cmp["bound"] == want, f"{want}-bound: write x ratio {cmp['write_limit_bytes_per_s'] / 1e6:.1f} MB/s vs "
                                 f"cores x zstd {cmp['cpu_limit_bytes_per_s'] / 1e6:.1f} MB/s")
    expect(f"-> {want}-bound" in text, "the bound is printed")
else:
    print("note: no raw baseline in this run:", cmp.get("reason"))
expect(s["user_cpu_s"] > 0 and s["ranks_done_s"] > 0, "user CPU and wall time measured")
expect("CPU user" in text and "wall" in text, "user CPU and wall time printed")
PY
  schema_ok "$work/$name.json"
done
echo PASS
