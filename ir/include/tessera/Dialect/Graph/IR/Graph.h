//===- Graph.h - Tessera Graph IR dialect ---------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_IR_GRAPH_H
#define TESSERA_DIALECT_GRAPH_IR_GRAPH_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
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
/// The numpy broadcast of two shapes (aligned at the last dim; each pair
/// equal or one of them 1), or nullopt when they do not broadcast.
std::optional<llvm::SmallVector<int64_t>> broadcastShape(llvm::ArrayRef<int64_t> a,
                                                         llvm::ArrayRef<int64_t> b);
/// `lhs` (a ranked tensor type) with the broadcast shape of both operands;
/// null when the shapes do not broadcast.
mlir::Type broadcastType(mlir::Type lhs, mlir::Type rhs);
/// The result type of `compare` on `lhs` and `rhs`: their broadcast shape,
/// element type i1, row-major; null when the shapes do not broadcast.
mlir::Type compareType(mlir::Type lhs, mlir::Type rhs);
/// The result type of `select` (cond, a, b): `a` when it has the broadcast
/// shape of all three, else that shape with a's element type (row-major);
/// null when the shapes do not broadcast.
mlir::Type selectType(mlir::Type cond, mlir::Type a, mlir::Type b);
/// The offset of the element of `operand` (row-major) that a broadcast
/// reads at row-major offset `flat` of `result`; `operand` broadcasts to
/// `result`. For the reference and the checks.
int64_t broadcastOffset(llvm::ArrayRef<int64_t> operand, llvm::ArrayRef<int64_t> result, int64_t flat);
/// True for the elementwise ops (binary, unary, cast, compare, select).
bool isElementwise(mlir::Operation *op);
/// True for the ops a schedule tile is built around (matmul, softmax,
/// reduce, layernorm, rmsnorm): the ops that are not elementwise. Null-safe.
bool isTileRoot(mlir::Operation *op);
/// The data-movement ops (transpose, reshape, slice, broadcast_in_dim,
/// iota, gather, concat, pad) and argmax: each result element is one input
/// element (an index for iota and argmax; for gather a table element at a
/// loaded index; pad's constant outside its input);
/// each is a kernel of its own. Null-safe.
bool isShapeOp(mlir::Operation *op);
/// The tile roots other than matmul: the ops that combine the elements of
/// a row (softmax, reduce, the norms), whose epilogues fuse only with
/// `fuse-reductions`. Null-safe.
bool isRowOp(mlir::Operation *op);
/// True when `type` (a ranked tensor) is stored row-major: no layout, or
/// an explicit row_major one.
bool isRowMajor(mlir::Type type);
/// True for a ranked tensor defined by a splat constant (a scalar wherever
/// a tile computes it).
bool isSplatConstant(mlir::Value v);
/// A type as it is written in the IR ("bf16", "tensor<4xf32>"), unquoted
/// (diagnostics quote a streamed Type); also the program layer's dtype names.
std::string typeText(mlir::Type type);
/// The operands of an attention backward (tessera_graph.attention_grad,
/// tessera_schedule.flash_attention_grad): query [Sq, d], key_t [d, Skv],
/// value [Skv, dv], out and dout [Sq, dv], optionally with one leading
/// batch dim on all, f32, row-major; errors emitted on `op`.
mlir::LogicalResult verifyAttentionGradOperands(mlir::Operation *op, mlir::Value query, mlir::Value keyT,
                                                mlir::Value value, mlir::Value out, mlir::Value dout);
}  // namespace tessera::graph

#endif
