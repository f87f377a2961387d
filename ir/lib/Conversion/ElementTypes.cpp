//===- ElementTypes.cpp - storage <-> compute conversions of Graph IR types ===//
//
// Conversions in integer arithmetic on the bits (see ElementTypes.h for
// why), written without branches so that they work lane-wise on vectors
// (LLVM: vpsrlvd / vpsllvd / vpminud / vblendvps on AVX2).
//
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/ElementTypes.h"

#include <cmath>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

using namespace mlir;

namespace tessera::elements {
namespace {

/// A binary float format with a sign, `exp` exponent bits and `man`
/// mantissa bits.  `ieee`: the all-ones exponent holds inf/NaN (f16);
/// else only the all-ones pattern is NaN and there is no inf (e4m3fn).
struct FloatFormat {
  int exp, man, bias;
  bool ieee;
};
constexpr FloatFormat kF16{5, 10, 15, true};
constexpr FloatFormat kE4M3FN{4, 3, 7, false};
constexpr FloatFormat kE5M2{5, 2, 15, true};  // the top byte of an f16

/// Builds integer/float ops on values shaped like `shape` (scalar or vector).
struct Bits {
  OpBuilder &b;
  Location loc;
  Type i32, f32;

  Bits(OpBuilder &b, Location loc, Type shape)
      : b(b), loc(loc), i32(withElement(shape, b.getI32Type())),
        f32(withElement(shape, b.getF32Type())) {}

  Value c(int64_t v) {  // an i32 constant (bit pattern, wraps)
    auto e = b.getI32Type();
    Attribute a = IntegerAttr::get(e, APInt(32, static_cast<uint64_t>(v), /*isSigned=*/v < 0));
    if (auto vt = i32.dyn_cast<VectorType>())
      return b.create<arith::ConstantOp>(loc, vt, SplatElementsAttr::get(vt, a));
    return b.create<arith::ConstantOp>(loc, e, a);
  }
  Value cf(double v) { return splatConstant(b, loc, f32, v); }
  Value shl(Value x, Value s) { return b.create<arith::ShLIOp>(loc, x, s); }
  Value shl(Value x, int64_t s) { return shl(x, c(s)); }
  Value shr(Value x, Value s) { return b.create<arith::ShRUIOp>(loc, x, s); }
  Value shr(Value x, int64_t s) { return shr(x, c(s)); }
  Value band(Value x, int64_t m) { return b.create<arith::AndIOp>(loc, x, c(m)); }
  Value bor(Value x, Value y) { return b.create<arith::OrIOp>(loc, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value add(Value x, int64_t y) { return add(x, c(y)); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value minu(Value x, int64_t y) { return b.create<arith::MinUIOp>(loc, x, c(y)); }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t y) { return b.create<arith::CmpIOp>(loc, p, x, c(y)); }
  Value sel(Value cond, Value x, Value y) { return b.create<arith::SelectOp>(loc, cond, x, y); }
  Value sel(Value cond, int64_t x, Value y) { return sel(cond, c(x), y); }
  Value toBits(Value f) { return b.create<arith::BitcastOp>(loc, i32, f); }
  Value toFloat(Value i) { return b.create<arith::BitcastOp>(loc, f32, i); }
};

/// Bits of format `f` (zero-extended to i32) -> the f32 with that value.
Value widenFormat(OpBuilder &b, Location loc, Value h, FloatFormat f) {
  Bits x(b, loc, h.getType());
  int total = f.exp + f.man;
  Value sign = x.shl(x.shr(h, total), 31);
  Value e = x.band(x.shr(h, f.man), (1 << f.exp) - 1);
  Value m = x.band(h, (1 << f.man) - 1);
  // Normal: rebias the exponent, left-align the mantissa.
  Value normal = x.bor(sign, x.bor(x.shl(x.add(e, 127 - f.bias), 23), x.shl(m, 23 - f.man)));
  // Subnormal: m * 2^(1 - bias - man), exact in f32 (no f32 subnormal is
  // involved, so it does not depend on the DAZ/FTZ mode).
  Value subF = b.create<arith::MulFOp>(loc, b.create<arith::SIToFPOp>(loc, x.f32, m),
                                       x.cf(std::ldexp(1.0, 1 - f.bias - f.man)));
  Value sub = x.bor(x.toBits(subF), sign);
  Value special, isSpecial;
  if (f.ieee) {  // inf (m == 0) or NaN with its payload
    special = x.bor(sign, x.bor(x.c(0x7F800000), x.shl(m, 23 - f.man)));
    isSpecial = x.cmp(arith::CmpIPredicate::eq, e, (1 << f.exp) - 1);
  } else {  // only all ones is NaN
    special = x.bor(sign, x.c(0x7FC00000));
    isSpecial = x.cmp(arith::CmpIPredicate::eq, x.band(h, (1 << total) - 1), (1 << total) - 1);
  }
  Value isSub = x.cmp(arith::CmpIPredicate::eq, e, 0);
  return x.toFloat(x.sel(isSub, sub, x.sel(isSpecial, special, normal)));
}

/// f32 -> bits of format `f` (in the low bits of an i32), round to nearest
/// even; overflow: inf (ieee) or the largest finite value (saturation).
Value narrowFormat(OpBuilder &b, Location loc, Value v, FloatFormat f) {
  Bits x(b, loc, v.getType());
  using P = arith::CmpIPredicate;
  int total = f.exp + f.man;
  Value u = x.toBits(v);
  Value sign = x.shl(x.shr(u, 31), total);
  Value a = x.band(u, 0x7FFFFFFF);
  Value isNaN = x.cmp(P::ugt, a, 0x7F800000);
  Value e = x.shr(a, 23);
  // Normal results: drop 23 - man mantissa bits with round to nearest even
  // (add half - 1 plus the kept lsb; a carry moves into the exponent), then
  // rebias.  Large values give codes past the largest, clamped below.
  int shift = 23 - f.man;
  Value lsb = x.band(x.shr(a, shift), 1);
  Value rn = x.shr(x.add(x.add(a, (1 << (shift - 1)) - 1), lsb), shift);
  Value normal = x.sub(rn, x.c(static_cast<int64_t>(127 - f.bias) << f.man));
  // Subnormal results (e < 128 - bias): the 24-bit significand shifted
  // right by 151 - bias - man - e with the same rounding; the shift is
  // clamped to 31 (larger shifts give 0 anyway; LLVM shifts >= 32 are poison).
  Value mant = x.bor(x.band(a, 0x7FFFFF),
                     x.sel(x.cmp(P::ne, e, 0), x.c(0x800000), x.c(0)));
  Value eEff = b.create<arith::MaxUIOp>(loc, e, x.c(1));
  Value sh = x.minu(x.sub(x.c(151 - f.bias - f.man), eEff), 31);
  Value halfMinus1 = x.sub(x.shr(x.shl(x.c(1), sh), 1), x.c(1));
  Value sub = x.shr(x.add(x.add(mant, halfMinus1), x.band(x.shr(mant, sh), 1)), sh);
  Value out = x.sel(x.cmp(P::ult, e, 128 - f.bias), sub, normal);
  int64_t largest = f.ieee ? ((1 << f.exp) - 1) << f.man   // inf
                           : (1 << total) - 2;              // e4m3fn: 448
  out = x.minu(out, largest);
  int64_t nan = f.ieee ? (((1 << f.exp) - 1) << f.man) | (1 << (f.man - 1)) : (1 << total) - 1;
  return x.bor(x.sel(isNaN, nan, out), sign);
}

Value bitcastTo(OpBuilder &b, Location loc, Value v, Type elem) {
  return b.create<arith::BitcastOp>(loc, withElement(v.getType(), elem), v);
}

}  // namespace

Type storageType(Type elem, const ElementOptions &o) {
  // i1 is one byte holding 0 or 1 (LLVM's memref of i1 would be a byte per
  // element too, but SPIR-V has no storable bool and the host reads bytes).
  if (elem.isFloat8E4M3FN() || elem.isFloat8E5M2() || elem.isInteger(1)) return IntegerType::get(elem.getContext(), 8);
  if (elem.isBF16() && o.bf16AsI16) return IntegerType::get(elem.getContext(), 16);
  return elem;
}

Type computeType(Type elem) {
  if (elem.isa<FloatType>()) return Float32Type::get(elem.getContext());
  if (elem.isInteger(1)) return elem;
  return IntegerType::get(elem.getContext(), 32);
}

Type withElement(Type like, Type elem) {
  if (auto vt = like.dyn_cast<VectorType>()) return VectorType::get(vt.getShape(), elem);
  return elem;
}

Value splatConstant(OpBuilder &b, Location loc, Type type, double value) {
  Type e = getElementTypeOrSelf(type);
  Attribute a = e.isa<FloatType>() ? Attribute(b.getFloatAttr(e, value))
                : e.isInteger(1)   ? Attribute(b.getIntegerAttr(e, value != 0 ? 1 : 0))
                                   : Attribute(b.getIntegerAttr(e, static_cast<int64_t>(value)));
  if (auto vt = type.dyn_cast<VectorType>())
    return b.create<arith::ConstantOp>(loc, vt, SplatElementsAttr::get(vt, a));
  return b.create<arith::ConstantOp>(loc, e, a);
}

/// An i1 compute value -> 1 or 0 of `type` (scalar or vector): a select of
/// two constants, which every backend lowers (SPIR-V converts no bool).
static Value fromBool(OpBuilder &b, Location loc, Value c, Type type) {
  return b.create<arith::SelectOp>(loc, c, splatConstant(b, loc, type, 1), splatConstant(b, loc, type, 0));
}

Value widen(OpBuilder &b, Location loc, Value v, Type elem, const ElementOptions &o) {
  Type i32 = withElement(v.getType(), b.getI32Type());
  if (elem.isF32() || elem.isInteger(32)) return v;
  // A stored i1 byte is true when it is not 0 (the code generators store
  // only 0 and 1; a host byte of 2 still reads as true).
  if (elem.isInteger(1))
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, splatConstant(b, loc, v.getType(), 0));
  if (elem.isInteger(8)) return b.create<arith::ExtSIOp>(loc, i32, v);
  if (elem.isF16() && o.hardwareF16)
    return b.create<arith::ExtFOp>(loc, withElement(v.getType(), b.getF32Type()), v);
  if (elem.isBF16()) {  // the high half of an f32
    Value bits = o.bf16AsI16 ? v : bitcastTo(b, loc, v, b.getI16Type());
    Value h = b.create<arith::ExtUIOp>(loc, i32, bits);
    Bits x(b, loc, v.getType());
    return x.toFloat(x.shl(h, 16));
  }
  if (elem.isF16())
    return widenFormat(b, loc, b.create<arith::ExtUIOp>(loc, i32, bitcastTo(b, loc, v, b.getI16Type())), kF16);
  if (elem.isFloat8E4M3FN())  // stored as i8
    return widenFormat(b, loc, b.create<arith::ExtUIOp>(loc, i32, v), kE4M3FN);
  if (elem.isFloat8E5M2())
    return widenFormat(b, loc, b.create<arith::ExtUIOp>(loc, i32, v), kE5M2);
  llvm_unreachable("not a Graph IR element type");
}

Value roundToBF16Bits(OpBuilder &b, Location loc, Value v) {
  // Round to nearest even on the high half; NaN stays NaN (quieted).
  Bits x(b, loc, v.getType());
  Value u = x.toBits(v);
  Value isNaN = x.cmp(arith::CmpIPredicate::ugt, x.band(u, 0x7FFFFFFF), 0x7F800000);
  Value r = x.shr(x.add(x.add(u, 0x7FFF), x.band(x.shr(u, 16), 1)), 16);
  Value nan = x.bor(x.shr(u, 16), x.c(0x40));
  return b.create<arith::TruncIOp>(loc, withElement(v.getType(), b.getI16Type()), x.sel(isNaN, nan, r));
}

Value narrow(OpBuilder &b, Location loc, Value v, Type elem, const ElementOptions &o) {
  if (elem.isF32() || elem.isInteger(32)) return v;
  if (elem.isInteger(1)) return fromBool(b, loc, v, withElement(v.getType(), b.getI8Type()));
  Type i16 = withElement(v.getType(), b.getI16Type());
  if (elem.isInteger(8)) return b.create<arith::TruncIOp>(loc, withElement(v.getType(), elem), v);
  if (elem.isF16() && o.hardwareF16)  // vcvtps2ph: rounding per MXCSR, nearest even
    return b.create<arith::TruncFOp>(loc, withElement(v.getType(), elem), v);
  if (elem.isBF16()) {
    Value bits = roundToBF16Bits(b, loc, v);
    return o.bf16AsI16 ? bits : bitcastTo(b, loc, bits, elem);
  }
  if (elem.isF16())
    return bitcastTo(b, loc, b.create<arith::TruncIOp>(loc, i16, narrowFormat(b, loc, v, kF16)), elem);
  if (elem.isFloat8E4M3FN() || elem.isFloat8E5M2())
    return b.create<arith::TruncIOp>(loc, withElement(v.getType(), b.getI8Type()),
                                     narrowFormat(b, loc, v, elem.isFloat8E5M2() ? kE5M2 : kE4M3FN));
  llvm_unreachable("not a Graph IR element type");
}

Value roundTo(OpBuilder &b, Location loc, Value v, Type elem, const ElementOptions &o) {
  if (elem.isF32() || elem.isInteger(32) || elem.isInteger(1)) return v;
  return widen(b, loc, narrow(b, loc, v, elem, o), elem, o);
}

Value castCompute(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  bool fromFloat = from.isa<FloatType>(), toFloat = to.isa<FloatType>();
  if (from.isInteger(1) && to.isInteger(1)) return v;
  if (from.isInteger(1))  // 0 or 1 in the compute type of `to`
    return fromBool(b, loc, v, withElement(v.getType(), computeType(to)));
  if (to.isInteger(1)) {  // x != 0: NaN is true, -0 false (numpy's astype(bool))
    if (fromFloat)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v, splatConstant(b, loc, v.getType(), 0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, splatConstant(b, loc, v.getType(), 0));
  }
  if (fromFloat == toFloat) return v;
  if (!fromFloat)
    return b.create<arith::SIToFPOp>(loc, withElement(v.getType(), b.getF32Type()), v);
  // float -> int: toward zero, saturating, NaN -> 0; never LLVM poison
  // (the clamped value converts exactly; the selects pick a defined value).
  Bits x(b, loc, v.getType());
  unsigned w = to.getIntOrFloatBitWidth();
  double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1) - 1;
  // The largest f32 not above hi: 127 for i8, 2^31 - 128 for i32.
  double hiF = w <= 24 ? hi : std::ldexp(1.0, w - 1) - std::ldexp(1.0, w - 1 - 24);
  Value clamped = b.create<arith::MinFOp>(loc, b.create<arith::MaxFOp>(loc, v, x.cf(lo)), x.cf(hiF));
  Value r = b.create<arith::FPToSIOp>(loc, x.i32, clamped);
  if (hiF != hi) {
    Value big = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, v, x.cf(std::ldexp(1.0, w - 1)));
    r = x.sel(big, static_cast<int64_t>(hi), r);
  }
  Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, v, v);
  return x.sel(nan, 0, r);
}

Value emitSigmoid(OpBuilder &b, Location loc, Value x) {
  // 1 / (1 + e^-x): e^-x overflows to +inf for x < -88 and the quotient is
  // then 0, the correctly rounded result; no NaN on either side.
  auto c = [&](double v) { return splatConstant(b, loc, x.getType(), v); };
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  return b.create<arith::DivFOp>(loc, c(1), b.create<arith::AddFOp>(loc, c(1), e));
}

Value emitTanh(OpBuilder &b, Location loc, Value x) {
  // tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)): one exp, which every
  // backend has, instead of math.tanh (a libm call per lane on the cpu,
  // absent from some SPIR-V environments); exact limits at +-inf (e^inf =
  // inf gives 1), about 2 ulp from |x| = 0.35 up. Below that the
  // subtraction cancels, so small |x| uses the odd Taylor polynomial to
  // x^11 (the first term left out is below 1.3e-8 relative there).
  auto c = [&](double v) { return splatConstant(b, loc, x.getType(), v); };
  Value ax = b.create<math::AbsFOp>(loc, x);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::MulFOp>(loc, ax, c(2)));
  Value big = b.create<arith::SubFOp>(loc, c(1), b.create<arith::DivFOp>(loc, c(2), b.create<arith::AddFOp>(loc, e, c(1))));
  // sign(x) by a select: math.copysign has no ROCDL lowering in MLIR 16.
  Value negative = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(0));
  big = b.create<arith::SelectOp>(loc, negative, b.create<arith::NegFOp>(loc, big), big);
  Value x2 = b.create<arith::MulFOp>(loc, x, x);
  Value p = c(-1382.0 / 155925.0);
  for (double k : {62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0})
    p = b.create<math::FmaOp>(loc, p, x2, c(k));
  Value small = b.create<arith::MulFOp>(loc, x, p);
  Value isSmall = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, ax, c(0.35));
  return b.create<arith::SelectOp>(loc, isSmall, small, big);
}

Value emitErf(OpBuilder &b, Location loc, Value x) {
  // A rational minimax approximation on [-4, 4] (the one XLA and Eigen
  // use for f32): erf(x) = x P(x^2) / Q(x^2), P of degree 6 and Q of
  // degree 4 in x^2, a few ulp; |x| >= 4 rounds to +-1 in f32 (clamped).
  // NaN is passed through at the end: the clamp's arith.minf / maxf lower
  // to maxnum on the cpu (LLVM 16) and to an undefined result in SPIR-V, so
  // erf(NaN) came out 1.
  auto c = [&](double v) { return splatConstant(b, loc, x.getType(), v); };
  Value xc = b.create<arith::MaxFOp>(loc, b.create<arith::MinFOp>(loc, x, c(4)), c(-4));
  Value x2 = b.create<arith::MulFOp>(loc, xc, xc);
  auto horner = [&](std::initializer_list<double> coeffs) {  // highest degree first
    Value p;
    for (double k : coeffs) p = p ? b.create<math::FmaOp>(loc, p, x2, c(k)).getResult() : c(k);
    return p;
  };
  Value num = horner({-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                      -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                      -1.60960333262415e-02});
  Value den = horner({-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                      -7.37332916720468e-03, -1.42647390514189e-02});
  Value r = b.create<arith::DivFOp>(loc, b.create<arith::MulFOp>(loc, xc, num), den);
  Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
  return b.create<arith::SelectOp>(loc, nan, x, r);
}

// max / min of floats with NaN propagated from either side (numpy's
// maximum / minimum, IEEE 754-2019 maximum): arith.maxf / minf lower to
// LLVM's maxnum on the cpu and to PTX max.f32, which return the other
// operand, and SPIR-V's FMax / FMin leave a NaN operand undefined.
static Value emitMaxMinF(OpBuilder &b, Location loc, Value x, Value y, bool isMax) {
  Value m = isMax ? b.create<arith::MaxFOp>(loc, x, y).getResult() : b.create<arith::MinFOp>(loc, x, y).getResult();
  Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, y);
  return b.create<arith::SelectOp>(loc, nan, b.create<arith::AddFOp>(loc, x, y), m);
}

namespace {

/// An integer constant of `bits` width shaped like `like` (scalar / vector).
Value intConst(OpBuilder &b, Location loc, Type like, unsigned bits, uint64_t v) {
  Type e = b.getIntegerType(bits);
  Type t = withElement(like, e);
  APInt value(bits, v);
  if (auto vt = t.dyn_cast<VectorType>())
    return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vt, value));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(e, value));
}

}  // namespace

Value emitStochasticIndex(OpBuilder &b, Location loc, ValueRange idx, ArrayRef<int64_t> strides, Value position,
                          ArrayRef<int64_t> meshShape, ArrayRef<int64_t> meshOffsets) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64).getResult(); };
  Value sum = c64(0);
  for (auto [i, s] : llvm::zip(idx, strides)) {
    if (s == 0) continue;
    Value v = b.create<arith::IndexCastOp>(loc, i64, i);
    sum = b.create<arith::AddIOp>(loc, sum, s == 1 ? v : b.create<arith::MulIOp>(loc, v, c64(s)).getResult());
  }
  if (!position) return sum;
  // Digits of the position, the last axis fastest (meshCoords).
  Value rest = b.create<arith::ExtUIOp>(loc, i64, position);
  for (size_t a = meshShape.size(); a-- > 0;) {
    Value digit = b.create<arith::RemUIOp>(loc, rest, c64(meshShape[a]));
    rest = b.create<arith::DivUIOp>(loc, rest, c64(meshShape[a]));
    if (meshOffsets[a] != 0)
      sum = b.create<arith::AddIOp>(loc, sum, b.create<arith::MulIOp>(loc, digit, c64(meshOffsets[a])));
  }
  return sum;
}

Value emitStochasticRound(OpBuilder &b, Location loc, Value x, Type to, uint64_t seed, Value index) {
  Type like = x.getType();
  Type i32 = withElement(like, b.getI32Type()), i64 = withElement(like, b.getI64Type());
  auto u32 = [&](uint64_t v) { return intConst(b, loc, like, 32, v); };
  auto u64 = [&](uint64_t v) { return intConst(b, loc, like, 64, v); };
  auto xorI = [&](Value a, Value c) { return b.create<arith::XOrIOp>(loc, a, c).getResult(); };
  auto andI = [&](Value a, Value c) { return b.create<arith::AndIOp>(loc, a, c).getResult(); };
  // Philox-4x32-10: counter (index lo, index hi, 0, 0), key (seed lo, hi);
  // the keys of each round are constants.
  Value c0 = b.create<arith::TruncIOp>(loc, i32, index);
  Value c1 = b.create<arith::TruncIOp>(loc, i32, b.create<arith::ShRUIOp>(loc, index, u64(32)));
  Value c2 = u32(0), c3 = u32(0);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  auto mulhilo = [&](uint32_t m, Value v, Value *hi, Value *lo) {
    Value p = b.create<arith::MulIOp>(loc, b.create<arith::ExtUIOp>(loc, i64, v), u64(m));
    *lo = b.create<arith::TruncIOp>(loc, i32, p);
    *hi = b.create<arith::TruncIOp>(loc, i32, b.create<arith::ShRUIOp>(loc, p, u64(32)));
  };
  for (int r = 0; r < 10; ++r) {
    Value hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, c0, &hi0, &lo0);
    mulhilo(0xCD9E8D57u, c2, &hi1, &lo1);
    Value n0 = xorI(xorI(hi1, c1), u32(k0)), n2 = xorI(xorI(hi0, c3), u32(k1));
    c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  Value random = c0;

  // The neighbours: `m` mantissa bits, smallest normal exponent `emin`.
  const int m = to.isBF16() ? 7 : to.isF16() ? 10 : to.isFloat8E5M2() ? 2 : 3;
  const int emin = to.isBF16() ? -126 : (to.isF16() || to.isFloat8E5M2()) ? -14 : -6;
  Value bits = b.create<arith::BitcastOp>(loc, i32, x);
  Value sign = andI(bits, u32(0x80000000u)), mag = andI(bits, u32(0x7FFFFFFFu));
  Value expField = b.create<arith::ShRUIOp>(loc, mag, u32(23));
  Value e1 = b.create<arith::MaxUIOp>(loc, expField, u32(1));  // subnormals: as exponent 1
  // Dropped bits: 23 - m, plus the shift into the target's subnormals.
  Value extra = b.create<arith::MaxSIOp>(loc, b.create<arith::SubIOp>(loc, u32(emin + 127), e1), u32(0));
  Value drop = b.create<arith::MinUIOp>(loc, b.create<arith::AddIOp>(loc, extra, u32(23 - m)), u32(31));
  Value mask = b.create<arith::SubIOp>(loc, b.create<arith::ShLIOp>(loc, u32(1), drop), u32(1));
  Value up = b.create<arith::AddIOp>(loc, mag, andI(random, mask));
  Value kept = andI(up, xorI(mask, u32(0xFFFFFFFFu)));
  Value y = b.create<arith::BitcastOp>(loc, like, b.create<arith::OrIOp>(loc, sign, kept));
  Value special = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, expField, u32(255));
  Value result = b.create<arith::SelectOp>(loc, special, x, y);
  const int tinyBelow = emin - m + 127;  // biased exponent under the smallest subnormal
  if (tinyBelow > 1) {
    // Below the smallest subnormal s: s with probability |x| / s (24
    // random bits; |x| * 2^(m - emin) is exact), else 0; f32 subnormal
    // inputs give 0.
    Value tiny = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, expField, u32(tinyBelow));
    Value u = b.create<arith::MulFOp>(
        loc, b.create<arith::UIToFPOp>(loc, like, b.create<arith::ShRUIOp>(loc, random, u32(8))),
        splatConstant(b, loc, like, std::ldexp(1.0, -24)));
    Value scaled = b.create<arith::MulFOp>(loc, b.create<arith::BitcastOp>(loc, like, mag),
                                           splatConstant(b, loc, like, std::ldexp(1.0, m - emin)));
    Value hit = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, u, scaled),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, expField, u32(0)));
    Value smallest = u32(static_cast<uint32_t>(emin - m + 127) << 23);
    Value tinyBits = b.create<arith::OrIOp>(loc, sign, b.create<arith::SelectOp>(loc, hit, smallest, u32(0)));
    result = b.create<arith::SelectOp>(loc, tiny, b.create<arith::BitcastOp>(loc, like, tinyBits), result);
  }
  return result;
}

FailureOr<Value> emitElementwise(OpBuilder &b, Location loc, Operation *op, ArrayRef<Value> in,
                                 const ElementOptions &o) {
  namespace g = tessera::graph;
  Value x = in[0];
  if (auto cast = dyn_cast<g::CastOp>(op); cast && cast.isStochastic())
    return op->emitOpError("with rounding = \"stochastic\" needs its elements' indices, which this "
                           "position of the kernel does not provide"),
           failure();
  // select: in[0] is the i1 condition; the choices are of one compute type.
  if (isa<g::SelectOp>(op)) return b.create<arith::SelectOp>(loc, x, in[1], in[2]).getResult();
  if (auto cmp = dyn_cast<g::CompareOp>(op)) {
    // Floats: ordered predicates (false with a NaN) but ne, unordered (true
    // with a NaN), as IEEE and numpy; narrow floats compare their exact f32
    // values. Integers (i8 widened by sign extension, i32; i1 eq / ne) signed.
    using P = g::ComparePredicate;
    if (getElementTypeOrSelf(x.getType()).isa<FloatType>()) {
      arith::CmpFPredicate p = arith::CmpFPredicate::OEQ;
      switch (cmp.getPredicate()) {
      case P::eq: p = arith::CmpFPredicate::OEQ; break;
      case P::ne: p = arith::CmpFPredicate::UNE; break;
      case P::lt: p = arith::CmpFPredicate::OLT; break;
      case P::le: p = arith::CmpFPredicate::OLE; break;
      case P::gt: p = arith::CmpFPredicate::OGT; break;
      case P::ge: p = arith::CmpFPredicate::OGE; break;
      }
      return b.create<arith::CmpFOp>(loc, p, x, in[1]).getResult();
    }
    arith::CmpIPredicate p = arith::CmpIPredicate::eq;
    switch (cmp.getPredicate()) {
    case P::eq: p = arith::CmpIPredicate::eq; break;
    case P::ne: p = arith::CmpIPredicate::ne; break;
    case P::lt: p = arith::CmpIPredicate::slt; break;
    case P::le: p = arith::CmpIPredicate::sle; break;
    case P::gt: p = arith::CmpIPredicate::sgt; break;
    case P::ge: p = arith::CmpIPredicate::sge; break;
    }
    return b.create<arith::CmpIOp>(loc, p, x, in[1]).getResult();
  }
  Type t = x.getType();
  bool f = getElementTypeOrSelf(t).isa<FloatType>();
  auto c = [&](double v) { return splatConstant(b, loc, t, v); };
  if (isa<g::AddOp>(op)) return f ? b.create<arith::AddFOp>(loc, x, in[1]).getResult() : b.create<arith::AddIOp>(loc, x, in[1]).getResult();
  if (isa<g::SubOp>(op)) return f ? b.create<arith::SubFOp>(loc, x, in[1]).getResult() : b.create<arith::SubIOp>(loc, x, in[1]).getResult();
  if (isa<g::MulOp>(op)) return f ? b.create<arith::MulFOp>(loc, x, in[1]).getResult() : b.create<arith::MulIOp>(loc, x, in[1]).getResult();
  if (isa<g::MaxOp>(op)) return f ? emitMaxMinF(b, loc, x, in[1], true) : b.create<arith::MaxSIOp>(loc, x, in[1]).getResult();
  if (isa<g::DivOp>(op)) {
    if (f && o.selectDivisionByZero) {
      Bits u(b, loc, t);
      Value y = in[1], zero = c(0);
      Value byZero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, y, zero);
      Value inf = u.bor(u.band(b.create<arith::XOrIOp>(loc, u.toBits(x), u.toBits(y)), 0x80000000), u.c(0x7F800000));
      // x == 0 or x is NaN (UEQ holds for unordered operands): NaN.
      Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UEQ, x, zero);
      Value special = u.toFloat(u.sel(nan, 0x7FC00000, inf));
      return b.create<arith::SelectOp>(loc, byZero, special, b.create<arith::DivFOp>(loc, x, y)).getResult();
    }
    if (f) return b.create<arith::DivFOp>(loc, x, in[1]).getResult();
    // x86 idiv traps on / 0 and on INT_MIN / -1 (LLVM: undefined): divide
    // by 1 there and patch the result (x / -1 = -x, wrapping; x / 0 = 0).
    Value y = in[1];
    auto eq = [&](double v) { return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, c(v)); };
    Value zero = eq(0), minus1 = eq(-1);
    Value safe = b.create<arith::SelectOp>(loc, b.create<arith::OrIOp>(loc, zero, minus1), c(1), y);
    Value q = b.create<arith::DivSIOp>(loc, x, safe);
    q = b.create<arith::SelectOp>(loc, minus1, b.create<arith::SubIOp>(loc, c(0), x), q);
    return b.create<arith::SelectOp>(loc, zero, c(0), q).getResult();
  }
  // relu: x < 0 ? 0 : x keeps a NaN (one maxps on x86); arith.maxf(x, 0)
  // gave 0 for NaN on the cpu (maxnum).
  if (isa<g::ReluOp>(op))
    return f ? b.create<arith::SelectOp>(loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(0)), c(0), x)
                   .getResult()
             : b.create<arith::MaxSIOp>(loc, x, c(0)).getResult();
  if (isa<g::MinOp>(op)) return f ? emitMaxMinF(b, loc, x, in[1], false) : b.create<arith::MinSIOp>(loc, x, in[1]).getResult();
  if (isa<g::NegOp>(op)) return f ? b.create<arith::NegFOp>(loc, x).getResult() : b.create<arith::SubIOp>(loc, c(0), x).getResult();
  if (isa<g::AbsOp>(op)) {
    if (f) return b.create<math::AbsFOp>(loc, x).getResult();
    Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, c(0));
    return b.create<arith::SelectOp>(loc, neg, b.create<arith::SubIOp>(loc, c(0), x), x).getResult();
  }
  if (isa<g::ExpOp>(op)) return b.create<math::ExpOp>(loc, x).getResult();
  if (isa<g::SqrtOp>(op)) return b.create<math::SqrtOp>(loc, x).getResult();
  // 1 / sqrt rather than math.rsqrt: the GPUs' rsqrt instructions are
  // approximate (NVIDIA's rsqrt.approx: 2 ulp, SPIR-V InverseSqrt: 2 ulp,
  // x86 has none for f32 at full precision); the reference divides.
  if (isa<g::RsqrtOp>(op)) return b.create<arith::DivFOp>(loc, c(1), b.create<math::SqrtOp>(loc, x)).getResult();
  if (isa<g::LogOp>(op)) return b.create<math::LogOp>(loc, x).getResult();
  if (isa<g::TanhOp>(op)) return emitTanh(b, loc, x);
  if (isa<g::SigmoidOp>(op)) return emitSigmoid(b, loc, x);
  if (isa<g::SiluOp>(op)) return b.create<arith::MulFOp>(loc, x, emitSigmoid(b, loc, x)).getResult();
  if (isa<g::ErfOp>(op)) return emitErf(b, loc, x);
  if (isa<g::PowOp>(op)) return b.create<math::PowFOp>(loc, x, in[1]).getResult();
  if (auto gelu = dyn_cast<g::GeluOp>(op); gelu && gelu.getApproximate() == "none") {
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value e = emitErf(b, loc, b.create<arith::MulFOp>(loc, x, c(0.7071067811865476)));
    Value half = b.create<arith::MulFOp>(loc, x, c(0.5));
    return b.create<arith::AddFOp>(loc, half, b.create<arith::MulFOp>(loc, half, e)).getResult();
  }
  if (isa<g::GeluOp>(op)) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), tanh(y) = 1 - 2/(e^{2y}+1)
    Value x3 = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, x, x), x);
    Value inner = b.create<arith::AddFOp>(loc, x, b.create<arith::MulFOp>(loc, x3, c(0.044715)));
    Value y2 = b.create<arith::MulFOp>(loc, inner, c(2.0 * 0.7978845608028654));
    Value e = b.create<math::ExpOp>(loc, y2);
    Value th = b.create<arith::SubFOp>(loc, c(1.0),
        b.create<arith::DivFOp>(loc, c(2.0), b.create<arith::AddFOp>(loc, e, c(1.0))));
    Value half = b.create<arith::MulFOp>(loc, x, c(0.5));
    return b.create<arith::AddFOp>(loc, half, b.create<arith::MulFOp>(loc, half, th)).getResult();
  }
  if (auto cast = dyn_cast<g::CastOp>(op))
    return castCompute(b, loc, x, getElementTypeOrSelf(cast.getInput().getType()),
                       getElementTypeOrSelf(cast.getResult().getType()));
  return failure();
}

}  // namespace tessera::elements
