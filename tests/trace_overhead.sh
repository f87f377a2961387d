#!/bin/sh
# Instructions per Stream::launch and per Stream::synchronize with tracing
# off, TESSERA_TRACE_CLOCK=host, TESSERA_TRACE (device clock: the plugin's
# timestamps), TESSERA_TRACE_CLOCK=events (its events) and with the
# validation layer (TESSERA_VALIDATE=1), counted by
# callgrind: unlike wall time on a shared 2-core machine, the count does not
# depend on the load (docs/runtime.md, "Tracing").  Prints one JSON object.
#   usage: tests/trace_overhead.sh [build dir] [iterations]   (needs valgrind)
set -eu
BUILD=${1:-build}
N=${2:-500}
command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
KERNELS="$BUILD/lib/tessera/test-kernels/libtessera_test_kernels.so"
for mode in off host device events validate off_buffers validate_buffers; do
  ARGS=
  case $mode in
    off) set -- ;;
    validate) set -- TESSERA_VALIDATE=1 ;;
    off_buffers) set -- ; ARGS=buffers ;;
    validate_buffers) set -- TESSERA_VALIDATE=1 ; ARGS=buffers ;;
    host) set -- TESSERA_TRACE="$OUT/trace.json" TESSERA_TRACE_CLOCK=host ;;
    device) set -- TESSERA_TRACE="$OUT/trace.json" ;;
    events) set -- TESSERA_TRACE="$OUT/trace.json" TESSERA_TRACE_CLOCK=events ;;
  esac
  env -u TESSERA_TRACE -u TESSERA_TRACE_CLOCK -u TESSERA_VALIDATE "$@" valgrind --tool=callgrind \
    --callgrind-out-file="$OUT/cg.$mode" "$BUILD/bin/tessera-trace-overhead" "$KERNELS" "$N" $ARGS \
    >"$OUT/log.$mode" 2>&1 || { cat "$OUT/log.$mode" >&2; exit 1; }
  callgrind_annotate --inclusive=yes --tree=caller "$OUT/cg.$mode" >"$OUT/tree.$mode" 2>/dev/null
done
python3 - "$OUT" <<'PY'
import json, re, sys
out = {}
for mode in ("off", "host", "device", "events", "validate", "off_buffers", "validate_buffers"):
    lines = open(f"{sys.argv[1]}/tree.{mode}").read().splitlines()
    for fn, key in (("Stream::launch(tessera::Kernel const&, TsDim3, TsDim3, tessera::KernelArg const*", "launch"),
                    ("Stream::synchronize() const", "synchronize")):
        # The caller lines ("<") of the function's own entry ("*") carry the calls.
        for i, l in enumerate(lines):
            if "*  " in l and fn in l:
                cost = int(l.split()[0].replace(",", ""))
                calls = 0
                for c in lines[i - 1::-1]:
                    if not c.strip() or "*  " in c:
                        break
                    m = re.search(r"\(([\d,]+)x\)", c)
                    if m:
                        calls += int(m.group(1).replace(",", ""))
                out[f"{key}_{mode}"] = round(cost / calls) if calls else None
                break
print(json.dumps(out))
PY
