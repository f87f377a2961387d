//===- ExpandVectorExp.cpp - math.exp on f32 -> one polynomial ------------===//
//
// LLVM lowers llvm.exp.v8f32 to eight calls of expf (there is no vector libm
// without -fveclib), which would dominate the online softmax.  This pass
// replaces math.exp on f32 VECTORS by Cephes' expf in vector ops (range
// reduction x = n ln2 + r, a degree-5 polynomial for e^r, 2^n built in the
// exponent bits, as two factors so that 2^128 and 2^-127 are reachable);
// relative error about 2 ulp.  Inputs at or below -88.37 (and -inf) give 0,
// as the online softmax needs for exp(-inf - m); inputs above
// ln(FLT_MAX) = 88.72 (and +inf) give inf, the ones just below it the
// largest floats (a clamp at 88.37 once made exp(inf) 2.4e38); NaN stays
// NaN.  Scalar f32 math.exp gets the same
// polynomial (as a 1-lane vector), so that every exp of a kernel is one
// function: fusion or a remainder loop never changes a result bit.
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

namespace tessera::cpu {
#define GEN_PASS_DEF_EXPANDVECTOREXP
#include "tessera/cpu/Passes.h.inc"
}  // namespace tessera::cpu

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace {

Value expandExp(OpBuilder &b, Location loc, Value x, VectorType vt) {
  auto it = VectorType::get(vt.getShape(), b.getI32Type());
  auto cf = [&](double v) -> Value {
    return b.create<arith::ConstantOp>(loc, vt, SplatElementsAttr::get(vt, b.getF32FloatAttr(v)));
  };
  auto ci = [&](int32_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, it, SplatElementsAttr::get(it, b.getI32IntegerAttr(v)));
  };
  auto fma = [&](Value a, Value m, Value c) -> Value { return b.create<math::FmaOp>(loc, a, m, c); };
  // hi: the f32 just above ln(FLT_MAX) = 88.7228390: at it the polynomial
  // overflows to inf already, the correctly rounded result.
  const double lo = -88.3762626647949, hi = 88.72283935546875;
  Value xc = b.create<arith::MaxFOp>(loc, b.create<arith::MinFOp>(loc, x, cf(hi)), cf(lo));
  // n = floor(x / ln2 + 1/2), r = x - n ln2 (ln2 split in two for accuracy).
  Value n = b.create<math::FloorOp>(loc, fma(xc, cf(1.44269504088896341), cf(0.5)));
  Value r = fma(n, cf(-0.693359375), xc);
  r = fma(n, cf(2.12194440e-4), r);
  Value y = cf(1.9875691500e-4);
  for (double p : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
    y = fma(y, r, cf(p));
  y = fma(y, b.create<arith::MulFOp>(loc, r, r), r);
  y = b.create<arith::AddFOp>(loc, y, cf(1.0));
  // 2^n = 2^(n/2) * 2^(n - n/2) from the exponent bits: n reaches 128 near
  // the top (one factor 2^128 would be the bits of inf) and -127 at the
  // bottom (exponent field 0); halves keep both factors normal.
  Value ni = b.create<arith::FPToSIOp>(loc, it, n);
  Value n1 = b.create<arith::ShRSIOp>(loc, ni, ci(1));
  Value n2 = b.create<arith::SubIOp>(loc, ni, n1);
  auto pow2 = [&](Value k) -> Value {
    return b.create<arith::BitcastOp>(
        loc, vt, b.create<arith::ShLIOp>(loc, b.create<arith::AddIOp>(loc, k, ci(127)), ci(23)));
  };
  Value p1 = pow2(n1);  // in this order: the IR does not depend on the compiler's
  Value p2 = pow2(n2);  // order of evaluating arguments
  y = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, y, p1), p2);
  // At or below the low clamp the result is 0 (exp(-inf) = 0 exactly);
  // above ln(FLT_MAX) it is inf; NaN stays NaN (the clamp's min/max may
  // drop it).
  Value under = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, x, cf(lo));
  y = b.create<arith::SelectOp>(loc, under, cf(0.0), y);
  Value over = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, cf(hi));
  y = b.create<arith::SelectOp>(loc, over, cf(std::numeric_limits<float>::infinity()), y);
  Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
  return b.create<arith::SelectOp>(loc, nan, x, y);
}

struct ExpandVectorExpPass
    : tessera::cpu::impl::ExpandVectorExpBase<ExpandVectorExpPass> {
  void runOnOperation() override {
    // Vectors and scalars alike: one function of x, so a value does not
    // depend on whether it was computed in a vector lane, in a remainder
    // loop or fused into another op's loop (libm's expf differs from the
    // polynomial in the last bit).
    SmallVector<math::ExpOp> exps;
    getOperation().walk([&](math::ExpOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32()) exps.push_back(op);
    });
    for (math::ExpOp op : exps) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value r;
      if (auto vt = op.getType().dyn_cast<VectorType>()) {
        r = expandExp(b, loc, op.getOperand(), vt);
      } else {
        auto v1 = VectorType::get({1}, b.getF32Type());
        Value x = b.create<vector::BroadcastOp>(loc, v1, op.getOperand());
        r = b.create<vector::ExtractOp>(loc, expandExp(b, loc, x, v1), ArrayRef<int64_t>{0});
      }
      op.replaceAllUsesWith(r);
      op.erase();
    }
  }
};

}  // namespace
