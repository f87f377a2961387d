//===- Schedule.h - Tessera Schedule IR dialect ---------------------------===//
#ifndef TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H
#define TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H

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
}  // namespace tessera::schedule

#endif
