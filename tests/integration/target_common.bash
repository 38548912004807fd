# Shared by tests/integration/target_*.sh (sourced; not a test itself: the glob takes *.sh only).
# Each test creates its own target, registers cleanup steps with on_exit, and exits 77 to skip.
set -u
IOPROBE=${1:?usage: $0 path/to/ioprobe}
WORK=$(mktemp -d /var/tmp/ioprobe-target.XXXXXX)
CLEANUP=()
on_exit() { CLEANUP=("$1" "${CLEANUP[@]}"); }   # run in reverse order of registration
cleanup() {
  local step
  for step in "${CLEANUP[@]}"; do eval "$step" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root ($*)"; }
need_cmd() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "'$c' not installed"; done; }

# make_ext4_loop SIZE: ext4 on a loop device over a file of SIZE in $WORK, mounted at $MNT; sets
# MNT and LOOP (the /dev/loopN path); undone at exit. Skips (77) without root, losetup,
# mkfs.ext4 or a free loop device. A loop device counts its own requests in /proc/diskstats,
# whatever the host's page cache of the backing file does.
make_ext4_loop() {
  local size=$1
  need_root "losetup and mount"
  need_cmd losetup mkfs.ext4
  MNT=$WORK/mnt && mkdir -p "$MNT"
  truncate -s "$size" "$WORK/ext4.img"
  LOOP=$(losetup -f --show "$WORK/ext4.img" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
  on_exit "losetup -d '$LOOP'"
  mkfs.ext4 -q -F "$LOOP" || fail "mkfs.ext4 $LOOP"
  mount "$LOOP" "$MNT" || skip "cannot mount ext4 from $LOOP"
  on_exit "umount -l '$MNT'"
}

# make_btrfs_raid0 SIZE: btrfs raid0 (data and metadata) over two loop devices of SIZE each on
# files in $WORK, mounted at $MNT; sets MNT and LOOPS (the /dev/loopN paths); everything is undone
# at exit. Skips (77) without root, losetup, mkfs.btrfs, btrfs in the kernel or a free loop device.
make_btrfs_raid0() {
  local size=$1 i L
  need_root "losetup and mount"
  need_cmd losetup mkfs.btrfs
  grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || skip "kernel has no btrfs"
  grep -qw btrfs /proc/filesystems || skip "kernel has no btrfs"
  MNT=$WORK/mnt && mkdir -p "$MNT"
  LOOPS=()
  for i in 0 1; do
    truncate -s "$size" "$WORK/btrfs$i.img"
    L=$(losetup -f --show "$WORK/btrfs$i.img" 2>/dev/null) || skip "no free loop device (losetup -f failed)"
    on_exit "losetup -d '$L'"
    LOOPS+=("$L")
  done
  mkfs.btrfs -q -f -d raid0 -m raid0 "${LOOPS[@]}" >/dev/null || fail "mkfs.btrfs raid0 ${LOOPS[*]}"
  mount -o "device=${LOOPS[1]}" "${LOOPS[0]}" "$MNT" || skip "cannot mount btrfs from ${LOOPS[*]}"
  on_exit "umount -l '$MNT'"
}

# Writes N files of SIZE bytes of random data into DIR.
make_files() {
  local dir=$1 n=$2 size=$3 i
  for ((i = 0; i < n; i++)); do head -c "$size" /dev/urandom >"$dir/f$i.bin" || fail "cannot write $dir/f$i.bin"; done
}

# Runs `ioprobe probe --dir DIR --json FILE` and prints the text report.
probe() {
  "$IOPROBE" probe --dir "$1" --json "$2" || fail "ioprobe probe --dir $1 exited $?"
}

# check_json FILE PYTHON: runs PYTHON with `t` = the document's target, `d` = the document,
# and `o_direct_truth(path)` = what the kernel says about O_DIRECT on that file.
check_json() {
  python3 - "$1" "$2" <<'PY' || fail "JSON checks failed"
import json, mmap, os, sys
d = json.load(open(sys.argv[1]))
t = d["target"]
def o_direct_truth(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return "refused"
    try:
        buf = mmap.mmap(-1, 4096)  # page-aligned
        os.preadv(fd, [buf], 0)
        return "accepted"
    except OSError:
        return "refused"
    finally:
        os.close(fd)
def expect(cond, what):
    if not cond:
        print("check failed:", what, "\ntarget:", json.dumps(t, indent=1))
        sys.exit(1)
    print("ok:", what)
exec(sys.argv[2])
PY
}

# loader_run DIR: a short `ioprobe run --data DIR` must read every byte of every file once, and
# name the same filesystem as the probe. Cold (the default) on each target, as the kernel allows.
loader_run() {
  local dir=$1 out="$WORK/run.json"
  "$IOPROBE" --quiet --data "$dir" --workers 2 --batch-size 4 --json "$out" >"$WORK/run.txt" 2>&1 \
    || fail "ioprobe run --data $dir exited $?: $(cat "$WORK/run.txt")"
  python3 - "$out" "$dir" <<'PY' || fail "loader run checks failed"
import json, os, sys
d = json.load(open(sys.argv[1])); root = sys.argv[2]
files = [os.path.join(p, f) for p, _, fs in os.walk(root) for f in fs if not f.startswith(".ioprobe-")]
want_bytes = sum(os.path.getsize(f) for f in files)
r = d["results"]
assert r["samples"] == len(files), f"samples {r['samples']} != {len(files)} files"
assert r["bytes"] == want_bytes, f"bytes {r['bytes']} != {want_bytes}"
assert r["errors"] == 0, "read errors"
print(f"ok: loader read {r['samples']} files, {r['bytes']} B, cache={d['target']['cache_detail']}, engine={d['target']['engine']}")
PY
}
