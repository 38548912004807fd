#!/bin/bash
# A checkpoint saved by one command (--keep) and read back by others: --restore-only (decompress,
# both checksums of every chunk) and --verify-only (the stored bytes' checksums) each succeed and
# change nothing in the directory (sha256 and listing compared before and after); a flipped byte in
# a chunk is refused by both, naming the shard, the chunk and the expected and read checksums
# (exit 1); a directory without a checkpoint, one missing a rank's shard (a gap, or the highest
# rank: the shards record the save's world size), and a shard with a damaged trailer, are refused
# (exit 2) naming the path.
set -u
IOPROBE=$1
DIR=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-ckpt-ro.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
listing() { (cd "$1" && find . -printf '%p %s %m %T@\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# Saved compressed (zstd frames per piece, format version 4) by one command.
"$IOPROBE" checkpoint --dir "$DIR/ck" --size 24MiB --ranks 2 --chunk-size 3000001 --compress zstd:1 --keep \
  --io-size 1MiB --raw-baseline off --quiet >"$DIR/save.out" 2>&1 || { cat "$DIR/save.out"; fail "save exit $?"; }
listing "$DIR/ck" >"$DIR/before"

"$IOPROBE" checkpoint --restore-only --dir "$DIR/ck" --io-size 1MiB --json "$DIR/r.json" >"$DIR/r.out" 2>"$DIR/r.err" ||
  { cat "$DIR/r.out" "$DIR/r.err"; fail "restore-only exit $?"; }
cat "$DIR/r.out"
grep -q "ioprobe checkpoint restore-only" "$DIR/r.out" || fail "restore-only report header"
python3 - "$DIR/r.json" <<'PY' || fail "restore-only JSON"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["checkpoint"]
assert d["kind"] == "checkpoint" and c["mode"] == "restore-only", c.get("mode")
assert len(c["shards"]) == 2 and c["shards"][0]["codec"] == "zstd", c["shards"]
r = c["restore"]
assert r["ok"] and r["logical_bytes"] == 24 * 2**20, r
assert r["restore_bytes_per_s"] > 0
assert all(x["chunks_verified"] == x["chunks_total"] > 0 for x in r["ranks"]), r["ranks"]
PY

"$IOPROBE" checkpoint --verify-only --dir "$DIR/ck" --json "$DIR/v.json" >"$DIR/v.out" 2>"$DIR/v.err" ||
  { cat "$DIR/v.out" "$DIR/v.err"; fail "verify-only exit $?"; }
python3 - "$DIR/v.json" <<'PY' || fail "verify-only JSON"
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
v = c["verify"]
assert c["mode"] == "verify-only" and "restore" not in c
assert v["ok"] and v["chunks_verified"] == v["chunks_total"] > 0 and v["stored_bytes"] > 0, v
PY
if python3 -c 'import jsonschema' 2>/dev/null; then
  for f in r v; do
    python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
      "$DIR/$f.json" "${IOPROBE_SOURCE_DIR:-$(dirname "$0")/../..}/reports/result.schema.json" || fail "$f.json: schema"
  done
fi
listing "$DIR/ck" >"$DIR/after"
diff "$DIR/before" "$DIR/after" || fail "the read-backs changed the checkpoint directory"

# Options of a save are refused with a read-back; so is a --json inside --dir.
"$IOPROBE" checkpoint --restore-only --dir "$DIR/ck" --size 1GiB >/dev/null 2>"$DIR/e"
[ $? = 2 ] && grep -q -- "--size" "$DIR/e" || fail "--size with --restore-only: $(cat "$DIR/e")"
"$IOPROBE" checkpoint --verify-only --dir "$DIR/ck" --json "$DIR/ck/x.json" >/dev/null 2>"$DIR/e"
[ $? = 2 ] && grep -q "x.json" "$DIR/e" || fail "--json inside --dir: $(cat "$DIR/e")"
listing "$DIR/ck" >"$DIR/after"
diff "$DIR/before" "$DIR/after" || fail "a refused read-back changed the checkpoint directory"

# A flipped byte in a chunk of an uncompressed checkpoint: both modes refuse it, exit 1, naming the
# shard, the chunk and both checksums.
"$IOPROBE" checkpoint --dir "$DIR/plain" --size 8MiB --chunk-size 1MiB --keep --raw-baseline off --quiet \
  >/dev/null 2>&1 || fail "plain save"
python3 - "$DIR/plain/__0_0.distcp" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(3 * 2**20 + 12345)
    b = f.read(1)
    f.seek(3 * 2**20 + 12345)
    f.write(bytes([b[0] ^ 0x40]))
PY
listing "$DIR/plain" >"$DIR/before"
for mode in --restore-only --verify-only; do
  "$IOPROBE" checkpoint $mode --dir "$DIR/plain" >"$DIR/out" 2>"$DIR/e"
  rc=$?
  [ $rc = 1 ] || fail "$mode: flipped byte not refused (exit $rc): $(cat "$DIR/e")"
  grep -q "__0_0.distcp: chunk 3 of 8" "$DIR/e" || fail "$mode: shard and chunk not named: $(cat "$DIR/e")"
  grep -Eq "expected xxh3 [0-9a-f]{16} \(the shard's index\), read [0-9a-f]{16}" "$DIR/e" ||
    fail "$mode: expected and read checksums not named: $(cat "$DIR/e")"
done
listing "$DIR/plain" >"$DIR/after"
diff "$DIR/before" "$DIR/after" || fail "a refused read-back changed the directory"

# Not a checkpoint: an empty directory, a directory of other files, a missing one, a damaged trailer.
mkdir "$DIR/empty" "$DIR/other"
echo hello >"$DIR/other/notes.txt"
for d in "$DIR/empty" "$DIR/other"; do
  "$IOPROBE" checkpoint --restore-only --dir "$d" >/dev/null 2>"$DIR/e"
  rc=$?
  [ $rc = 2 ] && grep -q "holds no checkpoint ioprobe wrote" "$DIR/e" && grep -q "$d" "$DIR/e" ||
    fail "$d: not refused as no checkpoint (exit $rc): $(cat "$DIR/e")"
done
[ "$(ls -A "$DIR/empty")" = "" ] || fail "the read-back wrote into an empty directory"
"$IOPROBE" checkpoint --verify-only --dir "$DIR/missing" >/dev/null 2>"$DIR/e"
[ $? = 2 ] && grep -q "no such directory" "$DIR/e" || fail "missing --dir: $(cat "$DIR/e")"
[ -e "$DIR/missing" ] && fail "the read-back made the missing directory"
# --dir naming a regular file (a shard, say) is refused as a file, naming it.
for mode in --verify-only --restore-only; do
  "$IOPROBE" checkpoint $mode --dir "$DIR/ck/__0_0.distcp" >/dev/null 2>"$DIR/e"
  rc=$?
  [ $rc = 2 ] && grep -q -- "--dir $DIR/ck/__0_0.distcp: is a regular file, not a directory" "$DIR/e" ||
    fail "$mode --dir FILE (exit $rc): $(cat "$DIR/e")"
done
# A shard lost or not copied: rank 1's shard without rank 0's.
mkdir "$DIR/part" && cp "$DIR/ck/__1_0.distcp" "$DIR/part/"
for mode in --verify-only --restore-only; do
  "$IOPROBE" checkpoint $mode --dir "$DIR/part" >/dev/null 2>"$DIR/e"
  rc=$?
  [ $rc = 2 ] && grep -q "none of rank(s) 0: .* incomplete" "$DIR/e" || fail "$mode of a checkpoint without rank 0's shard (exit $rc): $(cat "$DIR/e")"
done
# The highest rank's shard missing: the shards record the save's world size (format version 4).
mkdir "$DIR/top" && cp "$DIR/ck/__0_0.distcp" "$DIR/top/"
for mode in --verify-only --restore-only; do
  "$IOPROBE" checkpoint $mode --dir "$DIR/top" >/dev/null 2>"$DIR/e"
  rc=$?
  [ $rc = 2 ] && grep -q "the save wrote 2 shard(s) (ranks 0 to 1, recorded in each shard), 1 found here: rank(s) 1 is missing" "$DIR/e" &&
    grep -q "$DIR/top" "$DIR/e" || fail "$mode of a checkpoint without its highest rank's shard (exit $rc): $(cat "$DIR/e")"
done
truncate -s -100 "$DIR/plain/__0_0.distcp"
"$IOPROBE" checkpoint --verify-only --dir "$DIR/plain" >/dev/null 2>"$DIR/e"
rc=$?
[ $rc = 2 ] && grep -q "__0_0.distcp: not a checkpoint shard" "$DIR/e" || fail "truncated shard (exit $rc): $(cat "$DIR/e")"
echo ok
