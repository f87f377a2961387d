//===- GraphToSchedule.h - parts of --tessera-graph-to-schedule -*- C++ -*-===//
#ifndef TESSERA_LIB_DIALECT_GRAPH_TRANSFORMS_GRAPHTOSCHEDULE_H
#define TESSERA_LIB_DIALECT_GRAPH_TRANSFORMS_GRAPHTOSCHEDULE_H

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera::graph {

/// An attention chain: matmul(Q, K^T) -> [scale] [causal mask] -> softmax
/// -> matmul(P, V) (AttentionToSchedule.cpp, analyzeAttention).
struct AttentionChain {
  MatmulOp qk, pv;
  SoftmaxOp softmax;
  llvm::SmallVector<mlir::Operation *, 2> peeled;  // the scale and the mask, from the softmax's side
  double scale = 1.0;
  bool causal = false;
  mlir::Value query() { return qk.getLhs(); }
  mlir::Value keyT() { return qk.getRhs(); }
  mlir::Value value() { return pv.getRhs(); }
};

/// The attention chain whose probabilities are `sm`'s result, when it has
/// the form flash_attention computes (f32, or bf16 / f16 with
/// `sixteenBit`; rank 2 or 3, every intermediate used once, a splat scale,
/// a causal mask); nothing otherwise.
std::optional<AttentionChain> analyzeAttention(SoftmaxOp sm, bool sixteenBit = false);

/// An attention block of `want` rows clamped to a sequence of `n` (the ops
/// allow a partial last block, so a prime length keeps full-size blocks).
inline int64_t attentionBlock(int64_t n, int64_t want) { return std::max<int64_t>(1, std::min(want, n)); }

/// The blocks (block_q, block_kv) of an attention over `sq` queries and
/// `skv` keys: the wanted ones clamped to the sequences, then, when
/// `sharedBytes` is not 0, halved (the query block first while it is the
/// larger) until `sharedFloats(bq, bkv)` f32 fit in it: the GPU kernels'
/// shared memory per group (AttentionKernel.h, AttentionGradKernel.h).
inline std::pair<int64_t, int64_t> attentionBlocks(int64_t sq, int64_t skv, int64_t wantQ, int64_t wantKV,
                                                   int64_t sharedBytes,
                                                   llvm::function_ref<int64_t(int64_t bq, int64_t bkv)> sharedFloats) {
  int64_t bq = attentionBlock(sq, wantQ), bkv = attentionBlock(skv, wantKV);
  while (sharedBytes && 4 * sharedFloats(bq, bkv) > sharedBytes && (bq > 1 || bkv > 1)) {
    if (bq > 1 && bq >= bkv) bq = (bq + 1) / 2;
    else bkv = (bkv + 1) / 2;
  }
  return {bq, bkv};
}

/// Replaces `op` by tessera_schedule.flash_attention_grad (`blockwise`,
/// attentionBlocks) or by the composed
/// backward: matmuls, a softmax, a row sum (AttentionGrad.cpp).
void lowerAttentionGrad(AttentionGradOp op, bool blockwise, int64_t attnBlockQ, int64_t attnBlockKV,
                        int64_t sharedBytes);

/// Replaces the attention chain ending in `sm`'s consumer by a
/// tessera_schedule.flash_attention when it has the supported form; leaves
/// the IR as it is otherwise (AttentionToSchedule.cpp): f32 chains with
/// `f32`; with `wgmma`, a bf16 or f16 chain whose shapes the warpgroup
/// kernel takes becomes one with `mma = "wgmma"` (its own blocks: the
/// largest of 128 x 128, 128 x 64, 64 x 128, 64 x 64 that fits).
void matchAttention(SoftmaxOp sm, int64_t attnBlockQ, int64_t attnBlockKV, int64_t sharedBytes, bool f32 = true,
                    bool wgmma = false);

/// A tensor's values, row-major, as doubles.
struct ConstantTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};


/// The values of `v` when it is computed from constants and iota alone
/// through the elementwise ops masks are written with (add, sub, mul, div,
/// min, max, neg, relu, cast, compare, select; f32, bf16, f16, i32 and i1),
/// each result rounded to its type: the part of `v` (a value broadcast to
/// `shape`) inside the box [lo, hi) of `shape`, each value on the way
/// evaluated over its own part only,
/// so one row of a long sequence's mask costs one row of memory.  Nothing
/// when `v` is not such a constant or a part exceeds `maxElements`.
std::optional<ConstantTensor> evaluateConstantPart(mlir::Value v, llvm::ArrayRef<int64_t> shape,
                                                   llvm::ArrayRef<int64_t> lo, llvm::ArrayRef<int64_t> hi,
                                                   int64_t maxElements);

/// Parts of at most this many elements are evaluated (a whole constant
/// that is not a splat, too).
constexpr int64_t kMaxMaskElements = int64_t(1) << 22;

/// A causal mask is checked row by row, elements up to this many (an
/// 8192 x 8192 mask over one head: 1 s at 4096, 4.4 s at 8192 on a 2-vCPU
/// build host): longer ones leave the attention unfused.
constexpr int64_t kMaxMaskWork = int64_t(1) << 26;

/// A masked score at or below this is taken as -inf: exp(-1e4 + the span
/// of a row's scores) is 0 in f32 unless the scores span more than
/// 1e4 - 104, so the masked keys contribute nothing either way.
constexpr double kMaskedAtMost = -1.0e4;

/// When `op` (an add or a select) applies a causal mask to the scores, the
/// scores operand (of `op`'s type); null otherwise. Causal: for every
/// element [.., i, j] of the result, keys j > i are masked (an added
/// constant <= kMaskedAtMost, or the select's other, constant, branch
/// <= kMaskedAtMost) and keys j <= i get the scores unchanged (an added 0,
/// or the scores selected). The mask, the condition and the other branch
/// must be constants (evaluateConstantPart). `factor` multiplies the masked
/// values first (a scale applied after the mask; it must be positive).
mlir::Value matchCausalMask(mlir::Operation *op, double factor);

}  // namespace tessera::graph

#endif
