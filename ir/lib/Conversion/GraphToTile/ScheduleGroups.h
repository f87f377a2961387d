//===- ScheduleGroups.h - what Schedule IR decided, for the GPU kernels -*- C++ -*-===//
//
// --tessera-graph-to-schedule groups Graph ops into tessera_schedule.tile
// regions: the fusion decision (one tile: one kernel; nothing inside it is
// stored but its outputs) and the GEMM tile sizes.  The GPU lowering reads
// them here and builds its kernels from the ops, moved back into the
// function body.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_SCHEDULEGROUPS_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_SCHEDULEGROUPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace tessera::conversion {

/// The shared-memory GEMM of one matmul: a TM x TN output tile per group,
/// K staged BK at a time, an RM x RN register block per lane, so a group
/// has (TM / RM) x (TN / RN) lanes.  From the tile's `tile_sizes = [TM,
/// TN, BK]` and `micro_tile = [RM, RN]`; the default is the GPU schedule.
/// mmaSync (the tile's `mma = "sync"`): subgroups on matrix units where the
/// operands allow (MmaGemmKernel.h), RM x RN then unused; mmaWgmma (`mma =
/// "wgmma"`): warpgroups of 128 lanes on matrix units (WgmmaGemmKernel.h);
/// mmaMfma (`mma = "mfma"`): wavefronts of 64 lanes, mmaWmma (`mma =
/// "wmma"`): waves of 32 lanes in 16 x 16 tiles (MmaGemmKernel.h).
struct GemmTile {
  int64_t tm = 128, tn = 128, bk = 16, rm = 8, rn = 8;
  bool mmaSync = false;
  /// micro_layout = "quads": lane blocks in aligned runs of 4 (RM, RN
  /// multiples of 4; else strided).
  bool quads = false;
  bool mmaWgmma = false;
  /// mma = "wgmma": the tile's `stages` (0: the kernel's choice).
  int64_t stages = 0;
  /// mma = "mfma": wavefronts of 64 lanes on matrix units (MmaGemmKernel.h).
  bool mmaMfma = false;
  /// mma = "wmma": waves of 32 lanes in 16 x 16 tiles (MmaGemmKernel.h).
  bool mmaWmma = false;
  /// mma = "wgmma" with warp_specialize: a producer warpgroup besides the
  /// multiplying ones (WgmmaGemmKernel.h).
  bool warpSpecialize = false;
  int64_t lanesM() const { return tm / rm; }
  int64_t lanesN() const { return tn / rn; }
  int64_t lanes() const { return lanesM() * lanesN(); }
};

struct ScheduleGroups {
  /// Values computed inside their user's kernel (never stored).
  llvm::DenseSet<mlir::Value> fused;
  /// Each matmul that came from a tile -> that tile's sizes.
  llvm::DenseMap<mlir::Operation *, GemmTile> gemm;
};

/// Moves the ops of every tessera_schedule.tile of `fn` into its body, in
/// place of the tile, and returns the tiles' decisions.  Inside a tile,
/// what it yields, what a matmul / softmax / reduce reads and what is read
/// twice are stored; the rest is fused.  Other Schedule IR ops (a
/// flash_attention) stay as they are: a kernel each.
ScheduleGroups inlineScheduleGroups(mlir::func::FuncOp fn);

}  // namespace tessera::conversion

#endif
