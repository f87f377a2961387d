//===- Schedule.h - Tessera Schedule IR dialect ---------------------------===//
#ifndef TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H
#define TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H

#include <string>

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessera/Dialect/Schedule/IR/ScheduleOpsDialect.h.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Schedule/IR/ScheduleOps.h.inc"

namespace tessera::schedule {
/// The values of `tile`'s region that a backend stores: what it yields,
/// what a matmul / softmax / reduce in it reads, and what is read twice
/// (splat constants aside). Everything else of the region is fused into
/// the tree of one of these and never stored. In program order, yielded
/// block arguments first.
llvm::SmallVector<mlir::Value> storedValues(TileOp tile);

/// Shared memory a flash_attention with `mma = "wgmma"` may use per group:
/// what an H100 opts into (227 KiB).
constexpr int64_t kWgmmaAttentionSharedBytes = 227 * 1024;

/// Bytes of shared memory of the warpgroup attention kernel: the query
/// block, two stages of K^T and V blocks and the probabilities, 16-bit.
inline int64_t wgmmaAttentionSharedBytes(int64_t d, int64_t dv, int64_t blockQ, int64_t blockKv) {
  return 2 * (d * blockQ + 2 * (d * blockKv + blockKv * dv) + blockQ * blockKv);
}

/// Why flash_attention of these operands and blocks cannot have `mma =
/// "wgmma"` (the shapes the warpgroup kernel takes, ScheduleOps.td), or ""
/// when it can.  Shared by graph-to-schedule, which picks the blocks, and
/// the op's verifier.
std::string wgmmaAttentionMisfit(mlir::RankedTensorType query, mlir::RankedTensorType keyT,
                                 mlir::RankedTensorType value, int64_t blockQ, int64_t blockKv);
}  // namespace tessera::schedule

#endif
