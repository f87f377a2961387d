#!/bin/sh
# The 1024^3 f32 GEMM on lavapipe, Tessera's generated kernel against the
# hand-tiled GLSL one (tessera-bench gemm_f32/{tessera_vulkan,raw_vulkan}/1024),
# counted in instructions of the kernel's JIT-compiled code by callgrind.
# The wall-time ratio on a shared 2-core machine moves by 10-20% between
# runs; this count does not (llvmpipe runs the same code however its
# threads are scheduled).  Each side runs the GEMM twice (a checked first
# run, one timed iteration); the kernel is the hottest function of no
# object file (code lavapipe generated at run time).  Prints one JSON object.
#   usage: bench/vulkan_gemm_instructions.sh [build dir]   (needs valgrind; ~3 min)
set -eu
BUILD=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for side in tessera_vulkan raw_vulkan; do
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$side.out" \
    "$BUILD/bin/tessera-bench" --benchmark_filter="gemm_f32/$side/" --benchmark_min_time=0.000001 \
    --benchmark_repetitions=1 >"$OUT/$side.log" 2>&1 || { cat "$OUT/$side.log" >&2; exit 1; }
  if grep -q "ERROR OCCURRED" "$OUT/$side.log"; then cat "$OUT/$side.log" >&2; exit 1; fi
  callgrind_annotate "$OUT/$side.out" >"$OUT/$side.txt" 2>/dev/null
done
python3 - "$OUT/tessera_vulkan.txt" "$OUT/raw_vulkan.txt" <<'PY'
import json, re, sys
def kernel(path):
    # "  11,263,119,360 (86.96%)  ???:0x000000000483dde0 [???]": the first
    # (largest) entry whose object is unknown.
    for l in open(path):
        m = re.match(r"\s*([\d,]+) \([\d.]+%\)\s+\?\?\?:0x[0-9a-f]+ \[\?\?\?\]", l)
        if m:
            return int(m.group(1).replace(",", ""))
    sys.exit("no JIT-compiled function in " + path + " (is the device lavapipe?)")
t, r = kernel(sys.argv[1]), kernel(sys.argv[2])
print(json.dumps({"tessera_kernel_instructions": t, "glsl_kernel_instructions": r,
                  "ratio": round(t / r, 3)}))
PY
