//===- ShapeOps.cpp - where a Graph shape op reads each result element ----===//
#include "tessera/Conversion/ShapeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

SmallVector<Value> sourceIndex(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> out) {
  std::vector<Value> in = mapIndex<Value>(op, out, ValueOps{b, loc});
  return {in.begin(), in.end()};
}

std::vector<int64_t> sourceIndex(Operation *op, const std::vector<int64_t> &out) {
  return mapIndex<int64_t>(op, out, IntOps{});
}

}  // namespace tessera::shapes
