# Shared helpers for integration tests; sourced by them (tests/CMakeLists.txt does not register it).
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# Sum of the sizes of all regular files under DIR, ioprobe's own manifest files excluded.
sum_sizes() { find "$1" -type f ! -name '.ioprobe-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
