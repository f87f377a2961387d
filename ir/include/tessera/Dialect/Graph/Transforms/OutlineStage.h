//===- OutlineStage.h - a run of a function's ops into a function ---------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_OUTLINESTAGE_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_OUTLINESTAGE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace tessera::graph {

/// Outlines `ops` (a contiguous run of `fn`'s entry block) into a private
/// function `name` (renamed by `symbols` if taken) placed after
/// `lastStage`, taking the values the run reads from outside (live-ins) and
/// returning those used after it (live-outs), and replaces the run with a
/// call placed before `before`. A run nothing uses is erased. Only tensors
/// may cross (an error on the run's first op otherwise). `lastStage` is
/// set to the new function.
mlir::LogicalResult outlineStage(mlir::func::FuncOp fn, llvm::ArrayRef<mlir::Operation *> ops,
                                 mlir::Operation *before, llvm::StringRef name, mlir::SymbolTable &symbols,
                                 mlir::Operation *&lastStage);

}  // namespace tessera::graph

#endif
