#!/usr/bin/env bash
# `ioprobe report` reads every section of the saved documents strictly (tests/fixtures/documents):
# raw's target and device I/O, the cluster and hosts sections of tune, capacity and checkpoint
# documents across hosts (added here to the one-host documents), and a run or tune document given
# for a comparison. A missing or mistyped field exits 2 naming the file and the field's path
# ('FILE'.SECTION.KEY); the unedited documents, and the edited ones with whole sections, render.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
docs=$(cd "$(dirname "$0")/../fixtures/documents" && pwd)
work=$(mktemp -d /var/tmp/ioprobe-reptypedsaved-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# edit NAME SOURCE PYTHON: a copy of the saved document SOURCE as NAME.json, changed by PYTHON (on d).
edit() {
  python3 - "$1" "$docs/$2" "$3" <<'PY' || fail "editing $2 for $1"
import json, sys
d = json.load(open(sys.argv[2]))
tune_cluster = {"launcher": "mpirun", "hosts": 2, "mpi_ranks": 2, "gpu_ranks": 2, "dataset_placement": "shared",
                "dataset_placement_how": "one directory", "merge": "summed"}
capacity_cluster = {"launcher": "mpirun", "hosts": 2, "hostnames": ["h1", "h2"], "mpi_ranks": 2,
                    "dataset_placement": "shared", "dataset_placement_how": "one directory", "split": "evenly",
                    "merge": "summed"}
ckpt_cluster = {"launcher": "mpirun", "hosts": 2, "mpi_ranks": 2, "ckpt_ranks": 2, "dir_placement": "shared",
                "restore_placement": "each host its own", "merge": "max over ranks", "save_bytes": 1048576,
                "save_duration_max_s": 0.5, "save_bytes_per_s": 2097152.0}
ckpt_hosts = [{"hostname": h, "host_index": i, "mpi_ranks": [i], "ckpt_ranks": [i],
               "results": {"save_bytes": 524288, "save_duration_max_s": 0.4, "time_to_durable_s": 0.5,
                           "save_bytes_per_s": 1048576.0, "min_rank_bytes_per_s": 1048576.0}}
              for i, h in enumerate(["h1", "h2"])]
exec(sys.argv[3])
json.dump(d, open(sys.argv[1] + ".json", "w"))
PY
}
expect2() {  # expect2 NAME "text"...: report NAME.json exits 2 and says each text
  local f=$1.json out rc; shift
  out=$("$IOPROBE" report "$f" 2>&1); rc=$?
  [ $rc = 2 ] || fail "report $f exited $rc, expected 2: $out"
  for want in "$@"; do
    echo "$out" | grep -qF -- "$want" || fail "report $f: message lacks '$want': $out"
  done
  echo "ok: $f -> $out"
}
expect0() {  # expect0 NAME "text": report NAME.json renders and shows the text
  local out
  out=$("$IOPROBE" report "$1.json" 2>&1) || fail "report $1.json refused: $out"
  echo "$out" | grep -qF -- "$2" || fail "report $1.json lacks '$2': $out"
}
for f in raw_read raw_write tune_cut capacity_small checkpoint_small run_small; do
  "$IOPROBE" report "$docs/$f.json" > /dev/null || fail "the saved $f.json is refused"
done

# raw: target and device_io
edit rawfs raw_read.json 'del d["target"]["fs_type"]'
expect2 rawfs "'rawfs.json'.target: missing key 'fs_type'"
edit rawfree raw_read.json 'd["target"]["free_bytes"] = "plenty"'
expect2 rawfree "'rawfree.json'.target.free_bytes: expected a non-negative integer in range, found \"plenty\""
edit rawio raw_read.json 'd["raw"]["results"]["device_io"]["bytes_read"] = "4 MiB"'
expect2 rawio "'rawio.json'.raw.results.device_io.bytes_read: expected a non-negative integer in range"
edit rawratio raw_write.json 'del d["raw"]["results"]["device_io"]["write_ratio"]'
expect2 rawratio "'rawratio.json'.raw.results.device_io: reference_bytes without read_ratio or write_ratio"

# tune: cluster
edit tunec tune_cut.json 'd["cluster"] = tune_cluster'
expect0 tunec "across     2 host(s), 2 MPI rank(s), 2 GPU rank(s), started by mpirun"
edit tunecm tune_cut.json 'd["cluster"] = tune_cluster; del d["cluster"]["merge"]'
expect2 tunecm "'tunecm.json'.cluster: missing key 'merge'"
edit tunech tune_cut.json 'd["cluster"] = tune_cluster; d["cluster"]["gpu_ranks"] = "2"'
expect2 tunech "'tunech.json'.cluster.gpu_ranks: expected a non-negative integer in range, found \"2\""

# capacity: cluster
edit capc capacity_small.json 'd["cluster"] = capacity_cluster'
expect0 capc "hosts      2 (h1, h2), 2 MPI ranks, mpirun"
edit capcn capacity_small.json 'd["cluster"] = capacity_cluster; d["cluster"]["hostnames"] = "h1,h2"'
expect2 capcn "'capcn.json'.cluster.hostnames: expected an array, found \"h1,h2\""
edit capcs capacity_small.json 'd["cluster"] = capacity_cluster; del d["cluster"]["split"]'
expect2 capcs "'capcs.json'.cluster: missing key 'split'"

# checkpoint: cluster and hosts
edit ckc checkpoint_small.json 'd["cluster"] = ckpt_cluster; d["hosts"] = ckpt_hosts'
expect0 ckc "2 host(s), 2 MPI rank(s), 2 checkpoint rank(s)"
edit ckcd checkpoint_small.json 'd["cluster"] = ckpt_cluster; d["hosts"] = ckpt_hosts; del d["cluster"]["dir_placement"]'
expect2 ckcd "'ckcd.json'.cluster: missing key 'dir_placement'"
edit ckhb checkpoint_small.json 'd["cluster"] = ckpt_cluster; d["hosts"] = ckpt_hosts
d["hosts"][1]["results"]["save_bytes"] = "512 KiB"'
expect2 ckhb "'ckhb.json'.hosts[1].results.save_bytes: expected a non-negative integer in range, found \"512 KiB\""
edit ckhn checkpoint_small.json 'd["cluster"] = ckpt_cluster'
expect2 ckhn "'ckhn.json': missing key 'hosts'"

# run: a section's path is the file's, then its keys
edit runl run_small.json 'del d["loader"]["num_workers"]'
expect2 runl "'runl.json'.loader: missing key 'num_workers'"

# a comparison reads the typed documents: an edited one is refused before any table
out=$("$IOPROBE" report "$docs/run_small.json" tunech.json 2>&1); rc=$?
[ $rc = 2 ] || fail "comparison with an edited tune exited $rc: $out"
echo "$out" | grep -qF "'tunech.json'.cluster.gpu_ranks: expected" || fail "comparison message: $out"
echo "$out" | grep -qF "Comparison" && fail "a table was printed before the refusal: $out"
"$IOPROBE" report "$docs/run_small.json" tunec.json | grep -qF "Comparison" || fail "the comparison is not printed"
echo "ok: report refuses edited target, device_io, cluster and hosts fields of saved documents by their path"
