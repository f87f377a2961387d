#!/bin/sh
# The per-launch overhead of Program::Run against launching the same kernel
# directly (Stream::launch), counted in instructions by callgrind: unlike
# wall time on a shared 2-core machine (where the cpu plugin's worker runs
# the kernels beside the enqueueing thread), the count does not depend on
# the load.  Prints one JSON object.
#   usage: bench/launch_instructions.sh [build dir]   (needs valgrind)
set -eu
BUILD=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" \
  "$BUILD/bin/tessera-bench" --benchmark_filter='program_launch/' --benchmark_min_time=0.05 \
  >"$OUT/log" 2>&1 || { cat "$OUT/log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --tree=calling "$OUT/cg.out" >"$OUT/tree" 2>/dev/null
python3 - "$OUT/tree" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
# The callees of the benchmark's RunOnce: the direct launch and Program::Run,
# each with its inclusive instruction count and number of calls.
start = next(i for i, l in enumerate(lines) if "*  " in l and "RunOnce" in l)
per_call = {}
for l in lines[start + 1:]:
    if not l.strip():
        break
    m = re.match(r"\s*([\d,]+) .*?>\s+\S+?\.(?:cpp|hpp|h):(\S+?)\(.*\(([\d,]+)x\)", l)
    if not m:
        continue
    cost, fn, calls = int(m.group(1).replace(",", "")), m.group(2), int(m.group(3).replace(",", ""))
    if fn.endswith("Stream::launch"):
        per_call["direct"] = cost / calls
    elif fn.endswith("Program::Run"):
        per_call["program"] = cost / calls
if set(per_call) != {"direct", "program"}:
    sys.exit("could not find both paths in the callgrind tree")
print(json.dumps({"direct_launch_instructions": round(per_call["direct"]),
                  "program_run_instructions": round(per_call["program"]),
                  "ratio": round(per_call["program"] / per_call["direct"], 3)}))
PY
