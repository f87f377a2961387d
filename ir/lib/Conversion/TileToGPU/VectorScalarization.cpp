//===- VectorScalarization.cpp - vectors become their elements ------------===//
//
// GPU registers are scalars and SPIR-V vectors have at most 4 components:
// every 1-D vector and 2-D mma fragment in a kernel becomes its elements
// (row-major). See KernelPatterns.h for the packs that carry them through
// the conversion.
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tessera::gpu_lowering {

bool isScalarized(Type type) {
  auto v = type.dyn_cast<VectorType>();
  return v && (v.getRank() == 1 || v.getRank() == 2) && v.hasStaticShape();
}

Value packScalars(OpBuilder &b, Location l, Type type, ValueRange elems) {
  auto pack = b.create<UnrealizedConversionCastOp>(l, TypeRange{type}, elems);
  pack->setAttr(kScalarsAttr, b.getUnitAttr());
  return pack.getResult(0);
}

FailureOr<SmallVector<Value>> unpackScalars(OpBuilder &b, Value v, Operation *user) {
  if (auto pack = v.getDefiningOp<UnrealizedConversionCastOp>(); pack && pack->hasAttr(kScalarsAttr))
    return SmallVector<Value>(pack.getInputs().begin(), pack.getInputs().end());
  DenseElementsAttr d;
  if (matchPattern(v, m_Constant(&d))) {
    SmallVector<Value> r;
    for (Attribute a : d.getValues<Attribute>()) r.push_back(b.create<arith::ConstantOp>(v.getLoc(), a.cast<TypedAttr>()));
    return r;
  }
  user->emitOpError("has a vector operand the GPU lowering cannot scalarize (") << v.getType() << ")";
  return failure();
}

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }

namespace {

/// Row-major offset of a (leading-dims) position in a vector of `shape`, and
/// the number of elements the position selects.
std::pair<int64_t, int64_t> positionOf(ArrayRef<int64_t> shape, ArrayAttr pos) {
  int64_t off = 0, count = 1;
  for (int64_t d : shape) count *= d;
  for (auto [i, a] : llvm::enumerate(pos)) {
    count /= shape[i];
    off += a.cast<IntegerAttr>().getInt() * count;
  }
  return {off, count};
}

/// A dense vector constant: its elements as scalar constants.
struct VectorConstantPattern : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto d = op.getValue().dyn_cast<DenseElementsAttr>();
    if (!d) return op.emitOpError("is a vector constant that is not dense: the GPU lowering cannot scalarize it");
    SmallVector<Value> r;
    for (Attribute a : d.getValues<Attribute>()) r.push_back(rw.create<arith::ConstantOp>(op.getLoc(), a.cast<TypedAttr>()));
    rw.replaceOp(op, packScalars(rw, op.getLoc(), op.getType(), r));
    return success();
  }
};

struct InsertPattern : OpConversionPattern<vector::InsertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(vector::InsertOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto dt = op.getDestVectorType();
    auto d = unpackScalars(rw, a.getDest(), op);
    if (failed(d)) return failure();
    auto [off, count] = positionOf(dt.getShape(), op.getPosition());
    SmallVector<Value> r(d->begin(), d->end());
    if (isScalarized(op.getSourceType())) {
      auto src = unpackScalars(rw, a.getSource(), op);
      if (failed(src)) return failure();
      for (int64_t k = 0; k < count; ++k) r[off + k] = (*src)[k];
    } else {
      r[off] = a.getSource();
    }
    rw.replaceOp(op, packScalars(rw, op.getLoc(), dt, r));
    return success();
  }
};

struct ExtractPattern : OpConversionPattern<vector::ExtractOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(vector::ExtractOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto v = unpackScalars(rw, a.getVector(), op);
    if (failed(v)) return failure();
    auto [off, count] = positionOf(op.getVectorType().getShape(), op.getPosition());
    if (isScalarized(op.getType()))
      rw.replaceOp(op, packScalars(rw, op.getLoc(), op.getType(), SmallVector<Value>(v->begin() + off, v->begin() + off + count)));
    else
      rw.replaceOp(op, (*v)[off]);
    return success();
  }
};

struct BroadcastPattern : OpConversionPattern<vector::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(vector::BroadcastOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto vt = op.getType().cast<VectorType>();
    rw.replaceOp(op, packScalars(rw, op.getLoc(), vt, SmallVector<Value>(vt.getNumElements(), a.getSource())));
    return success();
  }
};

/// An elementwise op on vectors: the op once per element.
struct ElementwisePattern : ConversionPattern {
  ElementwisePattern(MLIRContext *ctx) : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands, ConversionPatternRewriter &rw) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 || !isScalarized(op->getResult(0).getType()))
      return failure();
    SmallVector<SmallVector<Value>> xs;
    for (Value x : operands) {
      if (!isScalarized(x.getType())) {
        xs.push_back({});
        continue;
      }
      auto e = unpackScalars(rw, x, op);
      if (failed(e)) return failure();
      xs.push_back(*e);
    }
    auto vt = op->getResult(0).getType().cast<VectorType>();
    SmallVector<Value> r;
    for (int64_t k = 0; k < vt.getNumElements(); ++k) {
      OperationState st(op->getLoc(), op->getName());
      for (auto [i, x] : llvm::enumerate(operands)) st.addOperands(xs[i].empty() ? x : xs[i][k]);
      st.addTypes(vt.getElementType());
      st.addAttributes(op->getAttrs());
      r.push_back(rw.create(st)->getResult(0));
    }
    rw.replaceOp(op, packScalars(rw, op->getLoc(), vt, r));
    return success();
  }
};

/// A loop carrying vectors (an mma accumulator) carries one scalar per
/// element; its body moves into the new loop as is, reading the vector
/// arguments' packs.
struct ForPattern : OpConversionPattern<scf::ForOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(scf::ForOp o, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    SmallVector<Value> inits;
    SmallVector<std::pair<int64_t, int64_t>> slots;  // (first, count) per old iter_arg; count 0: a scalar
    for (Value v : a.getInitArgs()) {
      if (!isScalarized(v.getType())) {
        slots.push_back({static_cast<int64_t>(inits.size()), 0});
        inits.push_back(v);
        continue;
      }
      auto e = unpackScalars(rw, v, o);
      if (failed(e)) return failure();
      slots.push_back({static_cast<int64_t>(inits.size()), static_cast<int64_t>(e->size())});
      inits.append(e->begin(), e->end());
    }
    auto nf = rw.create<scf::ForOp>(l, a.getLowerBound(), a.getUpperBound(), a.getStep(), inits);
    Block *nb = nf.getBody();
    if (!nb->empty()) rw.eraseOp(nb->getTerminator());
    // The old body's arguments: the induction variable, then per iter_arg
    // the new scalar or a pack of the new scalars.
    auto regroup = [&](ValueRange from, Type type, std::pair<int64_t, int64_t> slot) -> Value {
      auto [first, count] = slot;
      if (!count) return from[first];
      return packScalars(rw, l, type, from.slice(first, count));
    };
    rw.setInsertionPointToStart(nb);
    SmallVector<Value> args{nf.getInductionVar()};
    for (auto [i, arg] : llvm::enumerate(o.getRegionIterArgs()))
      args.push_back(regroup(ValueRange(nf.getRegionIterArgs()), arg.getType(), slots[i]));
    rw.mergeBlocks(o.getBody(), nb, args);
    rw.setInsertionPointAfter(nf);
    SmallVector<Value> results;
    for (auto [i, r] : llvm::enumerate(o.getResults())) results.push_back(regroup(nf.getResults(), r.getType(), slots[i]));
    rw.replaceOp(o, results);
    return success();
  }
};

/// The yield of such a loop: the elements.
struct YieldPattern : OpConversionPattern<scf::YieldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(scf::YieldOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    SmallVector<Value> outs;
    for (Value v : a.getOperands()) {
      if (!isScalarized(v.getType())) {
        outs.push_back(v);
        continue;
      }
      auto e = unpackScalars(rw, v, op);
      if (failed(e)) return failure();
      outs.append(e->begin(), e->end());
    }
    rw.replaceOpWithNewOp<scf::YieldOp>(op, outs);
    return success();
  }
};

bool carriesVectors(TypeRange types) { return llvm::any_of(types, isScalarized); }

}  // namespace

void populateVectorScalarizationPatterns(RewritePatternSet &patterns) {
  patterns.add<VectorConstantPattern, InsertPattern, ExtractPattern, BroadcastPattern, ElementwisePattern, ForPattern,
               YieldPattern>(patterns.getContext());
}

void addVectorScalarizationLegality(ConversionTarget &target) {
  target.addDynamicallyLegalOp<arith::ConstantOp>([](arith::ConstantOp c) { return !isScalarized(c.getType()); });
  target.addDynamicallyLegalOp<vector::InsertOp>([](vector::InsertOp o) { return !isScalarized(o.getDestVectorType()); });
  target.addDynamicallyLegalOp<vector::ExtractOp>([](vector::ExtractOp o) { return !isScalarized(o.getVectorType()); });
  target.addDynamicallyLegalOp<vector::BroadcastOp>([](vector::BroadcastOp o) { return !isScalarized(o.getType()); });
  target.addDynamicallyLegalOp<scf::ForOp>([](scf::ForOp o) { return !carriesVectors(o.getInitArgs().getTypes()); });
  target.addDynamicallyLegalOp<scf::YieldOp>([](scf::YieldOp o) {
    return !isa<scf::ForOp>(o->getParentOp()) || !carriesVectors(o.getOperandTypes());
  });
  target.markUnknownOpDynamicallyLegal([](Operation *op) {
    return !(op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 && isScalarized(op->getResult(0).getType()));
  });
}

LogicalResult checkVectorOps(func::FuncOp f) {
  WalkResult r = f.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if ((isa<vector::InsertOp>(op) && !isScalarized(cast<vector::InsertOp>(op).getDestVectorType())) ||
        (isa<vector::ExtractOp>(op) && !isScalarized(cast<vector::ExtractOp>(op).getVectorType()))) {
      op->emitOpError("only 1-D / 2-D vectors lower to SPIR-V");
      return WalkResult::interrupt();
    }
    if (auto o = dyn_cast<vector::BroadcastOp>(op);
        o && (!isScalarized(o.getType()) || o.getSource().getType().isa<VectorType>())) {
      op->emitOpError("only scalar -> 1-D vector broadcasts lower to SPIR-V");
      return WalkResult::interrupt();
    }
    if (auto y = dyn_cast<scf::YieldOp>(op);
        y && carriesVectors(y.getOperandTypes()) && !isa<scf::ForOp>(y->getParentOp())) {
      op->emitOpError("yields a vector from an op other than scf.for, which the GPU lowering cannot scalarize");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

LogicalResult finishScalarization(func::FuncOp f) {
  SmallVector<UnrealizedConversionCastOp> packs;
  f.walk([&](UnrealizedConversionCastOp c) {
    if (c->hasAttr(kScalarsAttr)) packs.push_back(c);
  });
  for (UnrealizedConversionCastOp pack : packs)
    if (!pack->use_empty())
      return (*pack->getUsers().begin())->emitOpError("takes a ")
             << pack.getType(0) << " that the GPU lowering cannot scalarize: only Tile IR ops, vector "
             << "insert / extract / broadcast, elementwise ops and scf.for read vectors there";
  for (UnrealizedConversionCastOp pack : llvm::reverse(packs)) pack->erase();
  return success();
}

}  // namespace tessera::gpu_lowering
