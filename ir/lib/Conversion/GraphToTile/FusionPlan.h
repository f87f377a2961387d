//===- FusionPlan.h - which Graph values get a kernel, and which kernel -*- C++ -*-===//
//
// The analysis of GraphToTileKernels (its file comment has the rules): a
// Graph value is materialized (gets a buffer and a kernel) unless its user's
// kernel computes it; each materialized value gets one KernelSpec saying
// which kernel computes it, from which leaves, with what launch. Checks
// every op first: what no kernel takes is an error naming the op, before
// any IR changes.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_FUSIONPLAN_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_FUSIONPLAN_H

#include <algorithm>
#include <array>
#include <string>

#include "GpuElements.h"
#include "ScheduleGroups.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::conversion::graph_to_tile {

// Lanes per group of every kernel (1-D). 256 is a multiple of every
// subgroup width we know (8 on lavapipe, 32, 64) and fits all devices.
inline constexpr int64_t kLanes = 256;
// Lanes of the attention kernels (AttentionKernel.h, AttentionGradKernel.h):
// each lane a register block (LaneTile.h) of the 64 x 32 blocks of the GPU
// schedule; on lavapipe 64 lanes ran GPT-2's attention backward in 159 ms,
// 128 in 200 ms, 256 in 250 ms or more (docs/gpu-lowering.md).
inline constexpr int64_t kAttentionLanes = 64;
// The GEMM's tile comes from Schedule IR (ScheduleGroups.h: GemmTile; the GPU
// schedule is 128x128 outputs per group of 16x16 lanes, each lane an 8x8
// register block of rows ty + 16*i and columns tx + 16*j: conflict-free
// shared reads, coalesced global stores; K staged in slices of 16, 2 x 8
// KiB of shared memory). 8x8 rather than 4x4 halves the shared loads per
// FMA: 2.4x faster on lavapipe, where every per-lane load is a gather, and
// the usual choice on GPUs with 255 registers per lane. micro_layout =
// "quads" (vulkan's schedule) lays the block out in aligned runs of 4
// instead (buildGemm).
// Lanes a group may have (Vulkan guarantees 128; every device we target
// has at least 1024).
inline constexpr int64_t kMaxLanes = 1024;
// The most accumulators one lane of a GEMM kernel keeps (RM x RN).
inline constexpr int64_t kMaxLaneAccumulators = 256;
// Vulkan's minimum maxComputeWorkGroupCount; larger problems loop.
inline constexpr int64_t kMaxGroups = 65535;

inline int64_t numElements(mlir::Type t) { return t.cast<mlir::ShapedType>().getNumElements(); }
inline mlir::Type elemOf(mlir::Value v) { return v.getType().cast<mlir::ShapedType>().getElementType(); }

/// The kernels' buffer for Graph value `v`: flat, of its storage type
/// (bf16 as i16, fp8 as i8: kGpuElements).
inline mlir::MemRefType flatType(mlir::Value v) {
  auto tt = v.getType().cast<mlir::ShapedType>();
  return mlir::MemRefType::get({tt.getNumElements()}, elements::storageType(tt.getElementType(), kGpuElements));
}

/// One group per 256 elements, at most kMaxGroups (the kernels loop).
inline std::array<int64_t, 3> grid1D(int64_t n) {
  return {std::max<int64_t>(1, std::min((n + kLanes - 1) / kLanes, kMaxGroups)), 1, 1};
}

/// One kernel to emit: the value it materializes and how.
struct KernelSpec {
  enum Kind { kGemm, kElementwise, kRows, kLayout, kAttention, kShape, kAttentionGrad } kind;
  mlir::Value root;       // the materialized Graph value (or a copied one)
  mutable graph::MatmulOp matmul;    // kGemm: the matmul inside the tree (op handles are not const-correct)
  mlir::Operation *rowOp = nullptr;  // kRows: the row op inside the tree (graph::isRowOp); kAttention(Grad): the op
  GemmTile tile;         // kGemm: its tile sizes (from Schedule IR)
  bool copy = false;     // kElementwise: out = root's buffer (a second result)
  llvm::SmallVector<mlir::Value> leaves;  // materialized values read (kernel arguments)
  std::array<int64_t, 3> grid{1, 1, 1};  // its launch (not kAttentionGrad: three kernels)
  int64_t lanes = 0;
};

/// The kernels of one Graph function, in launch order.
struct FusionPlan {
  mlir::func::FuncOp fn;
  std::string backend;  // named in diagnostics
  llvm::SmallVector<KernelSpec> specs;
};

/// Plans `fn` (a Graph function, one block, checked shapes): every op
/// checked, every materialized value's kernel chosen and sized. Errors are
/// emitted on the op.
mlir::LogicalResult planFusion(mlir::func::FuncOp fn, llvm::StringRef backend, FusionPlan &plan);

/// The launch of `s`: its grid and lanes per group; a GEMM too large for
/// one launch is an error.
mlir::LogicalResult sizeLaunch(llvm::StringRef backend, KernelSpec &s);

}  // namespace tessera::conversion::graph_to_tile

#endif
