//===- WgmmaGemmKernel.h - GEMM on warpgroup matrix units -----*- C++ -*-===//
//
// Part of tessera-graph-to-tile-kernels: the GEMM kernel of a matmul tile
// with `mma = "wgmma"` (Schedule IR) whose operands are bf16 or f16 and
// whose shape the tile divides.  A group of TM x TN outputs is TM/64
// warpgroups of 128 lanes, each a 64 x TN block; K is staged 64 at a time
// in two shared-memory stages laid out the way Hopper's wgmma reads them
// (tessera_tile.warpgroup_mma: 128-byte rows swizzled in 1024-byte
// groups; A as [TM rows][64 k], B as [TN/64 blocks][64 k][64 columns]),
// filled by cp_async (16 bytes per lane, each chunk written to its
// swizzled place) one slice ahead of the one being multiplied:
//
//   load slice 0 -> stage 0; commit
//   for each slice s:  wait for it; barrier; load slice s+1 -> the other
//                      stage; commit; one warpgroup_mma (k = 64)
//   the epilogue on each lane's elements (warpgroup_mma's layout), stored
//
// Both stages fit the 48 KiB of static shared memory when TM + TN <= 192
// (64 x 128, 128 x 64, 64 x 64).  On cuda sm_90a warpgroup_mma is
// wgmma.mma_async; other targets compute it lane by lane, so the kernel
// runs (and is checked) everywhere.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAGEMMKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_WGMMAGEMMKERNEL_H

#include "MmaGemmKernel.h"

namespace tessera::conversion::wgmma {

/// Depth of a staged K slice: one 128-byte swizzled row of 16-bit values.
constexpr int64_t kSliceK = 64;

/// Whether `matmul` with `tile` gets this kernel: tile.mmaWgmma, bf16 x
/// bf16 or f16 x f16 accumulated in f32, TM in {64, 128}, TN a multiple
/// of 64 up to 256, TM | M, TN | N, 64 | K, both stages within 48 KiB.
bool eligible(graph::MatmulOp matmul, const GemmTile &tile);

/// The tile for `matmul`: `tile` when eligible, else the first eligible of
/// 64 x 128, 128 x 64 and 64 x 64 no larger than it, else `tile` (the
/// lanes' GEMM).
GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile);

/// Lanes per group: TM / 64 warpgroups of 128.
int64_t lanes(const GemmTile &tile);

/// As mma::buildKernel (1-D groups of lanes(tile) lanes, grid (N/TN, M/TM,
/// batch)).
void buildKernel(mlir::func::FuncOp k, graph::MatmulOp matmul, const GemmTile &tile, mlir::Value a,
                 mlir::Value b, const mma::StoreElement &store);

}  // namespace tessera::conversion::wgmma

#endif
