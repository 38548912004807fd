#!/bin/bash
# ioprobe record on a tiny C program (tests/fixtures/trace/record_calls.c) that makes every call kind
# the interposer wraps, from the main thread, two threads and a forked child, with a failing open and
# a descriptor closed twice: exact op counts, byte counts, offsets, roles and the exit status.
. "$(dirname "$0")/lib.sh"
BIN=${1:?usage: record_c_program.sh path/to/ioprobe}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
command -v cc >/dev/null || skip "no C compiler (cc) to build the test program"
W=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-record-c.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O1 -pthread -o "$W/record_calls" "$SRC/tests/fixtures/trace/record_calls.c" || fail "cannot build record_calls.c"
mkdir "$W/data"
head -c 100000 /dev/urandom > "$W/data/a.bin"
head -c 50000 /dev/urandom > "$W/data/b.bin"

set +e
"$BIN" record --out "$W/t.jsonl" -- "$W/record_calls" "$W/data" 2> "$W/err.txt"
rc=$?
set -e
cat "$W/err.txt"
[ "$rc" = 7 ] || fail "record passed through exit status $rc, the program returned 7"
grep -q "processes 2" "$W/err.txt" || fail "the summary does not count 2 processes"

python3 - "$W/t.jsonl" "$W/data" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1])]
data = sys.argv[2]
head, end = lines[0], lines[-1]
def expect(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
expect(head["format"] == "ioprobe-trace" and head["version"] == 1, "header")
files = {l["file"]: l for l in lines if "file" in l}
streams = {l["stream"]: l for l in lines if "stream" in l}
ops = [l for l in lines if "op" in l]
expect(end["events"] == len(ops) + sum("mark" in l for l in lines), "end line counts the events")
paths = sorted(f["path"] for f in files.values())
expect(paths == sorted([data + "/a.bin", data + "/b.bin", data + "/missing.bin"]), "files: %s" % paths)
by_path = {f["path"]: f for f in files.values()}
expect(by_path[data + "/a.bin"]["size"] == 100000 and by_path[data + "/b.bin"]["size"] == 50000, "file sizes")
expect(len(streams) == 4, "4 streams (main, 2 threads, the child): %d" % len(streams))
roles = sorted(s["role"] for s in streams.values())
expect(roles == ["main", "process", "thread", "thread"], "roles %s" % roles)
main = [s for s in streams.values() if s["role"] == "main"][0]
child = [s for s in streams.values() if s["role"] == "process"][0]
expect(child["ppid"] == main["pid"] and child["pid"] != main["pid"], "the child's ppid is the main process")
per = collections.defaultdict(collections.Counter)
for o in ops:
    per[streams[o["s"]]["role"]][o["op"]] += 1
m = per["main"]
expect(m == collections.Counter(open=4, stat=4, read=10, lseek=2, close=4, mmap=1, munmap=1), "main ops %s" % dict(m))
expect(per["thread"] == collections.Counter(open=2, read=4, close=2), "thread ops %s" % dict(per["thread"]))
expect(per["process"] == collections.Counter(open=1, read=2, close=1), "child ops %s" % dict(per["process"]))
expect(len(ops) == 38, "38 ops in all: %d" % len(ops))
total = sum(o["ret"] for o in ops if o["op"] == "read" and o["ret"] > 0)
expect(total == 207192, "bytes read 207192: %d" % total)
mops = [o for o in ops if streams[o["s"]]["role"] == "main"]
reads = [(o["call"], o["off"], o["ret"]) for o in mops if o["op"] == "read"]
expect(reads == [("read", 0, 4096), ("read", 10000, 4096), ("readv", 14096, 2000), ("pread", 50000, 5000),
                 ("preadv", 60000, 1000), ("preadv2", 70000, 1000), ("fread", 0, 10000), ("fread", 10000, 10000),
                 ("fread", 20000, 10000), ("fread", 90000, 10000)], "main reads %s" % reads)
failed_open = [o for o in mops if o["op"] == "open" and o["err"]]
expect(len(failed_open) == 1 and failed_open[0]["err"] == 2 and
       files[failed_open[0]["f"]]["path"].endswith("missing.bin"), "the failing open, ENOENT")
closes = [o for o in mops if o["op"] == "close"]
expect(sum(o["err"] == 9 for o in closes) == 1, "the second close of one descriptor, EBADF")
expect(head["mapped"]["mapped_bytes"] == 65536, "mapped bytes 65536")
expect(all(o["c"] >= 0 for o in ops), "every op has its gap's thread CPU time")
for s in streams:
    ts = [o["t"] for o in ops if o["s"] == s]
    expect(ts == sorted(ts), "stream %d in time order" % s)
print("trace checks passed: %d ops" % len(ops))
PY

# exec is followed: a shell that forks and execs two cats (the second by exec alone, as dash does for
# the last command), each a process of its own in the trace, every byte of both files read.
"$BIN" record --out "$W/exec.jsonl" -- sh -c "cat '$W/data/a.bin' > /dev/null; cat '$W/data/b.bin' > /dev/null" 2>/dev/null ||
  fail "record of sh -c failed"
python3 - "$W/exec.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
streams = {l["stream"]: l for l in lines if "stream" in l}
ops = [l for l in lines if "op" in l]
got = sum(o["ret"] for o in ops if o["op"] == "read" and o["ret"] > 0)
pids = {streams[o["s"]]["pid"] for o in ops}
if got != 150000 or len(pids) != 2:
    print("FAIL: exec'ed cats: %d bytes from %d processes, expected 150000 from 2" % (got, len(pids))); sys.exit(1)
print("exec followed: 2 processes, 150000 bytes")
PY

# The trace reads back through ioprobe's own reader: a second record may replace it (an ioprobe trace),
# but a file ioprobe did not write is refused before anything runs.
echo "not a trace" > "$W/user.txt"
set +e
"$BIN" record --out "$W/user.txt" -- true 2> "$W/err2.txt"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--out over a user's file: exit $rc, expected 2"
grep -q "not an ioprobe trace" "$W/err2.txt" || fail "the refusal does not say why: $(cat "$W/err2.txt")"
[ "$(cat "$W/user.txt")" = "not a trace" ] || fail "the user's file was changed"
"$BIN" record --out "$W/t.jsonl" -- true 2>/dev/null || fail "record over its own trace refused"
# --anonymize: no path left, extensions kept.
"$BIN" record --anonymize --out "$W/anon.jsonl" -- "$W/record_calls" "$W/data" 2>/dev/null || [ $? = 7 ] ||
  fail "anonymized record failed"
grep -q "$W/data" "$W/anon.jsonl" && fail "--anonymize left a path in the trace"
grep -q '"path":"anon:[0-9a-f]\{16\}.bin"' "$W/anon.jsonl" || fail "--anonymize: no anon:HASH.bin path"
# A command that cannot be started: exit 2, nothing written.
set +e
"$BIN" record --out "$W/none.jsonl" -- /nonexistent/program 2> "$W/err3.txt"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a missing command: exit $rc, expected 2"
[ ! -e "$W/none.jsonl" ] || fail "a trace was written for a command that never ran"
# --import: a strace log into a trace; a log that cannot be read is refused (exit 2).
"$BIN" record --import "$SRC/tests/fixtures/trace/strace_resumed.log" --out "$W/imported.jsonl" 2>/dev/null ||
  fail "record --import of the strace fixture failed"
[ "$(grep -c '"op":' "$W/imported.jsonl")" = 12 ] || fail "the imported trace has not the fixture's 12 ops"
set +e
"$BIN" record --import "$W/none.log" --out "$W/imported2.jsonl" 2>/dev/null
rc=$?
set -e
[ "$rc" = 2 ] || fail "--import of a missing file: exit $rc, expected 2"
echo PASS
