//===- KernelPatterns.h - the patterns of lowerTileKernelBody ----*- C++ -*-===//
//
// Private to TesseraTileToGPU. lowerTileKernelBody (KernelLowering.cpp) is
// a dialect conversion of one kernel: Tile IR, and vectors of one or two
// dims, are illegal; each op has its pattern:
//  - VectorScalarization.cpp: vectors become their elements (row-major):
//    MLIR 16's conversion framework has no 1:N type conversion, so a vector
//    value is replaced by a "pack" (builtin.unrealized_conversion_cast of
//    its scalars to the vector type, marked kScalarsAttr) and every pattern
//    reads its vector operands' scalars from the pack (unpackScalars).
//    Vector constants, insert / extract / broadcast, elementwise ops, and
//    scf.for / scf.yield carrying vectors;
//  - KernelPatterns.cpp: the target-neutral Tile IR ops (ids, barrier,
//    shared memory, copies, load / store, math, dot);
//  - TargetPatterns.cpp: subgroup_size, shuffle, subgroup_reduce and
//    atomic_rmw in the target's form (SPIR-V or NVVM / ROCDL);
//  - MmaPatterns.cpp: mma, subgroup_mma, warpgroup_mma.
// After the conversion no pack has a user (finishScalarization checks).
// The patterns of one kernel share its KernelContext: one kernel at a
// time, one thread.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_TILETOGPU_KERNELPATTERNS_H
#define TESSERA_LIB_CONVERSION_TILETOGPU_KERNELPATTERNS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"

namespace tessera::gpu_lowering {

/// What the patterns of one kernel share.
struct KernelContext {
  mlir::func::FuncOp f;
  llvm::SmallVector<int64_t, 3> group;  // the kernel's group size
  const KernelLoweringOptions *options = nullptr;
  mlir::Value tileId;  // built at the entry on first use

  bool nvvm() const { return options->target != GpuTarget::SPIRV; }  // NVVM or ROCDL: gpu.shuffle forms
  bool rocdl() const { return options->target == GpuTarget::ROCDL; }
  int64_t lanes() const { return group[0] * group[1] * group[2]; }
  /// NVVM / ROCDL: lanes a subgroup holds here: the hardware's, or the
  /// whole group when it is smaller (shuffles then stay inside it).
  int64_t warpLanes() const { return std::min<int64_t>(options->subgroupSize, lanes()); }
};

/// A conversion pattern for op `Op` that sees its kernel's KernelContext.
template <typename Op>
struct KernelPattern : mlir::OpConversionPattern<Op> {
  KernelPattern(mlir::MLIRContext *ctx, KernelContext &k) : mlir::OpConversionPattern<Op>(ctx), kernel(k) {}
  KernelContext &kernel;
};

// --- VectorScalarization.cpp ---------------------------------------------

/// The unit attribute that marks a pack.
inline constexpr const char kScalarsAttr[] = "tessera.scalars";
/// 1-D vectors and 2-D mma fragments of static shape: what is scalarized.
bool isScalarized(mlir::Type type);
/// A pack of `elems` (row-major) as a value of vector type `type`.
mlir::Value packScalars(mlir::OpBuilder &b, mlir::Location l, mlir::Type type, mlir::ValueRange elems);
/// The elements of vector `v`: a pack's scalars, or a dense constant's
/// (made at b's insertion point). Otherwise an error at `user`.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> unpackScalars(mlir::OpBuilder &b, mlir::Value v,
                                                             mlir::Operation *user);
/// `index` constant.
mlir::Value cIdx(mlir::OpBuilder &b, mlir::Location l, int64_t v);
void populateVectorScalarizationPatterns(mlir::RewritePatternSet &patterns);
/// Marks what those patterns rewrite illegal.
void addVectorScalarizationLegality(mlir::ConversionTarget &target);
/// Vector ops the patterns cannot scalarize (3-D vectors, a vector
/// broadcast to a vector, a vector yielded by an op other than scf.for):
/// an error at the first, before anything is rewritten.
mlir::LogicalResult checkVectorOps(mlir::func::FuncOp f);
/// After the conversion: an op that still reads a pack gets an error (it
/// takes a vector the lowering cannot scalarize); unused packs are erased.
mlir::LogicalResult finishScalarization(mlir::func::FuncOp f);

// --- KernelPatterns.cpp, TargetPatterns.cpp, MmaPatterns.cpp ---------------

void populateKernelPatterns(mlir::RewritePatternSet &patterns, KernelContext &kernel);
void populateTargetPatterns(mlir::RewritePatternSet &patterns, KernelContext &kernel);
/// Target legality of the ops TargetPatterns leaves for the SPIR-V
/// conversion (atomic_rmw; shuffle up/down once marked with its lanes).
void addTargetLegality(mlir::ConversionTarget &target, const KernelContext &kernel);
/// The target's limits on those ops, before anything is rewritten: an
/// error at the first op the target cannot lower (what and why).
mlir::LogicalResult checkTargetOps(mlir::func::FuncOp f, const KernelContext &kernel);
void populateMmaPatterns(mlir::RewritePatternSet &patterns, KernelContext &kernel);
/// The mma ops' limits (fragment types, whole subgroups / warpgroups).
mlir::LogicalResult checkMmaOps(mlir::func::FuncOp f, const KernelContext &kernel);

}  // namespace tessera::gpu_lowering

#endif
