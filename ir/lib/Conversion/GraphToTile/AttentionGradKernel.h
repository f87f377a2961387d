//===- AttentionGradKernel.h - Tile IR kernels for flash_attention_grad ---===//
//
// Part of tessera-graph-to-tile-kernels: a tessera_schedule.flash_attention_grad
// as three Tile IR kernels (FlashAttention-2's backward split where a GPU
// group cannot reach the others' results), none of which stores a score
// matrix bigger than a block_q x block_kv block of shared memory:
//
//   1. stats, per (batch element, query block): the softmax statistics of
//      each query row, recomputed as the forward does (the online max and
//      sum over the key blocks), stored as L = m + log(l), with
//      D = rowsum(dO * O): a [batch, Sq, 2] f32 scratch buffer;
//   2. dQ, per (batch element, query block), per key block: K^T and V
//      blocks staged in shared memory, then per score of the block
//      P = exp(scale * q.k - L) (0 where masked), dP = dO_row . V_key,
//      dS = P (dP - D) into shared memory; each lane's dQ elements
//      accumulate dS K in registers; dQ = scale * that;
//   3. dK^T and dV, per (batch element, key block): K^T and V blocks staged
//      once, then per query block P and dS recomputed as in 2 into shared
//      memory, and each lane's elements accumulate dV += P^T dO and
//      dK^T += Q^T dS in registers; dK^T = scale * that.
//
// Every kernel recomputes S = scale * Q K^T from Q and K (what
// FlashAttention's backward does instead of keeping P). `causal` masks the
// keys past each query and skips whole blocks above the diagonal (2: key
// blocks after the block holding the query block's last row; 3: query
// blocks before the key block's first key). f32, row-major (the verifier
// of the op).
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_ATTENTIONGRADKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_ATTENTIONGRADKERNEL_H

#include <array>
#include <cstdint>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::conversion::attention_grad {

/// f32 elements of the statistics buffer (L and D per query row).
int64_t statsElements(schedule::FlashAttentionGradOp op);

/// Grids: stats and dQ take (batch element, query block) pairs, dK^T/dV
/// (batch element, key block) pairs, at most `maxGroups` groups (which then
/// loop over the rest).
std::array<int64_t, 3> queryGrid(schedule::FlashAttentionGradOp op, int64_t maxGroups);
std::array<int64_t, 3> keyGrid(schedule::FlashAttentionGradOp op, int64_t maxGroups);

/// Kernel bodies (1-D groups of `lanes` lanes) over flat f32 buffers, all
/// arguments of `k`.
void buildStats(mlir::func::FuncOp k, schedule::FlashAttentionGradOp op, int64_t lanes, mlir::Value q,
                mlir::Value kt, mlir::Value o, mlir::Value dout, mlir::Value stats);
void buildQueryGrad(mlir::func::FuncOp k, schedule::FlashAttentionGradOp op, int64_t lanes, mlir::Value q,
                    mlir::Value kt, mlir::Value v, mlir::Value dout, mlir::Value stats, mlir::Value dq);
void buildKeyValueGrad(mlir::func::FuncOp k, schedule::FlashAttentionGradOp op, int64_t lanes, mlir::Value q,
                       mlir::Value kt, mlir::Value v, mlir::Value dout, mlir::Value stats, mlir::Value dkt,
                       mlir::Value dv);

}  // namespace tessera::conversion::attention_grad

#endif
