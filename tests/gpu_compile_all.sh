#!/usr/bin/env bash
# ctest cuda.compile_all.<arch> / hip.compile_all.<arch> / level_zero.compile_all: every
# example program and every conformance Tile IR kernel compiles for each
# given target, through the vendor's own offline tool (cuda: ptxas makes the
# cubins; hip: ld.lld links the code objects; level_zero: SPIRV-Tools'
# validator, in the plugin, checks each OpenCL Kernel module).  No GPU needed.  Exit 77 (skip) when the tool a
# target needs is missing.
#   tests/gpu_compile_all.sh <bin dir> <source dir> <target>...   (cuda:sm_80 hip:gfx90a ...)
set -uo pipefail
BIN=$1
SRC=$2
shift 2
TARGETS=("$@")
for target in "${TARGETS[@]}"; do
  case $target in
    cuda:*)
      if ! command -v ptxas >/dev/null && [[ ! -x /usr/local/cuda/bin/ptxas ]] &&
         [[ ! -x ${CUDA_HOME:-/nonexistent}/bin/ptxas ]]; then
        echo "gpu_compile_all: no ptxas (the CUDA toolkit) for $target: skipped"
        exit 77
      fi ;;
    hip:*)
      if ! command -v ld.lld-16 >/dev/null && [[ ! -x /usr/lib/llvm-16/bin/ld.lld ]]; then
        echo "gpu_compile_all: no ld.lld-16 for $target: skipped"
        exit 77
      fi ;;
  esac
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fails=0
count=0
compile() {  # <source> <arch> <name>: each public function of the file
  local fn
  for fn in $(grep -o 'func\.func @[A-Za-z0-9_]*' "$1" | sed 's/.*@//'); do
    count=$((count + 1))
    if ! "$BIN/tessera-compile" "$1" --function "$fn" --target "$2" \
         -o "$OUT/$3.$fn.${2//:/_}.tsp" >"$OUT/log" 2>&1; then
      # SPIR-V kernels have no mesh (system) atomic scope: the conformance
      # kernel for it is expected to be refused, by name.
      if [[ $2 == level_zero && $3 == cts_atomic_add_mesh ]] && grep -q "has scope 'mesh'" "$OUT/log"; then
        echo "unsupported as expected: $3 (@$fn) for $2 (no mesh atomic scope)"
        continue
      fi
      echo "FAIL: $3 (@$fn) for $2"
      sed 's/^/  /' "$OUT/log" | head -20
      fails=$((fails + 1))
    fi
  done
}
# The conformance kernels' @PARAM@s, filled in as the areas fill them
# (tests/cts_kernel_params.txt: KEY=VALUE lines).
FILL_ARGS=()
while IFS== read -r key value; do
  [[ -z $key || $key == \#* ]] && continue
  FILL_ARGS+=(-e "s/@$key@/$value/g")
done <"$SRC/tests/cts_kernel_params.txt"
fill() { sed "${FILL_ARGS[@]}" "$1"; }
for arch in "${TARGETS[@]}"; do
  for f in "$SRC"/examples/*.mlir; do
    compile "$f" "$arch" "$(basename "$f" .mlir)"
  done
  # The blockwise attention and its backward (attention=1: the three
  # kernels of AttentionGradKernel.h), which the GPU schedule leaves off.
  for fn in heads_loss_grad odd_loss_grad plain_loss_grad; do
    count=$((count + 1))
    if ! "$BIN/tessera-compile" "$SRC/examples/attention_grad.mlir" --function "$fn" --target "$arch" \
         --schedule attention=1 -o "$OUT/blockwise.$fn.${arch//:/_}.tsp" >"$OUT/log" 2>&1; then
      echo "FAIL: attention_grad (@$fn, attention=1) for $arch"
      sed 's/^/  /' "$OUT/log" | head -20
      fails=$((fails + 1))
    fi
  done
  for f in "$SRC"/conformance/kernels/tile/*.mlir; do
    name=$(basename "$f" .mlir)
    fill "$f" >"$OUT/$name.mlir"
    if grep -q '@[A-Z0-9_]*@' "$OUT/$name.mlir"; then
      echo "FAIL: $name has parameters this test does not fill: $(grep -o '@[A-Z0-9_]*@' "$OUT/$name.mlir" | sort -u | tr '\n' ' ')"
      fails=$((fails + 1))
      continue
    fi
    compile "$OUT/$name.mlir" "$arch" "cts_$name"
  done
done
echo "gpu_compile_all: $((count - fails)) of $count compiles passed (${TARGETS[*]})"
[[ $fails == 0 ]]
