//===- KernelLowering.h - Tile IR kernel bodies -> gpu/memref ops ----------===//
//
// The target-neutral half of every GPU code generator: rewrites the body of
// one Tile IR kernel (a func.func with tessera_tile.group_size) in place
// into gpu / memref / arith / math / scf ops with every vector scalarized
// (GPU registers are scalars; SPIR-V vectors have at most 4 components).
// What has no neutral form is emitted for the target:
//
//                      SPIRV (vulkan)                 NVVM (cuda), ROCDL (hip)
//  subgroup_size       SubgroupSize builtin, clamped  min(warp, lanes)
//  subgroup_reduce     GroupNonUniform*Reduce         xor butterfly of
//                                                     gpu.shuffle (width
//                                                     min(warp, lanes))
//  shuffle             GroupNonUniformShuffle*        gpu.shuffle
//  atomic_rmw          left for the SPIR-V patterns   memref.atomic_rmw
//                      (float max/min retyped)        (mesh scope: a
//                                                     diagnostic)
//  subgroup_mma        per-lane FMAs from shared      options.subgroupMma if
//                      memory                         set (cuda sm_80+:
//                                                     mma.sync), else FMAs
//  warpgroup_mma       per-lane FMAs from shared      options.warpgroupMma
//                      memory (swizzled)              if set (cuda sm_90a:
//                                                     wgmma), else FMAs
//  wavefront_mma       per-lane FMAs from shared      options.wavefrontMma
//                      memory                         if set (hip CDNA:
//                                                     MFMA), else FMAs
//  wave32_mma          per-lane FMAs from shared      options.wave32Mma if
//                      memory                         set (hip RDNA3:
//                                                     WMMA), else FMAs
//
// A dialect conversion with one pattern per op (the files are listed in
// ir/lib/Conversion/TileToGPU/KernelPatterns.h; docs/spirv-lowering.md).
// Used by tessera-tile-to-gpu (TileToSPIRV) and the cuda and hip plugins'
// compiler parts.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_TILETOGPU_KERNELLOWERING_H
#define TESSERA_CONVERSION_TILETOGPU_KERNELLOWERING_H

#include <functional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LogicalResult.h"

namespace tessera::tile {
class SubgroupMmaOp;
class WarpgroupMmaOp;
class WarpgroupMmaWaitOp;
class WavefrontMmaOp;
class Wave32MmaOp;
}

namespace tessera::gpu_lowering {

/// SPIRV: Vulkan.  NVVM, ROCDL: the forms built on gpu.shuffle (warp or
/// wavefront of `subgroupSize` lanes) and memref.atomic_rmw.
enum class GpuTarget { SPIRV, NVVM, ROCDL };

struct KernelLoweringOptions {
  GpuTarget target = GpuTarget::SPIRV;
  /// SPIR-V only: f32 atomic add as a compare-exchange loop too.
  bool casFloatAdd = false;
  /// NVVM / ROCDL: lanes of the hardware's subgroup (32 on NVIDIA and
  /// RDNA, 64 on CDNA).
  int64_t subgroupSize = 32;
  /// The target's form of tessera_tile.subgroup_mma (e.g. cuda sm_80+:
  /// ldmatrix + mma.sync), given the accumulator's elements (scalarized)
  /// and the lane's index in its subgroup (index); returns the result's
  /// elements, or failure after a diagnostic.  Unset: each lane computes
  /// its own elements with fused multiply-adds from shared memory.
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
      mlir::OpBuilder &, tile::SubgroupMmaOp, llvm::ArrayRef<mlir::Value> acc, mlir::Value subgroupLane)>
      subgroupMma;
  /// The same for tessera_tile.warpgroup_mma (cuda sm_90a: wgmma), given
  /// the lane's index in its warpgroup of 128.
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
      mlir::OpBuilder &, tile::WarpgroupMmaOp, llvm::ArrayRef<mlir::Value> acc, mlir::Value warpgroupLane)>
      warpgroupMma;
  /// tessera_tile.round_to_bf16 as the target's instruction (cuda sm_80+:
  /// cvt.rn.bf16.f32), returning the i16 bits; unset: the integer rounding
  /// of ElementTypes.h (roundToBF16Bits).
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)> roundToBF16;
  /// tessera_tile.warpgroup_mma_wait (cuda sm_90a: wgmma.wait_group), given
  /// the accumulator's elements; unset: the accumulator as it is (the
  /// per-lane form completes each warpgroup_mma when it returns).
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(mlir::OpBuilder &, tile::WarpgroupMmaWaitOp,
                                                                llvm::ArrayRef<mlir::Value> acc)>
      warpgroupMmaWait;
  /// The same for tessera_tile.wavefront_mma (hip CDNA: MFMA), given the
  /// lane's index in its wavefront of 64.
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
      mlir::OpBuilder &, tile::WavefrontMmaOp, llvm::ArrayRef<mlir::Value> acc, mlir::Value wavefrontLane)>
      wavefrontMma;
  /// The same for tessera_tile.wave32_mma (hip RDNA3: WMMA), given the
  /// lane's index in its wave of 32.
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
      mlir::OpBuilder &, tile::Wave32MmaOp, llvm::ArrayRef<mlir::Value> acc, mlir::Value waveLane)>
      wave32Mma;
};

/// Marks an atomic_rmw that the SPIR-V lowering rewrote onto the integer
/// bits of a float buffer (float max/min): the SPIR-V conversion emits a
/// compare-exchange loop that applies `kind` to the float value (the
/// attribute holds the float type).
inline constexpr const char kFloatCasAttr[] = "tessera.spirv_float_cas";

/// tile_load_async / _commit / _wait -> cp_async copies of 16 bytes per
/// lane (round robin over the group), cp_async_commit, cp_async_wait 0:
/// their form on targets without a tensor-copy engine (TileLoads.cpp).
/// lowerTileKernelBody does it first; cuda calls it itself before lowering
/// cp_async (except on sm_90a, where they are TMA copies). set_max_registers
/// is dropped; a warp-specialized pipeline (single_lane copies,
/// tile_load_acquire / _release) is an error naming the op.
mlir::LogicalResult expandTileLoads(mlir::func::FuncOp f);

/// wavefront_mma computed by each lane (`p`: its index in its wavefront of
/// 64) for its own accumulator elements (`acc`, scalarized): what targets
/// without matrix cores do, and a hook's way out for an operand type its
/// chip has no instruction for.
llvm::SmallVector<mlir::Value> wavefrontMmaByLane(mlir::OpBuilder &b, mlir::Location l, tile::WavefrontMmaOp o,
                                                  mlir::Value a, mlir::Value bm, mlir::Value aIndex, mlir::Value bIndex,
                                                  llvm::ArrayRef<mlir::Value> acc, mlir::Value p);

/// warpgroup_mma's 128-byte swizzle of element index `e` (index type):
/// e ^ ((e >> 3) & 0x38).
mlir::Value swizzle128(mlir::OpBuilder &b, mlir::Location l, mlir::Value e);

/// The lane's linear index in its group (lane_id ops; `group` the kernel's
/// group size).
mlir::Value linearLaneId(mlir::OpBuilder &b, mlir::Location l, llvm::ArrayRef<int64_t> group);

/// Rewrites the body of the Tile IR kernel `f` in place (see above).  On
/// failure a diagnostic names the op.
mlir::LogicalResult lowerTileKernelBody(mlir::func::FuncOp f, const KernelLoweringOptions &options);

}  // namespace tessera::gpu_lowering

#endif
