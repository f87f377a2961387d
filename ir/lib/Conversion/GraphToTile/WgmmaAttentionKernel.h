//===- WgmmaAttentionKernel.h - attention on warpgroup matrix units -*- C++ -*-===//
//
// Part of tessera-graph-to-tile-kernels: a tessera_schedule.flash_attention
// with `mma = "wgmma"` (bf16 or f16 operands; the shapes of
// schedule::wgmmaAttentionMisfit) as one Tile IR kernel in the form of
// FlashAttention-3: each group takes one block of block_q query rows of one
// batch element (causal: the longest first), block_q / 64 warpgroups of 128
// lanes, each owning 64 rows.
// The scores and the output stay in the lanes' registers, in the layout of
// tessera_tile.warpgroup_mma, and the softmax statistics are computed there
// (the four lanes of a quad hold a row's columns: two xor shuffles).
//
//   Q block -> Qs (tile_load_async, stage 2); K^T and V block 0 -> stage 0
//   for each key block j (up to the diagonal when causal):
//     wait for stage j%2; barrier (every warpgroup is done with j-1);
//     load key block j+1 -> stage (j+1)%2
//     S = Q K_j^T                    warpgroup_mma, n = block_kv, d/64 slices
//     S = scale * S, masked keys -inf (past Skv; above the diagonal)
//     m_new = max(m, rowmax S)       per lane, then shuffles xor 1, 2
//     P = exp(S - m_new); l = l * exp(m - m_new) + rowsum P (as exp2 of
//     scores scaled by log2(e))
//     P (rounded to the operand type) -> Ps, swizzled as warpgroup_mma
//     reads its A; O *= exp(m - m_new); barrier
//     O += P V_j                     warpgroup_mma, n = dv, block_kv/64 slices
//   O / l stored (rows past Sq are computed, never stored)
//
// Shared memory (16-bit): Q [d/64][block_q][64], two stages of K^T
// [d/64][block_kv/64][64][64] and V [block_kv/64][dv/64][64][64], and P
// [block_kv/64][block_q][64]; up to 192 KiB (d = dv = 128, 128 x 128
// blocks), so cuda moves it to dynamic shared memory.  On cuda sm_90a the
// copies are TMA and the products wgmma; elsewhere the same kernel copies 16
// bytes per lane and multiplies lane by lane, so the Tile IR interpreter
// checks it (WgmmaAttentionTest).
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAATTENTIONKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAATTENTIONKERNEL_H

#include <array>
#include <cstdint>
#include <functional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::conversion::wgmma_attention {

/// Lanes per group: block_q / 64 warpgroups of 128.
int64_t lanes(schedule::FlashAttentionOp op);

/// Grid: (query blocks, batch, 1), one block per group.
std::array<int64_t, 3> grid(schedule::FlashAttentionOp op);

/// Stores `value` (f32) as element `flat` of the result (its stored form).
using StoreResult = std::function<void(mlir::OpBuilder &, mlir::Value flat, mlir::Value value)>;

/// Fills kernel `k` computing `op` from the flat 16-bit buffers `q`, `kt`
/// (K^T row-major), `v` (arguments of `k`; bf16 as its bits in i16).
void buildKernel(mlir::func::FuncOp k, schedule::FlashAttentionOp op, mlir::Value q, mlir::Value kt, mlir::Value v,
                 const StoreResult &store);

}  // namespace tessera::conversion::wgmma_attention

#endif
