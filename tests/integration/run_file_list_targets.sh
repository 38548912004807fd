#!/usr/bin/env bash
# The target is where the files are, not the working directory.
#  1. a --file-list mixing files on tmpfs (/dev/shm) and on ext4, run from a third directory:
#     "targets" has both filesystems with their share of files and bytes; "target" is the one
#     with the most bytes; O_DIRECT is used only when both accept it.
#  2. ext4 files listed from a tmpfs working directory are not labelled RAM.
#  3. a list whose first path is missing still gets O_DIRECT on ext4 (the probe uses a file that
#     exists), names the missing path, and exits 1 for the unread file.
#  4. --data DIR on tmpfs from an ext4 working directory is labelled tmpfs (RAM).
#  5. (root) a list mixing ext4 and ramfs, which refuses O_DIRECT: the run is buffered and says
#     which filesystem refused; --direct on stops (exit 2) naming it.
#  6. a list of which no path exists is refused before any read (exit 2), naming the first path.
set -u
IOPROBE=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not tmpfs"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-targets-XXXXXX")
S=$(mktemp -d /dev/shm/ioprobe-targets-XXXXXX)
R=
trap '[ -n "$R" ] && umount "$R" 2>/dev/null; rm -rf "$W" "$S"' EXIT
case "$(stat -f -c %T "$W")" in ext2/ext3|xfs|btrfs) ;; *) skip "$W is $(stat -f -c %T "$W"), not a disk filesystem";; esac
mkdir "$W/disk" "$W/cwd" "$S/ram" "$S/cwd"
for i in 0 1 2 3; do head -c 65536 /dev/urandom > "$W/disk/f$i"; done
for i in 0 1; do head -c 65536 /dev/urandom > "$S/ram/f$i"; done
common=(--quiet --workers 1 --batch-size 2 --gpu-samples-per-s 1000)

# 1. Mixed list from a third directory.
printf '%s\n' "$S/ram/f0" "$W/disk/f0" "$W/disk/f1" "$S/ram/f1" "$W/disk/f2" "$W/disk/f3" > "$W/mixed.txt"
(cd "$W/cwd" && "$IOPROBE" run "${common[@]}" --file-list "$W/mixed.txt" --json "$W/mixed.json") > "$W/mixed.out" 2>&1 \
  || fail "mixed list run failed: $(cat "$W/mixed.out")"
python3 - "$W/mixed.json" "$W/disk" "$S/ram" <<'PY' || fail "mixed list labels wrong"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']; g = d['targets']
assert len(g) == 2, [x['fs_type'] for x in g]
disk, ram = g
assert disk['fs_type'] == 'ext4' and not disk['memory_backed'], disk['fs_type']
assert disk['files'] == 4 and disk['bytes'] == 4 * 65536 and abs(disk['bytes_fraction'] - 4 / 6) < 1e-9, disk
assert ram['fs_type'] == 'tmpfs' and ram['memory_backed'], ram['fs_type']
assert ram['files'] == 2 and ram['bytes'] == 2 * 65536 and abs(ram['files_fraction'] - 2 / 6) < 1e-9, ram
assert disk['o_direct_probe_file'].startswith(sys.argv[2]) and ram['o_direct_probe_file'].startswith(sys.argv[3])
assert t['fs_type'] == 'ext4' and t['path'] == disk['path'], (t['fs_type'], t['path'])
both = disk['o_direct'] == 'accepted' and ram['o_direct'] == 'accepted'
assert t['direct'] is both, (t['direct'], disk['o_direct'], ram['o_direct'], t['cache_detail'])
assert ('tmpfs' in t['cache_detail']), t['cache_detail']  # the RAM share (or its refusal) is named
assert d['results']['samples'] == 6 and d['results']['bytes'] == 6 * 65536
print(f"ok: mixed list: ext4 4 files + tmpfs 2 files; direct={t['direct']}: {t['cache_detail']}; "
      f"engine {t['engine']}: {t['engine_reason']}")
PY

# 2. ext4 files listed from a tmpfs working directory.
printf '%s\n' "$W/disk/f0" "$W/disk/f1" > "$S/cwd/list.txt"
(cd "$S/cwd" && "$IOPROBE" run "${common[@]}" --file-list list.txt --json "$W/disk.json") > "$W/disk.out" 2>&1 \
  || fail "ext4 list from /dev/shm failed: $(cat "$W/disk.out")"
python3 - "$W/disk.json" <<'PY' || fail "ext4 files listed from tmpfs mislabelled"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
assert t['fs_type'] == 'ext4' and not t['memory_backed'], (t['fs_type'], t['memory_backed'])
assert t['o_direct'] == 'accepted' and t['direct'] is True, (t['o_direct'], t['cache_detail'])
assert 'RAM' not in t['engine_reason'] and 'RAM' not in t['cache_detail'], (t['engine_reason'], t['cache_detail'])
assert not any('(RAM)' in w for w in d['warnings']), d['warnings']
print(f"ok: ext4 list from a tmpfs cwd: {t['fs_type']} at {t['path']}, O_DIRECT, engine {t['engine']}")
PY

# 3. The first listed path is missing.
printf '%s\n' "$W/disk/gone" "$W/disk/f0" "$W/disk/f1" > "$W/gone.txt"
(cd "$W/cwd" && "$IOPROBE" run "${common[@]}" --file-list "$W/gone.txt" --json "$W/gone.json") > "$W/gone.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "list with a missing first file: exit $rc, expected 1: $(cat "$W/gone.out")"
python3 - "$W/gone.json" <<'PY' || fail "a missing first file changed the O_DIRECT decision"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
assert t['o_direct'] == 'accepted' and t['direct'] is True, (t['o_direct'], t['cache_detail'])
assert t['o_direct_probe_file'].endswith('/f0'), t['o_direct_probe_file']
assert any('gone' in w and 'could not be found' in w for w in d['warnings']), d['warnings']
assert d['results']['samples'] == 2 and d['results']['errors'] == 1, d['results']['errors']
print(f"ok: missing first file: still O_DIRECT (probed on {t['o_direct_probe_file']}), exit 1")
PY

# 4. --data on tmpfs from an ext4 working directory.
(cd "$W/cwd" && "$IOPROBE" run "${common[@]}" --data "$S/ram" --json "$W/ram.json") > "$W/ram.out" 2>&1 \
  || fail "--data on tmpfs failed: $(cat "$W/ram.out")"
python3 - "$W/ram.json" <<'PY' || fail "--data on tmpfs not labelled tmpfs"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']
assert t['fs_type'] == 'tmpfs' and t['memory_backed'], (t['fs_type'], t['memory_backed'])
assert len(d['targets']) == 1 and d['targets'][0]['files'] == 2, d['targets']
print(f"ok: --data on tmpfs from an ext4 cwd: {t['fs_type']}, {t['cache_detail']}")
PY

# 6. Nothing listed exists.
printf '%s\n' "$W/disk/none1" "$W/disk/none2" > "$W/none.txt"
out=$(cd "$W/cwd" && "$IOPROBE" run "${common[@]}" --file-list "$W/none.txt" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "none of its 2 paths is a regular file (first: '$W/disk/none1'" \
  || fail "list of missing paths: exit $rc: $out"
echo "ok: a list of missing paths: $out"

# 5. ext4 + ramfs (no O_DIRECT at all).
if [ "$(id -u)" = 0 ] && mkdir "$W/ramfs" && mount -t ramfs ioprobe-ramfs "$W/ramfs" 2>/dev/null; then
  R=$W/ramfs
  head -c 65536 /dev/urandom > "$R/r0"
  printf '%s\n' "$R/r0" "$W/disk/f0" "$W/disk/f1" > "$W/ramfs.txt"
  (cd "$S/cwd" && "$IOPROBE" run "${common[@]}" --file-list "$W/ramfs.txt" --json "$W/ramfs.json") > "$W/ramfs.out" 2>&1 \
    || fail "ext4 + ramfs list failed: $(cat "$W/ramfs.out")"
  python3 - "$W/ramfs.json" <<'PY' || fail "ext4 + ramfs: decision wrong"
import json, sys
d = json.load(open(sys.argv[1])); t = d['target']; g = d['targets']
assert [x['fs_type'] for x in g] == ['ext4', 'ramfs'], [x['fs_type'] for x in g]
if g[1]['o_direct'] != 'refused':
    print(f"note: this kernel's ramfs accepts O_DIRECT; nothing to check"); sys.exit(0)
assert t['direct'] is False and 'ramfs' in t['cache_detail'] and 'refuses O_DIRECT' in t['cache_detail'], t['cache_detail']
assert d['results']['samples'] == 3 and d['results']['errors'] == 0
print(f"ok: ext4 + ramfs: {t['cache_detail']}")
PY
  out=$(cd "$S/cwd" && "$IOPROBE" run "${common[@]}" --file-list "$W/ramfs.txt" --direct on 2>&1); rc=$?
  if [ "$(json "$W/ramfs.json" "d['targets'][1]['o_direct']")" = refused ]; then
    [ $rc = 2 ] && echo "$out" | grep -q "O_DIRECT not supported on '$R/r0' (ramfs" \
      || fail "--direct on with a ramfs file: exit $rc: $out"
    echo "ok: --direct on with a ramfs file: $out"
  fi
else
  echo "note: ramfs case skipped (needs root and a ramfs mount)"
fi
echo "all target checks passed"
