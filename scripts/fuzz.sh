#!/usr/bin/env bash
# libFuzzer harnesses (fuzz/, docs/fuzzing.md): configures and builds them
# in ${BUILD_DIR:-build-fuzz} with clang-16, then
#   bash scripts/fuzz.sh --smoke          # CI: every seed and regression input,
#                                         # then each harness for a few seconds (ctest -L fuzz)
#   bash scripts/fuzz.sh 600              # each harness for 600 s, one after another
#   bash scripts/fuzz.sh 600 ir npy       # only these
# A long run keeps what it finds in build-fuzz/corpus/<harness> and writes
# crashes to build-fuzz/findings/<harness>/ (crash-*, timeout-*, oom-*);
# its log is build-fuzz/logs/<harness>.log. Runs under nice -n 10.
# Needs clang-16 and libclang-rt-16-dev (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
HARNESSES=(ir npy cache spirv plugin)
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}

MODE=${1:---smoke}
shift || true
if [[ $# -gt 0 ]]; then HARNESSES=("$@"); fi

# -O1 and line tables only: the instrumented MLIR code builds much faster,
# and the reports still name file:line.
cmake -S . -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DTESSERA_FUZZ=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF \
  -DTESSERA_PYTHON=OFF -DTESSERA_WITH_MPI=OFF >/dev/null
TARGETS=()
for h in "${HARNESSES[@]}"; do TARGETS+=("${h}_fuzzer"); done
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"

if [[ $MODE == --smoke ]]; then
  cd "$BUILD_DIR"
  REGEX=$(IFS='|'; echo "^fuzz\.(${HARNESSES[*]})\.smoke$")
  ctest -L fuzz -R "$REGEX" --output-on-failure -j "$JOBS"
  exit 0
fi

SECONDS_EACH=$MODE
[[ $SECONDS_EACH =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh --smoke | SECONDS [harness...]" >&2; exit 2; }
SEEDS_EXTRA=()
status=0
for h in "${HARNESSES[@]}"; do
  corpus=$BUILD_DIR/corpus/$h findings=$BUILD_DIR/findings/$h
  mkdir -p "$corpus" "$findings" "$BUILD_DIR/logs"
  seeds=("$ROOT/fuzz/corpus/$h" "$ROOT/fuzz/regressions/$h")
  [[ $h == ir ]] && seeds+=("$BUILD_DIR/fuzz/seeds/ir")
  echo "fuzz: $h for ${SECONDS_EACH}s (log $BUILD_DIR/logs/$h.log)"
  # -fork=1 -ignore_crashes: a crash is written and the run goes on, so
  # one run finds more than the first bug.
  if ! nice -n 10 "$BUILD_DIR/fuzz/${h}_fuzzer" -max_total_time="$SECONDS_EACH" \
      -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
      -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -artifact_prefix="$findings/" "$corpus" "${seeds[@]}" >"$BUILD_DIR/logs/$h.log" 2>&1; then
    status=1
  fi
  grep -E '^#[0-9]+.*(cov|DONE)' "$BUILD_DIR/logs/$h.log" | tail -n 1 || true
  grep -E '^stat::' "$BUILD_DIR/logs/$h.log" || true
  n=$(find "$findings" -type f | wc -l)
  echo "fuzz: $h: $(find "$corpus" -type f | wc -l) inputs in its corpus, $n findings in $findings"
  [[ $n -eq 0 ]] || status=1
done
exit $status
