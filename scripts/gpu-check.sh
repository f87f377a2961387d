#!/usr/bin/env bash
# Checks the CUDA plugin on a machine with an NVIDIA GPU, from an existing
# build (or install prefix): no compiler needed.
#   bash scripts/gpu-check.sh [BUILD_DIR (build)] [OUT_DIR (/tmp/tessera-gpu-check)]
# Runs tessera-info, tessera-conformance --backend cuda (and its stream,
# event and graph tests one process each), every
# examples/*.mlir with tessera-run (checked against the reference, timed)
# and tessera-bench's cuda benchmarks if it has any, the bf16 GEMM against
# torch.matmul (cuBLAS) when python3 has torch, the bf16 attention fused
# (the sm_90a warpgroup kernel) against its unfused form; then prints one
# table.
# Every item runs under `timeout $ITEM_TIMEOUT` (120 s; the conformance run
# $CONFORMANCE_TIMEOUT, 600 s, with $ITEM_TIMEOUT per area) and logs to
# OUT_DIR/logs/.  A failure never stops the others.
# Exit status: 0 all passed on a GPU; 1 something failed; 2 no NVIDIA GPU
# here (what needs one is skipped, nothing else failed); 64 bad usage.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
OUT=${2:-/tmp/tessera-gpu-check}
ITEM_TIMEOUT=${ITEM_TIMEOUT:-120}
CONFORMANCE_TIMEOUT=${CONFORMANCE_TIMEOUT:-600}
BIN=$BUILD/bin
if [[ ! -x $BIN/tessera-info ]]; then
  echo "gpu-check: no $BIN/tessera-info: pass a build dir (or install prefix) as argument 1" >&2
  exit 64
fi
mkdir -p "$OUT/logs" || exit 64
export TESSERA_VISIBLE_DEVICES=  # every device; the backend is set per item

ROWS=()      # "item|result|seconds|note"
FAILED=0

now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
record() {  # item result seconds note
  ROWS+=("$1|$2|$3|$4")
  [[ $2 == fail ]] && FAILED=1
  echo "--> $1: $2${4:+ ($4)}"
}
# run ITEM LIMIT CMD...: runs CMD under timeout, output to the terminal and
# OUT/logs/ITEM.log; sets RC and START for the caller to judge.
run() {
  local item=$1 limit=$2
  shift 2
  echo
  echo "=== $item: $*"
  START=$(now)
  timeout -k 10 "$limit" "$@" 2>&1 | tee "$OUT/logs/${item//[^A-Za-z0-9_.-]/_}.log"
  RC=${PIPESTATUS[0]}
  if [[ $RC == 124 || $RC == 137 ]]; then RC=timeout; fi
}

# ---------------------------------------------------------------- the GPU
echo "=== nvidia-smi"
HAVE_GPU=0
GPUS=$(timeout 30 nvidia-smi -L 2>&1) || GPUS=${GPUS:-nvidia-smi failed}
command -v nvidia-smi >/dev/null || GPUS="nvidia-smi: not found"
echo "$GPUS"
if grep -q '^GPU ' <<<"$GPUS"; then
  HAVE_GPU=1
  echo "driver $(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)"
  record nvidia-smi pass 0.0 "$(grep -c '^GPU ' <<<"$GPUS") GPU(s)"
else
  echo "gpu-check: NO NVIDIA GPU on this machine: the CUDA items are skipped"
  record nvidia-smi skip 0.0 "no NVIDIA GPU"
fi
# Without a GPU, an item that fails only because cuda is unavailable is a skip.
gpu_result() { if [[ $HAVE_GPU == 1 ]]; then echo fail; else echo skip; fi; }
# judge ITEM [NOTE]: records the last run: pass (with NOTE), else fail or
# skip as gpu_result says, with the exit code.
judge() {
  if [[ $RC == 0 ]]; then record "$1" pass "$(elapsed "$START")" "${2:-}"
  else record "$1" "$(gpu_result)" "$(elapsed "$START")" "rc=$RC"; fi
}
# ms_per_iteration ITEM: tessera-run's time per iteration in ITEM's log.
ms_per_iteration() {
  grep -oE '[0-9.]+ ms per iteration' "$OUT/logs/${1//[^A-Za-z0-9_.-]/_}.log" | head -n1 | awk '{print $1}'
}

# ---------------------------------------------------------------- tessera-info
# Lists every plugin; exit 0 only when the cuda backend can be selected.
run tessera-info "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-info"
if [[ $RC == 0 ]]; then record tessera-info pass "$(elapsed "$START")" ""
elif [[ $RC == 1 ]]; then record tessera-info "$(gpu_result)" "$(elapsed "$START")" "cuda not selectable"
else record tessera-info fail "$(elapsed "$START")" "rc=$RC"; fi

# ---------------------------------------------------------------- conformance
if [[ -x $BIN/tessera-conformance ]]; then
  run conformance "$CONFORMANCE_TIMEOUT" "$BIN/tessera-conformance" --backend cuda \
    --timeout "$ITEM_TIMEOUT" --unavailable-exit-code 77 --report-dir "$OUT/conformance"
  case $RC in
    0) record conformance pass "$(elapsed "$START")" "$OUT/conformance/report.md" ;;
    77) record conformance "$(gpu_result)" "$(elapsed "$START")" "cuda unavailable" ;;
    *) record conformance fail "$(elapsed "$START")" "rc=$RC, $OUT/conformance/report.md" ;;
  esac
else
  record conformance skip 0.0 "not built"
fi

# The stream, event and graph tests each in a process of its own: none may
# pass only because an earlier test of its area warmed the device (the
# timestamp clock's calibration, conformance/each_test_alone.sh).
if [[ -x $BIN/tessera-conformance ]]; then
  run "conformance alone" "$CONFORMANCE_TIMEOUT" bash "$ROOT/conformance/each_test_alone.sh" \
    "$BIN/tessera-conformance" cuda Streams Events Graphs
  case $RC in
    0) record "conformance alone" pass "$(elapsed "$START")" "" ;;
    77) record "conformance alone" "$(gpu_result)" "$(elapsed "$START")" "cuda unavailable" ;;
    *) record "conformance alone" fail "$(elapsed "$START")" "rc=$RC" ;;
  esac
fi

# ---------------------------------------------------------------- bf16 GEMM
# bench/programs/gemm_bf16.mlir on cuda (1024 checked against the
# reference; 4096 and 8192 timed) beside torch.matmul (cuBLAS) on the same
# GPU in the same run (bench/torch_gemm.py); the note is the ratio.  On
# sm_90a the default is the warp-specialized wgmma tier (mma=wgmma
# warp-specialize=1); the wgmma kernel without a producer warpgroup
# ("warp-specialize=0" rows) and the mma.sync tier ("mma=sync" rows) are
# checked and timed beside it.
GEMM_PROGRAM=$ROOT/bench/programs/gemm_bf16.mlir
if [[ -x $BIN/tessera-run && -f $GEMM_PROGRAM ]]; then
  run "gemm_bf16 1024 check" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$GEMM_PROGRAM" \
    --function gemm_bf16_1024 --check --warmup 1 --iterations 10
  judge "gemm_bf16 1024 check"
  for sched in "warp-specialize=0" "mma=sync"; do
    run "gemm_bf16 1024 check $sched" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$GEMM_PROGRAM" \
      --function gemm_bf16_1024 --schedule "$sched" --check --warmup 1 --iterations 10
    judge "gemm_bf16 1024 check $sched"
  done
  CUBLAS_MS=()
  if [[ $HAVE_GPU == 1 ]] && timeout 60 python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    run "cublas" "$ITEM_TIMEOUT" python3 "$ROOT/bench/torch_gemm.py" 4096 8192
    mapfile -t CUBLAS_MS < <(grep -oE '"torch_cublas_ms": [0-9.]+' "$OUT/logs/cublas.log" | awk '{print $2}')
  fi
  sizes=(4096 8192 4096 8192 4096 8192)
  schedules=("" "" "warp-specialize=0" "warp-specialize=0" "mma=sync" "mma=sync")
  for i in 0 1 2 3 4 5; do
    n=${sizes[$i]}
    item="gemm_bf16 $n${schedules[$i]:+ ${schedules[$i]}}"
    run "$item" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$GEMM_PROGRAM" \
      --function "gemm_bf16_$n" --schedule "${schedules[$i]}" --no-check --warmup 2 --iterations 20
    ms=$(ms_per_iteration "$item")
    note="${ms:-?} ms"
    if [[ -n $ms && -n ${CUBLAS_MS[$((i % 2))]:-} ]]; then
      note+=$(awk -v t="$ms" -v c="${CUBLAS_MS[$((i % 2))]}" -v n="$n" \
        'BEGIN { printf ", %.0f TFLOP/s; cuBLAS %.3f ms: %.2fx", 2*n*n*n/t/1e9, c, c/t }')
    fi
    judge "$item" "$note"
  done
fi

# ---------------------------------------------------------------- bf16 attention
# bench/programs/attention_bf16.mlir on cuda: on sm_90a one warpgroup
# kernel (flash_attention {mma = "wgmma"}: TMA, wgmma, the softmax in
# registers); "wgmma-attention=0" is the unfused form (the Q K^T GEMM, the
# mask, softmax and the P V GEMM) in the same run.  512 is checked against
# the reference both ways; 2048 (32 heads, d = 128, causal) is timed both
# ways, the note giving TFLOP/s and the fused kernel's speed-up.
ATTN_PROGRAM=$ROOT/bench/programs/attention_bf16.mlir
if [[ -x $BIN/tessera-run && -f $ATTN_PROGRAM ]]; then
  for sched in "" "wgmma-attention=0"; do
    item="attention_bf16 512 check${sched:+ $sched}"
    run "$item" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$ATTN_PROGRAM" \
      --function attention_bf16_512 --schedule "$sched" --check --warmup 1 --iterations 10
    judge "$item"
  done
  ATTN_MS=()
  for sched in "" "wgmma-attention=0"; do
    item="attention_bf16 2048${sched:+ $sched}"
    run "$item" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$ATTN_PROGRAM" \
      --function attention_bf16_2048 --schedule "$sched" --no-check --warmup 2 --iterations 20
    ms=$(ms_per_iteration "$item")
    ATTN_MS+=("${ms:-}")
    note="${ms:-?} ms"
    [[ -n $ms ]] && note+=$(awk -v t="$ms" 'BEGIN { printf ", %.0f TFLOP/s", 34359738368/t/1e9 }')
    if [[ -n $sched && -n $ms && -n ${ATTN_MS[0]} ]]; then
      note+=$(awk -v f="${ATTN_MS[0]}" -v u="$ms" 'BEGIN { printf "; fused kernel %.2fx faster", u/f }')
    fi
    judge "$item" "$note"
  done
fi

# ---------------------------------------------------------------- examples
# Every function of every example, checked against the reference
# interpreter (--check) and timed (--iterations); the note is tessera-run's
# time per iteration.
for example in "$ROOT"/examples/*.mlir; do
  name=$(basename "$example" .mlir)
  mapfile -t fns < <(grep -oE 'func\.func (public |private )?@[A-Za-z0-9_]+' "$example" |
                     sed 's/.*@//')
  [[ ${#fns[@]} == 0 ]] && fns=("")
  for fn in "${fns[@]}"; do
    item="run $name"
    [[ ${#fns[@]} -gt 1 ]] && item="run $name:$fn"
    if [[ ! -x $BIN/tessera-run ]]; then record "$item" skip 0.0 "not built"; continue; fi
    run "$item" "$ITEM_TIMEOUT" env TESSERA_BACKEND=cuda "$BIN/tessera-run" "$example" \
      ${fn:+--function "$fn"} --check --warmup 1 --iterations 10
    per_iter=$(grep -oE '[0-9.]+ [mu]?s per iteration' "$OUT/logs/${item//[^A-Za-z0-9_.-]/_}.log" | head -n1)
    if [[ $RC == 0 ]]; then record "$item" pass "$(elapsed "$START")" "$per_iter"
    elif [[ $HAVE_GPU == 0 ]] && grep -q 'UNAVAILABLE' "$OUT/logs/${item//[^A-Za-z0-9_.-]/_}.log"; then
      record "$item" skip "$(elapsed "$START")" "cuda unavailable"
    elif entries=$(grep -oE "has no function or kernel named '[^']+'; it has: .*" \
                     "$OUT/logs/${item//[^A-Za-z0-9_.-]/_}.log"); then
      # A helper the program's own passes consume (a custom VJP, a loss
      # under --tessera-grad): not an entry point of the lowered program.
      record "$item" skip "$(elapsed "$START")" "not an entry point (${entries##*it has: })"
    elif needs=$(grep -oE "mesh needs [0-9]+ devices; backend cuda has [0-9]+" \
                   "$OUT/logs/${item//[^A-Za-z0-9_.-]/_}.log"); then
      # An SPMD example on a machine with fewer GPUs than its mesh.
      record "$item" skip "$(elapsed "$START")" "$needs"
    else record "$item" fail "$(elapsed "$START")" "rc=$RC"; fi
  done
done

# ---------------------------------------------------------------- benchmarks
if [[ -x $BIN/tessera-bench ]] &&
   timeout 60 "$BIN/tessera-bench" --benchmark_list_tests=true 2>/dev/null | grep -qi cuda; then
  run "bench cuda" "$ITEM_TIMEOUT" "$BIN/tessera-bench" --benchmark_filter=cuda \
    --benchmark_out="$OUT/bench-cuda.json" --benchmark_out_format=json
  judge "bench cuda" "$OUT/bench-cuda.json"
else
  record "bench cuda" skip 0.0 "no cuda benchmarks"
fi

# ---------------------------------------------------------------- the table
echo
printf '%-34s %-6s %8s  %s\n' item result time note
printf '%-34s %-6s %8s  %s\n' ---- ------ ---- ----
for row in "${ROWS[@]}"; do
  IFS='|' read -r item result secs note <<<"$row"
  printf '%-34s %-6s %7ss  %s\n' "$item" "$result" "$secs" "$note"
done
echo "logs: $OUT/logs/"
if [[ $FAILED == 1 ]]; then echo "gpu-check: FAILED"; exit 1; fi
if [[ $HAVE_GPU == 0 ]]; then echo "gpu-check: NO GPU: nothing failed, the CUDA checks did not run"; exit 2; fi
echo "gpu-check: PASSED"
exit 0
