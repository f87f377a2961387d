//===- WgmmaGemmKernel.h - GEMM on warpgroup matrix units -----*- C++ -*-===//
//
// Part of tessera-graph-to-tile-kernels: the GEMM kernel of a matmul tile
// with `mma = "wgmma"` (Schedule IR) whose operands are bf16 or f16 and
// whose shape the tile divides.  A group of TM x TN outputs is TM/64
// warpgroups of 128 lanes, each a 64 x TN block; K is staged 64 at a time
// in S shared-memory stages laid out the way Hopper's wgmma reads them
// (tessera_tile.warpgroup_mma: 128-byte rows swizzled in 1024-byte
// groups; A as [TM rows][64 k], B as [TN/64 blocks][64 k][64 columns]),
// filled by tessera_tile.tile_load_async (one TMA copy per box on cuda
// sm_90a, 16 bytes per lane elsewhere) S-1 slices ahead of the one being
// multiplied:
//
//   load slices 0 .. S-2 -> stages 0 .. S-2 (one commit each)
//   for each slice s:  wait for stage s%S (parity (s/S)%2); barrier (every
//                      warpgroup is done with slice s-1); load slice s+S-1
//                      -> stage (s-1)%S; one warpgroup_mma (k = 64)
//   the epilogue on each lane's elements (warpgroup_mma's layout), stored
//
// With the tile's `warp_specialize` the group has one more warpgroup, the
// producer (warpgroup 0), and the TM/64 others consume:
//
//   producer lane 0:  for each slice s: if s >= S, tile_load_acquire its
//                     stage (every consumer lane has released it); load
//                     slice s -> stage s%S (single_lane copies and commit)
//   consumers:        for each slice s: wait for stage s%S; warpgroup_mma;
//                     tile_load_release the stage; then the epilogue
//
// and, with two consumers, set_max_registers moves registers from the
// producer (40) to the consumers (232).  Only a tensor-copy engine (cuda
// sm_90a with TMA) lowers it; the Tile IR interpreter runs it.
//
// S is the tile's `stages`, else 4 where they fit (at most kMaxSharedBytes:
// 128 KiB for 128 x 128).  Above 48 KiB the cuda compiler moves the
// stages to dynamic shared memory.  Other targets compute warpgroup_mma
// lane by lane, so the kernel runs (and is checked) everywhere that has
// the shared memory.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAGEMMKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAGEMMKERNEL_H

#include "MmaGemmKernel.h"

namespace tessera::conversion::wgmma {

/// Depth of a staged K slice: one 128-byte swizzled row of 16-bit values.
constexpr int64_t kSliceK = 64;
/// Stages when the tile does not say.
constexpr int64_t kDefaultStages = 4;
/// Shared memory a group may use: what an H100 opts into (227 KiB).  A
/// device with less refuses the kernel when it is compiled or launched.
constexpr int64_t kMaxSharedBytes = 227 * 1024;

/// Whether `matmul` with `tile` gets this kernel: tile.mmaWgmma, bf16 x
/// bf16 or f16 x f16 accumulated in f32, TM in {64, 128}, TN a multiple
/// of 64 up to 256, the stages within kMaxSharedBytes; rows of 16 bytes
/// (8 | K, 8 | N), a box's room (TM <= batch x M, 64 <= K, 64 <= N), and
/// 64 | K where there are several batches.  Edges are guarded: TM, TN and
/// 64 need not divide M, N and K.
bool eligible(graph::MatmulOp matmul, const GemmTile &tile);

/// The tile for `matmul`: `tile` when eligible, else the first eligible of
/// 128 x 128, 64 x 128, 128 x 64 and 64 x 64 no larger than it, else
/// `tile` (the lanes' GEMM).
GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile);

/// Lanes per group: TM / 64 warpgroups of 128, one more with
/// warpSpecialize.
int64_t lanes(const GemmTile &tile);

/// Shared-memory stages: tile.stages, else kDefaultStages or fewer (at
/// least 2) to fit kMaxSharedBytes.
int64_t stages(const GemmTile &tile);

/// As mma::buildKernel (1-D groups of lanes(tile) lanes, grid (N/TN, M/TM,
/// batch)).
void buildKernel(mlir::func::FuncOp k, graph::MatmulOp matmul, const GemmTile &tile, mlir::Value a,
                 mlir::Value b, const mma::StoreElement &store);

}  // namespace tessera::conversion::wgmma

#endif
