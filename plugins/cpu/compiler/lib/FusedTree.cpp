//===- FusedTree.cpp - a tile's elementwise tree, computed in registers ---===//
#include "FusedTree.h"

#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

using namespace mlir;
namespace g = tessera::graph;
using namespace tessera::elements;

namespace tessera::cpu {
namespace {

using g::isSplatConstant;
int64_t rankOf(Value v) { return v.getType().cast<ShapedType>().getRank(); }
Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }

struct Collector {
  function_ref<bool(Value)> isLeaf;
  FusedTree &tree;
  llvm::SetVector<Operation *> ops;

  void visit(Value v) {
    if (v == tree.root) return;
    Operation *def = v.getDefiningOp();
    if (g::isTileRoot(def) && !tree.root && !isLeaf(v)) {
      tree.root = v;
      return;
    }
    if (isLeaf(v) || !def) return;
    if (isSplatConstant(v)) {
      ops.insert(def);
      return;
    }
    if (!g::isElementwise(def)) return;  // read from memory
    ops.insert(def);
    for (Value o : def->getOperands()) visit(o);
  }
};

}  // namespace

FusedTree FusedTree::collect(Value output, function_ref<bool(Value)> isLeaf) {
  FusedTree tree;
  tree.output = output;
  Collector c{isLeaf, tree, {}};
  c.visit(output);
  tree.ops.assign(c.ops.begin(), c.ops.end());
  llvm::sort(tree.ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return tree;
}

SmallVector<Value> FusedTree::leaves() const {
  SmallVector<Value> out;
  for (Operation *op : ops) {
    if (isa<arith::ConstantOp>(op)) continue;
    for (Value v : op->getOperands())
      if (v != root && !contains(v.getDefiningOp()) && !llvm::is_contained(out, v)) out.push_back(v);
  }
  return out;
}

FailureOr<Value> emitFusedTree(OpBuilder &b, Location loc, const FusedTree &tree,
                               ArrayRef<Value> idx, int64_t w, Value rootValue,
                               const LeafLoader &load, const ElementOptions &elements, Value row0) {
  // A scalar read by a vector op is splat across the chunk.
  auto fit = [&](Value v) -> Value {
    if (w == 1 || v.getType().isa<VectorType>()) return v;
    return b.create<vector::BroadcastOp>(loc, VectorType::get({w}, v.getType()), v);
  };
  std::function<FailureOr<Value>(Value, ArrayRef<Value>)> emit =
      [&](Value v, ArrayRef<Value> at) -> FailureOr<Value> {
    Value r;
    Operation *def = v.getDefiningOp();
    if (v == tree.root) {
      r = rootValue;
    } else if (def && tree.contains(def)) {
      if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
        auto dense = cst.getValue().cast<DenseElementsAttr>();
        Type et = elemOf(v);
        // The attribute holds values of the element type: exact in f32 / i32.
        double x = et.isa<FloatType>() ? dense.getSplatValue<APFloat>().convertToDouble()
                                       : (double)dense.getSplatValue<APInt>().getSExtValue();
        return fit(splatConstant(b, loc, computeType(et), x));
      }
      SmallVector<Value> ins;
      for (Value o : def->getOperands()) {
        FailureOr<Value> x = emit(o, at.take_back(rankOf(o)));
        if (failed(x)) return failure();
        ins.push_back(fit(*x));
      }
      if (auto cast = dyn_cast<g::CastOp>(def); cast && cast.isStochastic()) {
        // Random bits keyed by each lane's row-major index in the cast's
        // own shape (the output's: fused ops have its shape): at[0..]
        // times the strides, dim 0 from the group's first row, plus the lane
        // along the last dim. An SPMD part's cast: the global tensor's
        // strides, plus the device's offset from its mesh position (ins[1],
        // splat across the lanes).
        SmallVector<Value> digits(at.begin(), at.end());
        if (row0 && !digits.empty()) digits[0] = b.create<arith::AddIOp>(loc, digits[0], row0);
        SmallVector<int64_t> strides = cast.indexStrides();
        Value position;
        if (cast.getPosition()) {
          position = ins[1];
          if (position.getType().isa<VectorType>())
            position = b.create<vector::ExtractOp>(loc, position, ArrayRef<int64_t>{0});
        }
        Value index = emitStochasticIndex(b, loc, digits, strides, position,
                                          cast.getMeshShape() ? *cast.getMeshShape() : ArrayRef<int64_t>{},
                                          cast.getMeshOffsets() ? *cast.getMeshOffsets() : ArrayRef<int64_t>{});
        if (w > 1) {
          auto vt = VectorType::get({w}, b.getI64Type());
          SmallVector<int64_t> lanes(w);
          const int64_t laneStride = strides.empty() ? 0 : strides.back();
          for (int64_t l = 0; l < w; ++l) lanes[l] = l * laneStride;
          index = b.create<arith::AddIOp>(loc, b.create<vector::BroadcastOp>(loc, vt, index),
                                          b.create<arith::ConstantOp>(loc, b.getI64VectorAttr(lanes)));
        }
        r = emitStochasticRound(b, loc, ins[0], elemOf(v), static_cast<uint64_t>(*cast.getSeed()), index);
      } else {
        FailureOr<Value> y = emitElementwise(b, loc, def, ins, elements);
        if (failed(y)) return failure();
        r = *y;
      }
    } else {
      // A leaf read through numpy broadcasting: index 0 along its dims of
      // size 1 (one scalar splat across the chunk when the last is 1).
      ArrayRef<int64_t> shape = v.getType().cast<ShapedType>().getShape();
      SmallVector<Value> idx(at.begin(), at.end());
      Value c0;
      for (auto [k, n] : llvm::enumerate(shape))
        if (n == 1) {
          if (!c0) c0 = b.create<arith::ConstantIndexOp>(loc, 0);
          idx[k] = c0;
        }
      bool scalar = shape.empty() || shape.back() == 1;
      return fit(load(v, idx, scalar ? 1 : w));
    }
    // Intermediates carry their type's rounding; the output is rounded by
    // the caller's store.
    return v == tree.output ? r : roundTo(b, loc, r, elemOf(v), elements);
  };
  return emit(tree.output, idx);
}

}  // namespace tessera::cpu
