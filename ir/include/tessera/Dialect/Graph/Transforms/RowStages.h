//===- RowStages.h - cut a function into kernels that split by rows -------===//
//
// A backend that runs a kernel's groups over blocks of dim-0 rows (cpu) runs
// a whole function as one group, on one thread, as soon as one op of it is
// not row-local (a transpose that moves dim 0, a reshape of it, a reduction
// over it). `--tessera-graph-to-schedule=row-stages=1` (what the program
// compiler asks for on such targets) cuts such a function, after grouping,
// into parts (the ops reordered by a list schedule where that saves a part),
// each of which is row-local (analyzeRowLocality) or holds ops that are not
// (kept together: one group), outlined as functions `<fn>_part<i>`. The function keeps its
// signature, becomes a list of calls and is marked `tessera.row_stages`:
// the program compiler launches the parts in order, with the values
// between them as intermediate buffers. A function that is row-local, or
// that would be one part, is left as it is.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_ROWSTAGES_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_ROWSTAGES_H

#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace tessera::graph {

/// Marks a function cut into parts: its body is calls to them.
constexpr llvm::StringLiteral kRowStagesAttr = "tessera.row_stages";

/// Cuts `fn` as described above (new functions join `symbols`' table).
mlir::LogicalResult cutIntoRowStages(mlir::func::FuncOp fn, mlir::SymbolTable &symbols);

}  // namespace tessera::graph

#endif
