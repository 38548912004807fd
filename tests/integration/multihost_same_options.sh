#!/bin/bash
# Every process of a multi-host job must run one plan: mpirun's MPMD form starts processes with
# different options (`-np 1 ioprobe --workers 4 : -np 1 ioprobe --workers 1`). Each such job is
# refused at set-up, exit 2, before any I/O (no dataset directory, no checkpoint, no raw file
# made), naming the rank, its host, the option and both values; for run, tune, capacity, raw and
# checkpoint. Spellings of one value agree (--gpu h100 = H100-SXM), and --json may differ. And the
# 2-process run's progress line counts the job's GPU ranks, not one process's.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hosts.sh"
command -v mpirun >/dev/null || skip "missing mpirun (tools/setup --test installs openmpi-bin)"
"$IOPROBE" --version >/dev/null || fail "no binary"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-sameopts.XXXXXX")
trap 'rm -rf "$W"' EXIT
host=$(hostname)

# refused NAME "expected text" -- ARGS0 -- ARGS1: rank 0 runs ioprobe ARGS0, rank 1 ioprobe ARGS1.
refused() {
  local name=$1 want=$2; shift 3
  local a0=() a1=()
  while [ "$1" != -- ]; do a0+=("$1"); shift; done
  shift
  a1=("$@")
  local t0 rc took
  t0=$(date +%s)
  HOSTS_TIMEOUT=60 local_mpirun 1 "$IOPROBE" "${a0[@]}" : -np 1 "$IOPROBE" "${a1[@]}" >"$W/$name.out" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  [ "$rc" = 124 ] && { cat "$W/$name.out"; fail "$name: the job hung"; }
  [ "$rc" = 2 ] || { cat "$W/$name.out"; fail "$name: exit $rc, expected 2"; }
  [ "$took" -lt 30 ] || fail "$name: took $took s to refuse"
  grep -qF -- "$want" "$W/$name.out" || { cat "$W/$name.out"; fail "$name: the message lacks '$want'"; }
  grep -q "different options" "$W/$name.out" || { cat "$W/$name.out"; fail "$name: not the options refusal"; }
  [ "$(grep -c 'different options' "$W/$name.out")" = 1 ] || { cat "$W/$name.out"; fail "$name: said more than once"; }
  echo "ok: $name -> $(grep -F -- "$want" "$W/$name.out" | head -1 | sed 's/^ *//')"
}

ds=(--files 64 --file-size 4KiB --file-size-dist fixed --epochs 1 --quiet)
refused run-workers "rank 1 on host $host: --workers 1, rank 0 (host $host) has 4" -- \
  --dir "$W/ds" "${ds[@]}" --workers 4 -- --dir "$W/ds" "${ds[@]}" --workers 1 --batch-size 64
grep -qF -- "--batch-size 64, rank 0 (host $host) has 256" "$W/run-workers.out" ||
  fail "run-workers: --batch-size not named"
[ ! -e "$W/ds" ] || fail "run-workers: the dataset directory was made before the refusal"
refused run-gpu "--gpu a100, rank 0 (host $host) has h100" -- \
  --dir "$W/ds" "${ds[@]}" --gpu h100 -- --dir "$W/ds" "${ds[@]}" --gpu a100
refused run-dir "--dir $W/other" -- --dir "$W/ds" "${ds[@]}" -- --dir "$W/other" "${ds[@]}"
[ ! -e "$W/ds" ] && [ ! -e "$W/other" ] || fail "run-dir: a dataset directory was made before the refusal"
# A preset file's value counts as that option: --files from imagenet-like (50000) against 64.
refused run-preset "--files 64, rank 0 (host $host) has 50000" -- \
  --dir "$W/ds" --file-size 4KiB --quiet -- --dir "$W/ds" --files 64 --file-size 4KiB --quiet
refused gen "--files 32" -- gen --dir "$W/ds" "${ds[@]}" -- gen --dir "$W/ds" --files 32 --file-size 4KiB \
  --file-size-dist fixed --epochs 1 --quiet
tn=(--files 64 --file-size 4KiB --file-size-dist fixed --quiet)
refused tune "--workers 1,2" -- tune --dir "$W/ds" "${tn[@]}" --workers 1 -- tune --dir "$W/ds" "${tn[@]}" --workers 1,2
refused capacity "--max-gpus 4" -- capacity --dir "$W/ds" --files 64 --file-size 4KiB --quiet --max-gpus 2 -- \
  capacity --dir "$W/ds" --files 64 --file-size 4KiB --quiet --max-gpus 4
[ ! -e "$W/ds" ] || fail "gen/tune/capacity: the dataset directory was made before the refusal"
refused raw "--bs 8k, rank 0 (host $host) has 4k" -- raw --filename "$W/t.bin" --size 1MiB --runtime 1s --bs 4k -- \
  raw --filename "$W/t.bin" --size 1MiB --runtime 1s --bs 8k
ls "$W"/t.bin* >/dev/null 2>&1 && fail "raw: a target file was made before the refusal"
refused checkpoint "--size 64MiB, rank 0 (host $host) has 32MiB" -- checkpoint --dir "$W/ck" --size 32MiB --quiet -- \
  checkpoint --dir "$W/ck" --size 64MiB --quiet
[ ! -e "$W/ck" ] || fail "checkpoint: the checkpoint directory was made before the refusal"

# The same plan in other spellings runs; rank 0 alone writes its --json.
HOSTS_TIMEOUT=120 local_mpirun 1 "$IOPROBE" --dir "$W/ds" --files 64 --file-size 4KiB --file-size-dist fixed \
  --workers 4 --gpu h100 --batch-size 8 --json "$W/a.json" : \
  -np 1 "$IOPROBE" --dir "$W/ds" --files 64 --file-size 4KiB --file-size-dist fixed --workers 4 --gpu H100-SXM \
  --batch-size 8 --json "$W/b.json" >"$W/same.out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$W/same.out"; fail "the same options in other spellings: exit $rc"; }
[ -s "$W/a.json" ] || fail "rank 0 wrote no document"
grep -q "ioprobe run: reading .* 2 GPU rank(s) (1 per process x 2 processes) x 4 workers" "$W/same.out" ||
  { grep "ioprobe run: reading" "$W/same.out"; fail "the progress line does not count the job's 2 GPU ranks"; }
echo "ok: h100 = H100-SXM and different --json values run; $(grep 'ioprobe run: reading' "$W/same.out")"
