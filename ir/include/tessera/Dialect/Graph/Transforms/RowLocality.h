//===- RowLocality.h - which computations split into blocks of rows -------===//
//
// A backend that parallelizes a kernel over blocks of dim-0 rows (cpu: each
// group computes rows [r0, r0 + n) of every output) needs every op of the
// kernel to map row i of its row operands to row i of its result, with
// everything else (weights, broadcast operands) read whole from the
// kernel's inputs. This analysis answers that for a function, or for a run
// of a function's ops (the program compiler's row stages, RowStages.cpp),
// so that the cut and the code generator agree on one set of rules.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_ROWLOCALITY_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_ROWLOCALITY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessera::graph {

struct RowLocality {
  /// Every output is computed row by row: groups may own blocks of rows.
  bool local = false;
  /// Dim 0 of the first output (1 for a scalar output).
  int64_t rows = 0;
  /// When `local`: the values held as blocks of rows (inputs, results and
  /// the region arguments of schedule tiles); every other tensor is whole.
  llvm::DenseSet<mlir::Value> rowValues;
};

/// `ops` (top-level ops of one block, in order) reading `inputs` (values
/// defined outside them) and producing `outputs` (values used after them).
/// Only the uses of an input by `ops` count.
RowLocality analyzeRowLocality(llvm::ArrayRef<mlir::Operation *> ops, llvm::ArrayRef<mlir::Value> inputs,
                               llvm::ArrayRef<mlir::Value> outputs);

/// A whole function on tensors (its arguments and returned values).
RowLocality analyzeRowLocality(mlir::func::FuncOp fn);

/// A row-major transpose of the last two dims whose every use is a matmul
/// operand (directly, or through a schedule tile's region argument read only
/// by matmuls): the gradient's `X^T . dY` and `dY . W^T`. A code generator
/// that packs matmul operands in any layout reads it as a strided view of
/// its input (the cpu: the col_major tensor of the swapped shape over the
/// input's memory), so it is never stored: the analysis counts it as an
/// input when its operand is one, and the row-stage cut clones it into each
/// part that reads it, as it does constants.
bool isMatmulOperandTranspose(mlir::Operation *op);

}  // namespace tessera::graph

#endif
