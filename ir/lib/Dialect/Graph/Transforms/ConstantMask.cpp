//===- ConstantMask.cpp - attention masks evaluated at compile time -------===//
//
// A decoder's causal mask is written in Graph IR as arithmetic on iota
// (key index - query index, compare, select, a large negative constant), in
// as many forms as there are authors. Rather than match each form, the
// attention matcher evaluates the mask: a value computed from constants and
// iota alone is evaluated here, element by element, and its values are
// classified (AttentionToSchedule.cpp). Only the ops a mask is made of are
// known here; anything else (an argument, a matmul, exp...) means "not a
// constant" and the attention stays unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphToSchedule.h"

#include <cmath>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tessera::graph {
namespace {

struct Evaluator {
  int64_t maxElements;
  llvm::DenseMap<Value, ConstantTensor> memo;

  /// Rounds `x` to what an element of type `t` holds; false when that is
  /// not modelled here (the value then is not treated as a constant).
  static bool fit(Type t, double &x) {
    if (t.isF32()) {
      x = static_cast<double>(static_cast<float>(x));
      return true;
    }
    if (t.isF16() || t.isBF16()) {
      // Rounded to nearest even, as the ops store them (an f16 -1e9 is
      // -inf, which masks as well).
      llvm::APFloat f(x);
      bool lost = false;
      f.convert(t.cast<FloatType>().getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
      x = f.convertToDouble();
      return true;
    }
    if (t.isSignlessInteger(1)) {
      x = x != 0.0 ? 1.0 : 0.0;
      return true;
    }
    if (t.isSignlessInteger(32)) {
      // Integer ops wrap; a mask never gets near that, so give up instead
      // of modelling it.
      return std::isfinite(x) && x == std::trunc(x) && std::fabs(x) <= 2147483647.0;
    }
    return false;  // fp8, i8: no rounding model here
  }

  /// Element `flat` of the result shape `out`, read from `in` broadcast to
  /// it (numpy: trailing dims aligned, size-1 dims repeated).
  static double at(const ConstantTensor &in, ArrayRef<int64_t> out, int64_t flat) {
    int64_t idx = 0, stride = 1;
    const int64_t r = static_cast<int64_t>(out.size()), ri = static_cast<int64_t>(in.shape.size());
    int64_t rem = flat;
    SmallVector<int64_t> coord(r);
    for (int64_t d = r - 1; d >= 0; --d) {
      coord[d] = rem % out[d];
      rem /= out[d];
    }
    for (int64_t d = ri - 1; d >= 0; --d) {
      int64_t n = in.shape[d];
      int64_t c = n == 1 ? 0 : coord[r - ri + d];
      idx += c * stride;
      stride *= n;
    }
    return in.values[idx];
  }

  std::optional<ConstantTensor> eval(Value v) {
    if (auto it = memo.find(v); it != memo.end()) return it->second;
    auto t = v.getType().dyn_cast<RankedTensorType>();
    if (!t || !t.hasStaticShape() || t.getNumElements() > maxElements) return std::nullopt;
    if (auto l = getLayout(t); l && !l.isRowMajor()) return std::nullopt;
    Operation *def = v.getDefiningOp();
    if (!def) return std::nullopt;
    ConstantTensor out;
    out.shape.assign(t.getShape().begin(), t.getShape().end());
    const int64_t n = t.getNumElements();
    out.values.resize(n);
    Type et = t.getElementType();
    auto finish = [&]() -> std::optional<ConstantTensor> {
      for (double &x : out.values)
        if (!fit(et, x)) return std::nullopt;
      memo[v] = out;
      return out;
    };

    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
      if (!dense) return std::nullopt;
      int64_t i = 0;
      if (auto fp = dense.dyn_cast<DenseFPElementsAttr>()) {
        for (APFloat x : fp.getValues<APFloat>()) out.values[i++] = x.convertToDouble();
      } else if (auto in = dense.dyn_cast<DenseIntElementsAttr>()) {
        bool i1 = et.isSignlessInteger(1);
        for (APInt x : in.getValues<APInt>())
          out.values[i++] = i1 ? static_cast<double>(x.getZExtValue()) : static_cast<double>(x.getSExtValue());
      } else {
        return std::nullopt;
      }
      return finish();
    }
    if (auto iota = dyn_cast<IotaOp>(def)) {
      ArrayRef<int64_t> shape = out.shape;
      int64_t inner = 1;
      const int64_t dim = static_cast<int64_t>(iota.getDim());
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d > dim; --d) inner *= shape[d];
      for (int64_t i = 0; i < n; ++i) out.values[i] = static_cast<double>((i / inner) % shape[dim]);
      return finish();
    }
    // Elementwise ops of the forms masks are written in.
    SmallVector<ConstantTensor, 3> in;
    for (Value o : def->getOperands()) {
      auto x = eval(o);
      if (!x) return std::nullopt;
      in.push_back(std::move(*x));
    }
    auto unary = [&](auto f) {
      for (int64_t i = 0; i < n; ++i) out.values[i] = f(at(in[0], out.shape, i));
    };
    auto binary = [&](auto f) {
      for (int64_t i = 0; i < n; ++i) out.values[i] = f(at(in[0], out.shape, i), at(in[1], out.shape, i));
    };
    bool intDiv = isa<DivOp>(def) && !et.isa<FloatType>();
    if (isa<AddOp>(def)) binary([](double a, double b) { return a + b; });
    else if (isa<SubOp>(def)) binary([](double a, double b) { return a - b; });
    else if (isa<MulOp>(def)) binary([](double a, double b) { return a * b; });
    else if (isa<DivOp>(def)) {
      bool zero = false;
      binary([&](double a, double b) {
        if (b == 0.0) zero = true;
        return intDiv ? std::trunc(a / b) : a / b;
      });
      if (zero) return std::nullopt;
    } else if (isa<MinOp>(def)) binary([](double a, double b) { return std::fmin(a, b); });
    else if (isa<MaxOp>(def)) binary([](double a, double b) { return std::fmax(a, b); });
    else if (isa<NegOp>(def)) unary([](double a) { return -a; });
    else if (isa<ReluOp>(def)) unary([](double a) { return a > 0.0 ? a : 0.0; });
    else if (isa<CastOp>(def)) unary([&](double a) { return et.isa<FloatType>() ? a : std::trunc(a); });
    else if (auto cmp = dyn_cast<CompareOp>(def)) {
      ComparePredicate p = cmp.getPredicate();
      binary([p](double a, double b) {
        switch (p) {
        case ComparePredicate::eq: return double(a == b);
        case ComparePredicate::ne: return double(a != b);
        case ComparePredicate::lt: return double(a < b);
        case ComparePredicate::le: return double(a <= b);
        case ComparePredicate::gt: return double(a > b);
        case ComparePredicate::ge: return double(a >= b);
        }
        return 0.0;
      });
    } else if (isa<SelectOp>(def)) {
      for (int64_t i = 0; i < n; ++i)
        out.values[i] = at(in[0], out.shape, i) != 0.0 ? at(in[1], out.shape, i) : at(in[2], out.shape, i);
    } else {
      return std::nullopt;
    }
    return finish();
  }
};

}  // namespace

std::optional<ConstantTensor> evaluateConstant(Value v, int64_t maxElements) {
  Evaluator e{maxElements, llvm::DenseMap<Value, ConstantTensor>()};
  return e.eval(v);
}

Value matchCausalMask(Operation *op, double factor) {
  if (!(factor > 0.0)) return nullptr;
  Value result = op->getNumResults() == 1 ? op->getResult(0) : Value();
  auto rt = result ? result.getType().dyn_cast<RankedTensorType>() : RankedTensorType();
  if (!rt || rt.getRank() < 2) return nullptr;
  // The operand that is the scores (of the result's type) and the masked
  // positions' values: masked(e) and value(e) per element of the result.
  Value scores;
  std::optional<ConstantTensor> a, b;
  enum { kAdditive, kKeepWhereTrue, kKeepWhereFalse } form;
  if (isa<AddOp>(op)) {
    for (int i = 0; i < 2 && !scores; ++i)
      if (op->getOperand(i).getType() == rt && (a = evaluateConstant(op->getOperand(1 - i), kMaxMaskElements)))
        scores = op->getOperand(i);
    form = kAdditive;
  } else if (auto sel = dyn_cast<SelectOp>(op)) {
    a = evaluateConstant(sel.getCond(), kMaxMaskElements);
    if (!a) return nullptr;
    if (sel.getA().getType() == rt && (b = evaluateConstant(sel.getB(), kMaxMaskElements))) {
      scores = sel.getA();
      form = kKeepWhereTrue;
    } else if (sel.getB().getType() == rt && (b = evaluateConstant(sel.getA(), kMaxMaskElements))) {
      scores = sel.getB();
      form = kKeepWhereFalse;
    }
  }
  if (!scores) return nullptr;
  // Every element: key j > query i masked (a value at most kMaskedAtMost),
  // every other one untouched (an added 0, or the scores selected).
  ArrayRef<int64_t> shape = rt.getShape();
  const int64_t sq = shape[shape.size() - 2], skv = shape.back();
  for (int64_t e = 0, n = rt.getNumElements(); e < n; ++e) {
    const int64_t i = (e / skv) % sq, j = e % skv;
    const bool wantMasked = j > i;
    double av = Evaluator::at(*a, shape, e);
    bool masked;
    double value;
    switch (form) {
    case kAdditive: masked = av != 0.0, value = av; break;
    case kKeepWhereTrue: masked = av == 0.0, value = masked ? Evaluator::at(*b, shape, e) : 0.0; break;
    case kKeepWhereFalse: masked = av != 0.0, value = masked ? Evaluator::at(*b, shape, e) : 0.0; break;
    }
    if (masked != wantMasked || (masked && !(value * factor <= kMaskedAtMost))) return nullptr;
  }
  return scores;
}

}  // namespace tessera::graph
