//===- LowerQuantization.cpp - quantize / dequantize as Graph ops ---------===//
//
// `quantize` and `dequantize` (docs/ir.md, "Numerics policies") become the
// elementwise Graph ops they are defined as, so that every backend runs them
// with the ops it already has, fused into the neighbouring kernels by the
// usual fusion, and the bits are the same everywhere:
//
//   quantize(x, s):   v = x / s;  q = cast<i8>(v >= 0 ? v + 0.5 : v - 0.5)
//   dequantize(q, s): y = cast<f32>(q) * s
//
// (`cast` to i8 truncates toward zero and saturates, NaN -> 0.) A
// per-channel scale along `axis` is reshaped to [C, 1, ..., 1] so that
// numpy broadcasting puts it on that dim.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera::graph {
#define GEN_PASS_DEF_LOWERQUANTIZATION
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera::graph;

namespace {

// The scale, shaped to broadcast against `like` (per tensor: as it is).
Value broadcastableScale(OpBuilder& b, Location loc, Value scale, std::optional<int64_t> axis,
                         RankedTensorType like) {
  if (!axis || *axis == like.getRank() - 1) return scale;
  SmallVector<int64_t> shape(static_cast<size_t>(like.getRank() - *axis), 1);
  shape[0] = like.getDimSize(*axis);
  return b.create<ReshapeOp>(loc, RankedTensorType::get(shape, b.getF32Type()), scale);
}

Value splat(OpBuilder& b, Location loc, float v) {
  auto t = RankedTensorType::get({1}, b.getF32Type());
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(t, b.getF32FloatAttr(v).cast<Attribute>()));
}

struct LowerQuantizationPass : tessera::graph::impl::LowerQuantizationBase<LowerQuantizationPass> {
  void runOnOperation() override {
    getOperation().walk([](QuantizeOp q) {
      OpBuilder b(q);
      Location loc = q.getLoc();
      auto in = q.getInput().getType().cast<RankedTensorType>();
      auto f32 = RankedTensorType::get(in.getShape(), b.getF32Type());
      auto i1 = RankedTensorType::get(in.getShape(), b.getI1Type());
      Value s = broadcastableScale(b, loc, q.getScale(), q.getAxis(), in);
      Value v = b.create<DivOp>(loc, f32, q.getInput(), s);
      Value nonneg = b.create<CompareOp>(loc, i1, ComparePredicate::ge, v, splat(b, loc, 0.0f));
      Value half = splat(b, loc, 0.5f);
      Value up = b.create<AddOp>(loc, f32, v, half);
      Value down = b.create<SubOp>(loc, f32, v, half);
      Value r = b.create<SelectOp>(loc, f32, nonneg, up, down);
      q.replaceAllUsesWith(b.create<CastOp>(loc, q.getResult().getType(), r).getResult());
      q.erase();
    });
    getOperation().walk([](DequantizeOp d) {
      OpBuilder b(d);
      Location loc = d.getLoc();
      auto in = d.getInput().getType().cast<RankedTensorType>();
      auto f32 = RankedTensorType::get(in.getShape(), b.getF32Type());
      Value s = broadcastableScale(b, loc, d.getScale(), d.getAxis(), in);
      Value f = b.create<CastOp>(loc, f32, d.getInput());
      d.replaceAllUsesWith(b.create<MulOp>(loc, f32, f, s).getResult());
      d.erase();
    });
  }
};

}  // namespace
