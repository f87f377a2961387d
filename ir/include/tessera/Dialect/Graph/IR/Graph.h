//===- Graph.h - Tessera Graph IR dialect ---------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_IR_GRAPH_H
#define TESSERA_DIALECT_GRAPH_IR_GRAPH_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessera::graph {
/// The five LayoutSpec kinds (see LayoutAttr).
enum class LayoutKind { RowMajor, ColMajor, Blocked, Tiled, Interleaved };
// Generated interface declarations name these unqualified.
using ::mlir::ArrayRef;
using ::mlir::Type;
}  // namespace tessera::graph

#include "tessera/Dialect/Graph/IR/GraphOpsDialect.h.inc"
#include "tessera/Dialect/Graph/IR/GraphOpsEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "tessera/Dialect/Graph/IR/GraphOpsAttrs.h.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Graph/IR/GraphOps.h.inc"

namespace tessera::graph {
/// The layout of a ranked tensor type: its encoding, or null for row-major.
LayoutAttr getLayout(mlir::Type type);
/// True for the elementwise ops (binary, unary, cast).
bool isElementwise(mlir::Operation *op);
/// True for the ops a schedule tile is built around (matmul, softmax,
/// reduce): the ops that are not elementwise. Null-safe.
bool isTileRoot(mlir::Operation *op);
/// True when `type` (a ranked tensor) is stored row-major: no layout, or
/// an explicit row_major one.
bool isRowMajor(mlir::Type type);
/// True for a ranked tensor defined by a splat constant (a scalar wherever
/// a tile computes it).
bool isSplatConstant(mlir::Value v);
}  // namespace tessera::graph

#endif
