//===- AttentionKernel.h - Tile IR kernel for flash_attention -*- C++ -*-===//
//
// Part of tessera-graph-to-tile-kernels: a tessera_schedule.flash_attention
// as one Tile IR kernel, FlashAttention's online softmax with the schedule's
// block sizes (block_q query rows per group, key/value blocks of block_kv):
// the Sq x Skv score matrix is never stored, only a block_q x block_kv
// block of it in shared memory.
//
// Per key/value block, with barriers between the phases:
//   1. the K^T and V blocks are staged in shared memory (consecutive lanes
//      on consecutive addresses; keys past Skv read as 0);
//   2. S = scale * Q_blk K_blk^T, a block_q x block_kv block in shared
//      memory, one dot product of length d per element (keys past Skv get
//      -inf: they contribute exp(-inf) = 0);
//   3. one lane per query row (rows lane, lane + lanes, ... when block_q
//      exceeds the lanes): m_new = max(m, rowmax S), P = exp(S - m_new)
//      in place of S, l = l * exp(m - m_new) + rowsum P, the rescale
//      exp(m - m_new) kept for step 4;
//   4. each lane's elements of O (registers: block_q x dv elements over the
//      group's lanes) become O * rescale + P V_blk.
// At the end O / l is stored. Only f32 (graph-to-schedule forms
// flash_attention for f32 attention only). With heads (rank 3) the groups
// take (head, query block) pairs; causal masks the keys past each query in
// step 2 and stops the key loop after the block holding the block's last
// query.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_ATTENTIONKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_ATTENTIONKERNEL_H

#include <array>
#include <cstdint>
#include <functional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::conversion::attention {

/// Bytes of shared memory the kernel of `op` needs.
int64_t sharedBytes(schedule::FlashAttentionOp op);

/// Grid of the kernel: one group per block of block_q query rows of each
/// batch element, at most `maxGroups` (the groups then loop over the
/// remaining blocks).
std::array<int64_t, 3> grid(schedule::FlashAttentionOp op, int64_t maxGroups);

/// Offset of K^T[i][j] in one batch element's K^T (its layout's formula).
using KeyOffset = std::function<mlir::Value(mlir::OpBuilder &, mlir::Value i, mlir::Value j)>;

/// Fills kernel `k` (1-D groups of `lanes` lanes) computing `op` from the
/// flat f32 buffers `q`, `kt`, `v` into `out` (all arguments of `k`).
void buildKernel(mlir::func::FuncOp k, schedule::FlashAttentionOp op, int64_t lanes,
                 mlir::Value q, mlir::Value kt, mlir::Value v, mlir::Value out,
                 const KeyOffset &keyOffset);

}  // namespace tessera::conversion::attention

#endif
