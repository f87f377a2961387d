#!/usr/bin/env bash
# The autotuner's gain on the cpu backend (docs/autotune.md "Measured"):
# for each program, a search (tessera-run --autotune, TRIALS trials), then
# the default and the tuned schedule run in turns (PAIRS pairs of
# tessera-run --iterations ITERS), the medians of their per-iteration
# times, and the cache lookup's time from the TESSERA_LOG=debug line.
# usage: bench/autotune/run.sh [BIN_DIR] [PROGRAM...]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/bin}; shift || true
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || PROGRAMS=(examples/mlp.mlir bench/autotune/gemm_1024.mlir)
TRIALS=${TRIALS:-24} PAIRS=${PAIRS:-5} ITERS=${ITERS:-10}
export TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$(mktemp -d)}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
timeof() { sed -n 's/^time: \([0-9.]*\) ms per iteration.*/\1/p'; }
for p in "${PROGRAMS[@]}"; do
  echo "== $p"
  start=$(date +%s.%N)
  "$BIN/tessera-run" "$p" --autotune-trials "$TRIALS" --iterations 1 --no-check | grep "autotune: best"
  echo "search: $(echo "$(date +%s.%N) - $start" | bc) s (with the run after it)"
  d=() t=()
  for i in $(seq "$PAIRS"); do
    d+=("$(TESSERA_AUTOTUNE=off "$BIN/tessera-run" "$p" --iterations "$ITERS" --no-check | timeof)")
    t+=("$("$BIN/tessera-run" "$p" --iterations "$ITERS" --no-check | timeof)")
  done
  dm=$(printf '%s\n' "${d[@]}" | median) tm=$(printf '%s\n' "${t[@]}" | median)
  echo "default: ${d[*]} ms -> median $dm ms"
  echo "tuned:   ${t[*]} ms -> median $tm ms ($(echo "scale=3; $dm / $tm" | bc)x)"
  TESSERA_LOG=debug "$BIN/tessera-run" "$p" --iterations 1 --no-check 2>&1 | grep -o "autotune cache hit.*" || true
done
