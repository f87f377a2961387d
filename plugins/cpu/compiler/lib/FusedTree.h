//===- FusedTree.h - a tile's elementwise tree, computed in registers -*- C++ -*-===//
//
// A tessera_schedule.tile computes its output from at most one root (a
// matmul, softmax or reduce that the caller computes into registers) and a
// tree of elementwise ops over it, other tensors (the leaves, read from
// memory) and splat constants: nothing in between is stored.  The callers
// (MatmulToCPU's epilogue, the softmax and reduce stores, the elementwise
// loops of RowOpsToCPU) evaluate the tree at one position of the output,
// a chunk of `w` elements along its last dim, with emitFusedTree.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_FUSEDTREE_H
#define TESSERA_LIB_TARGET_CPU_FUSEDTREE_H

#include <functional>

#include "mlir/IR/Builders.h"
#include "tessera/Conversion/ElementTypes.h"

namespace tessera::cpu {

struct FusedTree {
  mlir::Value output;
  /// The matmul / softmax / reduce result the tree consumes (null: none).
  mlir::Value root;
  /// Elementwise ops and splat constants of the tree, in program order;
  /// empty when `output` is `root` itself.
  llvm::SmallVector<mlir::Operation *> ops;

  /// The tree of `output`: elementwise ops and splat tensor constants
  /// reached from it through operands for which `isLeaf` is false; a
  /// matmul, softmax or reduce result met on the way is the root (at most
  /// one: a second is a leaf).
  static FusedTree collect(mlir::Value output, llvm::function_ref<bool(mlir::Value)> isLeaf);

  /// Values read from memory (operands of the tree's ops that are not
  /// computed in it), in first-use order.
  llvm::SmallVector<mlir::Value> leaves() const;
  bool contains(mlir::Operation *op) const { return llvm::is_contained(ops, op); }
};

/// Loads `w` elements of leaf `v` at its logical index `idx` (the trailing
/// dims of the output's index, 0 along the leaf's dims of size 1: numpy
/// broadcasting), widened to the compute type; a scalar for w == 1 (a
/// rank-0 leaf, or one whose last dim is 1).
using LeafLoader =
    std::function<mlir::Value(mlir::Value v, llvm::ArrayRef<mlir::Value> idx, int64_t w)>;

/// The tree's output at `idx` (the output's full logical index; the last
/// dim is a chunk of `w` elements), given the root's compute-type value
/// there (`rootValue`; null when there is no root).  Every value but the
/// output is rounded to its type, as the unfused program stores it; the
/// output is left in the compute type for the caller's store to round.
/// `row0` (may be null): the output row that dim 0 of `idx` counts from
/// (a group's rows), for what needs the element's index in the whole
/// tensor (a stochastic cast's random bits).
mlir::FailureOr<mlir::Value> emitFusedTree(mlir::OpBuilder &b, mlir::Location loc,
                                           const FusedTree &tree,
                                           llvm::ArrayRef<mlir::Value> idx, int64_t w,
                                           mlir::Value rootValue, const LeafLoader &load,
                                           const elements::ElementOptions &elements,
                                           mlir::Value row0 = mlir::Value());

}  // namespace tessera::cpu

#endif
