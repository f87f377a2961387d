//===- MmaGemmKernel.h - GEMM on subgroup / wavefront matrix units *- C++ -*-===//
//
// Part of tessera-graph-to-tile-kernels: the GEMM kernel of a matmul tile
// with `mma = "sync"`, `"mfma"` or `"wmma"` (Schedule IR) whose operands are
// bf16 or f16 (mfma: also f32) and whose shape the tile divides.  A group of TM x TN outputs
// is split among units: subgroups of 32 lanes, each a 64 x 32 block (sync),
// wavefronts of 64 lanes, each a 64 x 64 block (mfma), or waves of 32
// lanes in 16 x 16 tiles, each a 64 x 32 block (wmma).  K is staged
// sliceK (BK, at least 32; f32: 16) at a time in two shared-memory stages
// of the operands' values (rows padded by 16 bytes, so that the eight
// 16-byte rows a matrix load reads fall in different banks), filled by
// cp_async (16 bytes per lane) one slice ahead of the one being multiplied:
//
//   load slice 0 -> stage 0; commit
//   for each slice s:  wait for it; barrier (every unit is done with
//                      slice s-1, whose stage the next load reuses);
//                      load slice s+1 -> the other stage; commit;
//                      BK/16 tessera_tile.subgroup_mma per subgroup,
//                      BK/8 tessera_tile.wavefront_mma per wavefront, or
//                      BK/16 tessera_tile.wave32_mma per wave
//   the epilogue on each lane's elements (the op's layout), stored
//
// On cuda sm_80+ subgroup_mma is ldmatrix + mma.sync (tensor cores); on
// hip's CDNA targets wavefront_mma is MFMA (matrix cores), on RDNA3
// wave32_mma is WMMA; other targets
// compute them lane by lane, so the kernel runs everywhere.
// Ineligible matmuls (other element types, a tile that does not divide the
// problem) keep the lanes' register-blocked GEMM.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_MMAGEMMKERNEL_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_MMAGEMMKERNEL_H

#include <cstdint>
#include <functional>

#include "ScheduleGroups.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::conversion::mma {

/// Rows and columns of the output block of one subgroup (mma = "sync").
constexpr int64_t kWarpM = 64, kWarpN = 32;
/// ... of one wavefront (mma = "mfma"): 2 x 2 tiles of 32 x 32, each a
/// v_mfma_f32_32x32x8 per 8-deep step (64 f32 per lane).
constexpr int64_t kWaveM = 64, kWaveN = 64;

/// Depth of a staged K slice: the tile's BK rounded up to a multiple of 16,
/// at least 32. BK is a register-blocking choice of the lanes' GEMM (16 is
/// best for f32 on an H100); with one 16-deep step per slice the next
/// slice's copies would have nothing to overlap (128x128: 5.42 ms at 16,
/// 4.05 ms at 32 for a bf16 8192^3 GEMM on an H100).
/// f32 operands (4 bytes, mfma only): a multiple of 16, at least 16.
int64_t sliceK(const GemmTile &tile, int64_t operandBytes = 2);

/// Whether `matmul` multiplies bf16 x bf16 or f16 x f16 (with `f32`, also
/// f32 x f32) accumulated in f32, or (with `i8`) i8 x i8 accumulated in
/// i32, on static shapes, as matrix units do; its M, N, K.
bool matrixUnitOperands(graph::MatmulOp matmul, int64_t *M, int64_t *N, int64_t *K, bool f32 = false,
                        bool i8 = false);

/// (Each function below hands a tile with mmaWgmma to WgmmaGemmKernel.h.)
///
/// Whether `matmul` with `tile` gets this kernel: tile.mmaSync,
/// tile.mmaMfma or tile.mmaWmma, bf16 x bf16 or f16 x f16 accumulated in f32, TM | M,
/// TN | N, sliceK | K, the unit's block dividing TM x TN, at most 1024
/// lanes and 48 KiB of shared memory.
bool eligible(graph::MatmulOp matmul, const GemmTile &tile);

/// The tile for `matmul`: `tile` when it is eligible or its mma is none of
/// "sync", "mfma", "wmma";
/// else the largest tile no larger than it, of TM in {tile.tm, 128, 64}
/// and TN in {tile.tn, 128, 64, 32}, that makes it eligible (a 256 x 64
/// attention product gets 128 x 64), or `tile` when none does.
GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile);

/// The first of `sizes` (TM, TN), no larger than `tile`'s, that makes
/// `matmul` eligible, as `tile` with those sizes; else `tile`.
GemmTile firstEligibleTile(graph::MatmulOp matmul, const GemmTile &tile,
                           llvm::ArrayRef<std::pair<int64_t, int64_t>> sizes,
                           llvm::function_ref<bool(graph::MatmulOp, const GemmTile &)> isEligible);

/// Lanes per group: (TM / 64) x (TN / 32) subgroups or waves of 32, or
/// (TM / 64) x (TN / 64) wavefronts of 64.
int64_t lanes(const GemmTile &tile);

/// The index arithmetic of the GEMM kernel builders, at one location.
struct IndexOps {
  mlir::Location l;
  mlir::Value c(mlir::OpBuilder &b, int64_t v) const;
  mlir::Value add(mlir::OpBuilder &b, mlir::Value x, mlir::Value y) const;
  mlir::Value mulC(mlir::OpBuilder &b, mlir::Value x, int64_t v) const;
  mlir::Value divC(mlir::OpBuilder &b, mlir::Value x, int64_t v) const;
  mlir::Value remC(mlir::OpBuilder &b, mlir::Value x, int64_t v) const;
};

/// Stores output element (row, col) of the batch element the group works
/// on, given its f32 accumulator: the fused epilogue and the store.
using StoreElement = std::function<void(mlir::OpBuilder &, mlir::Value row, mlir::Value col, mlir::Value acc)>;

/// Fills kernel `k` (1-D groups of lanes(tile) lanes, grid (N/TN, M/TM,
/// batch)) multiplying the flat buffers `a` ([batch, M, K]) and `b`
/// ([batch, K, N]), then calling `store` for each of the lane's elements.
void buildKernel(mlir::func::FuncOp k, graph::MatmulOp matmul, const GemmTile &tile, mlir::Value a,
                 mlir::Value b, const StoreElement &store);

}  // namespace tessera::conversion::mma

#endif
