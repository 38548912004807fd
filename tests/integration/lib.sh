# Shared helpers for integration tests; sourced by them (tests/CMakeLists.txt does not register it).
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# Sum of the sizes of all regular files under DIR, ioprobe's own manifest files excluded.
sum_sizes() { find "$1" -type f ! -name '.ioprobe-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
# scratch_mount NAME FSTYPE [MOUNT OPTIONS]: as root, a work directory W (removed at exit) with a
# fresh FSTYPE mounted at MNT=$W/mnt (unmounted at exit); skips where that cannot be done.
scratch_mount() {
  [ "$(id -u)" = 0 ] || skip "needs root to mount $2"
  W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-$1.XXXXXX")
  MNT=$W/mnt
  mkdir "$MNT"
  trap 'umount "$MNT" 2>/dev/null; rm -rf "$W"' EXIT
  mount -t "$2" ${3:+-o "$3"} "ioprobe-$1" "$MNT" || skip "cannot mount $2"
}

# scratch_dir NAME: a work directory W under /var/tmp (a disk, not tmpfs), removed at exit.
scratch_dir() {
  W=$(mktemp -d "/var/tmp/ioprobe-$1-XXXXXX") || fail "cannot make a work directory under /var/tmp"
  trap 'rm -rf "$W"' EXIT
}

# torch_python: prints the first of /usr/bin/python3, python3 that imports torch; skips (77) when
# none does; IOPROBE_TEST_PYTHON=PY (an absolute path: ctest runs in build/) tries only PY, e.g. the
# calibrate tests under PyTorch 2.x with .venv-torch2/bin/python. Usage: PY=$(torch_python) || exit 77
torch_python() {
  local p
  for p in ${IOPROBE_TEST_PYTHON:-/usr/bin/python3 python3}; do
    if "$p" -c 'import torch' 2>/dev/null; then command -v "$p"; return 0; fi
  done
  if [ -n "${IOPROBE_TEST_PYTHON:-}" ]; then
    echo "SKIP: IOPROBE_TEST_PYTHON=$IOPROBE_TEST_PYTHON does not import torch" >&2
  else
    echo "SKIP: no python3 imports torch (tools/setup --test installs python3-torch)" >&2
  fi
  return 77
}
