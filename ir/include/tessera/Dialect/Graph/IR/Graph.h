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
}  // namespace tessera::graph

#endif
