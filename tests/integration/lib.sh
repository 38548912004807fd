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
