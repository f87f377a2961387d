//===- Schedule.h - Tessera Schedule IR dialect ---------------------------===//
#ifndef TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H
#define TESSERA_DIALECT_SCHEDULE_IR_SCHEDULE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessera/Dialect/Schedule/IR/ScheduleOpsDialect.h.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Schedule/IR/ScheduleOps.h.inc"

#endif
