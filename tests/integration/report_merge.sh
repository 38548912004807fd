#!/bin/bash
# `ioprobe report --merge`: two real short runs combined into one result. Samples, bytes and
# histogram counts add, elapsed is the longest, rates are totals / the longest elapsed, and the
# merged p99 (from the added buckets) lies between the inputs' p99s; the two runs' device figures
# (one after the other on this host) add, with a warning that they did not run at once. Documents of different
# kinds, without latency buckets (older ones) or with different timeline intervals are refused
# with exit 2 and a message naming the problem.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-merge.XXXXXX")
trap 'rm -rf "$W"' EXIT
for n in a b; do
  "$IOPROBE" --dir "$W/d$n" --files 200 --quiet --json "$W/$n.json" >"$W/run_$n.out" 2>&1 \
    || { rc=$?; cat "$W/run_$n.out"; fail "run $n: exit $rc"; }
done
"$IOPROBE" report --merge "$W/a.json" "$W/b.json" --json "$W/m.json" >"$W/out" 2>&1 \
  || { rc=$?; cat "$W/out"; fail "report --merge: exit $rc"; }
grep -E "delivered|Sources|a\.json|b\.json|not available" "$W/out"
grep -q "Sources (merged" "$W/out" || fail "the text report has no Sources section"
grep -q "device I/O" "$W/out" || fail "the merged text report has no device I/O line"
python3 - "$W/a.json" "$W/b.json" "$W/m.json" <<'PY' || fail "the merged document does not add up"
import json, sys
a, b, m = (json.load(open(p)) for p in sys.argv[1:4])
ra, rb, rm = a["results"], b["results"], m["results"]
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    return ok
ok = True
ok &= check(rm["samples"] == ra["samples"] + rb["samples"] == 400, f"samples {rm['samples']} = {ra['samples']} + {rb['samples']}")
ok &= check(rm["bytes"] == ra["bytes"] + rb["bytes"], "bytes summed")
ok &= check(rm["elapsed_s"] == max(ra["elapsed_s"], rb["elapsed_s"]), "elapsed = max")
ok &= check(abs(rm["samples_per_s"] - rm["samples"] / rm["elapsed_s"]) <= 1e-9 * rm["samples_per_s"], "samples/s = total / max elapsed")
for key in ("file_latency_us", "open_close_latency_us", "batch_wait_us"):
    la, lb, lm = ra[key], rb[key], rm[key]
    ok &= check(lm["count"] == la["count"] + lb["count"], f"{key} count {lm['count']} = {la['count']} + {lb['count']}")
    ok &= check(sum(c for _, c in lm["buckets"]) == lm["count"], f"{key} buckets hold every value")
    # One histogram's buckets added to the other's, bucket by bucket.
    added = {}
    for lo, c in la["buckets"] + lb["buckets"]:
        added[lo] = added.get(lo, 0) + c
    ok &= check(sorted(added.items()) == [tuple(x) for x in lm["buckets"]], f"{key} buckets are the sum of the inputs'")
    lo, hi = min(la["p99"], lb["p99"]), max(la["p99"], lb["p99"])
    ok &= check(lo * (1 - 1 / 64) <= lm["p99"] <= hi * (1 + 1 / 64), f"{key} p99 {lm['p99']} within [{lo}, {hi}] (to the bucket)")
    ok &= check(lm["max"] == max(la["max"], lb["max"]) and lm["min"] == min(la["min"], lb["min"]), f"{key} min/max")
ok &= check(sum(p["samples"] for p in rm["timeline"]) == rm["samples"], "timeline samples add up")
ok &= check(len(m["sources"]) == 2 and m["sources"][1]["samples"] == rb["samples"], "sources list each input")
ok &= check(m["ingest"]["available"] is False and "per rank" in m["ingest"]["reason"], "ingest dropped with a reason")
# Device I/O: both runs measured this host's devices, one after the other (disjoint intervals):
# their figures add (each read its own bytes), and a warning says the runs did not overlap in
# time, so the merged rates measure no concurrent load.
da, db, dm = ra["device_io"], rb["device_io"], rm.get("device_io")
ok &= check(dm is not None and "merge_note" in dm, "device_io merged, with its note")
if dm is not None:
    ok &= check(dm["bytes_read"] == da["bytes_read"] + db["bytes_read"], f"one host's device reads at two times {dm['bytes_read']}: added")
    ok &= check("disjoint" in dm["merge_note"], "the note says the intervals were disjoint")
    ok &= check(dm["reference_bytes"] == rm["bytes"], "device read ratio against the merged bytes")
ok &= check(any("did not run at the same time" in w for w in m["warnings"]), "a warning: the runs did not overlap in time")
ok &= check(len(rm.get("epochs", [])) == 1 and rm["epochs"][0]["samples"] == rm["samples"], "epochs merged")
sys.exit(0 if ok else 1)
PY
if python3 -c "import jsonschema" 2>/dev/null; then
  for f in a.json m.json; do
    python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
      "$(dirname "$0")/../../reports/result.schema.json" "$W/$f" || fail "$f does not match reports/result.schema.json"
  done
  echo "ok: a.json and m.json match reports/result.schema.json"
else
  echo "note: python3-jsonschema absent; schema validation not run"
fi
# The merged document merges again (its results keep their buckets).
# (with another result: merging it with one of its own inputs is refused below, as double counting)
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['created_utc']='2000-01-01T00:00:00Z'; json.dump(d,open(sys.argv[2],'w'))" \
  "$W/b.json" "$W/c.json"
"$IOPROBE" report --merge "$W/m.json" "$W/c.json" >/dev/null 2>&1 || fail "a merged document does not merge again"

refused() {  # refused PATTERN ARGS...: exit 2 and PATTERN in the message
  local pat=$1; shift
  "$IOPROBE" report --merge "$@" >"$W/err" 2>&1
  local rc=$?
  [ "$rc" = 2 ] || { cat "$W/err"; fail "report --merge $*: exit $rc, expected 2"; }
  grep -q "$pat" "$W/err" || { cat "$W/err"; fail "report --merge $*: message lacks '$pat'"; }
  echo "refused: $(head -c 300 "$W/err")"
}
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
a = json.load(open(f"{w}/a.json"))
old = json.loads(json.dumps(a))
for k in ("file_latency_us", "open_close_latency_us", "batch_wait_us"):
    old["results"][k].pop("buckets")
json.dump(old, open(f"{w}/old.json", "w"))
other = json.loads(json.dumps(a)); other["kind"] = "checkpoint"
json.dump(other, open(f"{w}/kind.json", "w"))
half = json.loads(json.dumps(a)); half["results"]["timeline_interval_s"] = 0.5
json.dump(half, open(f"{w}/interval.json", "w"))
PY
refused "missing key 'buckets'" "$W/a.json" "$W/old.json"
refused "only documents of one kind merge" "$W/a.json" "$W/kind.json"
refused "are the same result" "$W/a.json" "$W/a.json"
refused "count its samples twice" "$W/m.json" "$W/a.json"
cp "$W/a.json" "$W/a-copy.json" && refused "count its samples twice" "$W/a.json" "$W/b.json" "$W/a-copy.json"
refused "timeline intervals" "$W/a.json" "$W/interval.json"
refused "two or more" "$W/a.json"
refused "would replace the input" "$W/a.json" "$W/b.json" --json "$W/a.json"
echo "ok: report --merge adds two runs and refuses what it cannot merge"
