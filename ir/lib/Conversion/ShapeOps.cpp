//===- ShapeOps.cpp - where a Graph shape op reads each result element ----===//
#include "tessera/Conversion/ShapeOps.h"

#include <functional>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

using namespace mlir;
namespace g = tessera::graph;

namespace tessera::shapes {
namespace {

ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<ShapedType>().getShape(); }

/// The mapping written once over an "index algebra" (Value or int64_t).
template <typename I, typename Ops>
std::vector<I> mapIndex(Operation *op, ArrayRef<I> out, const Ops &x) {
  std::vector<I> in;
  if (auto t = dyn_cast<g::TransposeOp>(op)) {
    in.resize(out.size());
    for (auto [i, p] : llvm::enumerate(t.getPerm())) in[p] = out[i];
  } else if (auto r = dyn_cast<g::ReshapeOp>(op)) {
    in = x.delinearize(x.linearize(out, shapeOf(r.getResult())), shapeOf(r.getInput()));
  } else if (auto s = dyn_cast<g::SliceOp>(op)) {
    for (size_t d = 0; d < out.size(); ++d) in.push_back(x.addMul(s.getOffsets()[d], out[d], s.getStrides()[d]));
  } else if (auto bc = dyn_cast<g::BroadcastInDimOp>(op)) {
    ArrayRef<int64_t> inShape = shapeOf(bc.getInput());
    for (auto [k, d] : llvm::enumerate(bc.getDims())) in.push_back(inShape[k] == 1 ? x.constant(0) : out[d]);
  }
  return in;
}

struct ValueOps {
  OpBuilder &b;
  Location loc;
  Value constant(int64_t v) const { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value addMul(int64_t base, Value i, int64_t scale) const {
    Value v = scale == 1 ? i : b.create<arith::MulIOp>(loc, i, constant(scale)).getResult();
    return base ? b.create<arith::AddIOp>(loc, v, constant(base)).getResult() : v;
  }
  Value linearize(ArrayRef<Value> idx, ArrayRef<int64_t> shape) const { return shapes::linearize(b, loc, idx, shape); }
  std::vector<Value> delinearize(Value flat, ArrayRef<int64_t> shape) const {
    SmallVector<Value> v = shapes::delinearize(b, loc, flat, shape);
    return {v.begin(), v.end()};
  }
};

struct IntOps {
  int64_t constant(int64_t v) const { return v; }
  int64_t addMul(int64_t base, int64_t i, int64_t scale) const { return base + i * scale; }
  int64_t linearize(ArrayRef<int64_t> idx, ArrayRef<int64_t> shape) const {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  }
  std::vector<int64_t> delinearize(int64_t flat, ArrayRef<int64_t> shape) const {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
    return idx;
  }
};

}  // namespace

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat, ArrayRef<int64_t> shape) {
  SmallVector<Value> idx(shape.size());
  Value rest = flat;
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) { idx[d] = rest; break; }
    Value n = b.create<arith::ConstantIndexOp>(loc, shape[d]);
    idx[d] = b.create<arith::RemUIOp>(loc, rest, n);
    rest = b.create<arith::DivUIOp>(loc, rest, n);
  }
  return idx;
}

Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> idx, ArrayRef<int64_t> shape) {
  Value f = b.create<arith::ConstantIndexOp>(loc, 0);
  for (size_t d = 0; d < shape.size(); ++d)
    f = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, f, b.create<arith::ConstantIndexOp>(loc, shape[d])),
                                idx[d]);
  return f;
}

SmallVector<Value> gatherTableIndex(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> out, Value row) {
  auto g_ = cast<g::GatherOp>(op);
  int64_t rank = g_.getIndices().getType().cast<ShapedType>().getRank();
  int64_t rows = g_.getTable().getType().cast<ShapedType>().getDimSize(0);
  // Clamp in signed arithmetic: a negative i32 index is row 0.
  Value r = b.create<arith::IndexCastOp>(loc, b.getIndexType(), row);
  r = b.create<arith::MaxSIOp>(loc, r, b.create<arith::ConstantIndexOp>(loc, 0));
  r = b.create<arith::MinSIOp>(loc, r, b.create<arith::ConstantIndexOp>(loc, rows - 1));
  SmallVector<Value> idx{r};
  llvm::append_range(idx, out.drop_front(rank));
  return idx;
}

Value emitShapeValue(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> out, OperandLoader load,
                     function_ref<Value(OpBuilder &)> padValue, Type valueType) {
  auto c = [&](OpBuilder &ob, int64_t v) { return ob.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  if (auto cat = dyn_cast<g::ConcatOp>(op)) {
    // if (i < end_0) x0[i] else if (i < end_1) x1[i - end_0] else ...
    const int64_t dim = cat.getDim();
    std::function<Value(OpBuilder &, unsigned, int64_t)> pick = [&](OpBuilder &ob, unsigned k, int64_t start) -> Value {
      SmallVector<Value> idx(out.begin(), out.end());
      if (start) idx[dim] = ob.create<arith::SubIOp>(loc, out[dim], c(ob, start));
      int64_t end = start + shapeOf(cat.getInputs()[k])[dim];
      if (k + 1 == cat.getInputs().size()) return load(ob, k, idx);
      Value here = ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, out[dim], c(ob, end));
      auto ifOp = ob.create<scf::IfOp>(loc, TypeRange{valueType}, here, /*withElse=*/true);
      OpBuilder tb = ifOp.getThenBodyBuilder(), eb = ifOp.getElseBodyBuilder();
      tb.create<scf::YieldOp>(loc, load(tb, k, idx));
      eb.create<scf::YieldOp>(loc, pick(eb, k + 1, end));
      return ifOp.getResult(0);
    };
    return pick(b, 0, 0);
  }
  if (auto pad = dyn_cast<g::PadOp>(op)) {
    ArrayRef<int64_t> in = shapeOf(pad.getInput());
    Value inside;
    SmallVector<Value> idx;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t lo = pad.getLow()[d];
      // i - lo as unsigned: below the low padding it wraps above in[d].
      Value i = lo ? b.create<arith::SubIOp>(loc, out[d], c(b, lo)).getResult() : out[d];
      Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, i, c(b, in[d]));
      inside = inside ? b.create<arith::AndIOp>(loc, inside, ok).getResult() : ok;
      idx.push_back(i);
    }
    // A rank-0 pad has no padding: the element itself (there was no
    // condition, and an scf.if on none crashed every pipeline).
    if (!inside) return load(b, 0, idx);
    auto ifOp = b.create<scf::IfOp>(loc, TypeRange{valueType}, inside, /*withElse=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder(), eb = ifOp.getElseBodyBuilder();
    tb.create<scf::YieldOp>(loc, load(tb, 0, idx));
    eb.create<scf::YieldOp>(loc, padValue(eb));
    return ifOp.getResult(0);
  }
  return load(b, 0, sourceIndex(b, loc, op, out));
}

Value emitArgmax(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> out, OperandLoader load) {
  auto am = cast<g::ArgmaxOp>(op);
  const int64_t dim = am.getDim(), n = shapeOf(am.getInput())[dim];
  SmallVector<Value> idx(out.begin(), out.end());
  idx.insert(idx.begin() + dim, b.create<arith::ConstantIndexOp>(loc, 0));
  Value first = load(b, 0, idx);
  Value zero = b.create<arith::ConstantIntOp>(loc, 0, 32);
  auto loop = b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 1), b.create<arith::ConstantIndexOp>(loc, n),
                                   b.create<arith::ConstantIndexOp>(loc, 1), ValueRange{first, zero});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value j = loop.getInductionVar();
    idx[dim] = j;
    Value v = load(lb, 0, idx);
    Value best = loop.getRegionIterArgs()[0], at = loop.getRegionIterArgs()[1];
    Value greater = v.getType().isa<FloatType>()
                        ? lb.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, v, best).getResult()
                        : lb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, v, best).getResult();
    Value j32 = lb.create<arith::IndexCastOp>(loc, lb.getI32Type(), j);
    lb.create<scf::YieldOp>(loc, ValueRange{lb.create<arith::SelectOp>(loc, greater, v, best),
                                           lb.create<arith::SelectOp>(loc, greater, j32, at)});
  }
  return loop.getResult(1);
}

SmallVector<Value> sourceIndex(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> out) {
  std::vector<Value> in = mapIndex<Value>(op, out, ValueOps{b, loc});
  return {in.begin(), in.end()};
}

std::vector<int64_t> sourceIndex(Operation *op, const std::vector<int64_t> &out) {
  return mapIndex<int64_t>(op, out, IntOps{});
}

}  // namespace tessera::shapes
