#!/bin/bash
# `ioprobe replay` across two real hosts on this one machine (lib_hosts.sh), 2 MPI ranks each, of a
# trace with one recorded rank (tests/fixtures/trace/loader.trace): rank 0 replays it, ranks 1-3
# clone it, each onto its own copy laid out under DIR/rank-K on its host's local disk. Checks one
# report (rank 0's), the merged result adding up exactly (4 x the trace's 346,608 B, 12 streams,
# 4 processes, each process's streams marked with its rank), and the clones' layouts on each host.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-mhreplay.XXXXXX")
TRACE=$(cd "$(dirname "$0")/../fixtures/trace" && pwd)/loader.trace
hosts_up 2
echo "hosts up"

hosts_mpirun 4 "$IOPROBE" replay "$TRACE" --dir "$HOSTS_LOCAL/replay" --json "$W/r.json" --quiet >"$W/out" 2>&1
rc=$?
cat "$W/out"
[ "$rc" = 0 ] || fail "replay across hosts: exit $rc"
[ "$(grep -c '^REPLAY' "$W/out")" = 1 ] || fail "expected exactly one report (rank 0's)"
python3 - "$W/r.json" <<'PY' || fail "the merged replay does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["replay"]
assert r["processes"] == 4, r["processes"]
assert r["bytes"] == 4 * 346608, r["bytes"]
assert r["mapped_bytes"] == 4 * 65536, r["mapped_bytes"]
assert r["errors"] == 0, r["first_error"]
assert len(r["streams"]) == 12, len(r["streams"])
assert sorted({s["replay_rank"] for s in r["streams"]}) == [0, 1, 2, 3]
assert all(s["rank"] == 0 for s in r["streams"]), "every process replays recorded rank 0"
assert r["timeline"]["batches"] == 4 * 3, r["timeline"]["batches"]
assert r["elapsed_ns"] == max(s["elapsed_ns"] for s in r["streams"])
assert "cloned" in d["settings"]["rank_rule"], d["settings"]["rank_rule"]
PY
# h1 holds ranks 0 and 1, h2 ranks 2 and 3: rank 0's layout is DIR itself, a clone's DIR/rank-K.
on_host 1 test -f "$HOSTS_LOCAL/replay/data/train/a.bin" || fail "h1: rank 0's layout missing"
on_host 1 test -f "$HOSTS_LOCAL/replay/rank-1/data/train/a.bin" || fail "h1: rank 1's clone layout missing"
on_host 2 test -f "$HOSTS_LOCAL/replay/rank-3/data/train/b.bin" || fail "h2: rank 3's clone layout missing"
echo "ok: 4 processes on 2 hosts replayed 4 x 346,608 B, merged by rank 0"
echo PASS
