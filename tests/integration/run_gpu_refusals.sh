#!/usr/bin/env bash
# --h2d cuda and --engine gds without a GPU (or without CUDA or libcufile in the build) refuse with
# exit 2, naming what is missing and what to do, before any dataset is generated; raw --engine gds
# likewise.
set -u
IOPROBE=$1
. "$(dirname "$0")/lib.sh"
# raw --engine gds: the same specific refusal as run's (no cuFile reader in any build, GPU or not),
# not a generic "not one of" list, and no target file made.
out=$("$IOPROBE" raw --filename /var/tmp/ioprobe-gds-refusal.bin --size 1MiB --runtime 1s --engine gds 2>&1); rc=$?
[ $rc = 2 ] || fail "raw --engine gds exited $rc, expected 2: $out"
echo "$out" | grep -qE -- "--engine gds: .*no cuFile \(GPUDirect Storage\) reader yet.*gdsio" ||
  fail "raw --engine gds: not the GDS refusal: $out"
[ ! -e /var/tmp/ioprobe-gds-refusal.bin ] || fail "raw --engine gds made its target file before refusing"
echo "ok: raw --engine gds -> $out"

if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  skip "a GPU is present here: the refusals are not what this host gives (tools/device-check measures it)"
fi
work=$(mktemp -d /var/tmp/ioprobe-gpu-refusal-XXXXXX)
trap 'rm -rf "$work"' EXIT

refused() {  # refused "option text" pattern args...
  local what=$1 pattern=$2; shift 2
  local out rc
  out=$("$IOPROBE" run --quiet --dir "$work/ds" --files 8 --file-size 4KiB "$@" 2>&1); rc=$?
  [ $rc = 2 ] || fail "ioprobe run $* exited $rc, expected 2: $out"
  echo "$out" | grep -qF -- "$what" || fail "ioprobe run $*: message lacks '$what': $out"
  echo "$out" | grep -qE -- "$pattern" || fail "ioprobe run $*: message says neither what is missing nor what to do: $out"
  [ ! -e "$work/ds" ] || fail "ioprobe run $*: generated a dataset before refusing"
  echo "ok: $* -> $out"
}
refused "--h2d cuda: " "built without CUDA.*rebuild|no CUDA GPU is usable here \(cudaGetDeviceCount.*NVIDIA GPU and its driver" --h2d cuda
refused "--engine gds: " "no cuFile \(GPUDirect Storage\) reader yet" --engine gds
refused "--h2d" "cuda" --h2d gpu
