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
#include <functional>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tessera::graph {
namespace {

struct Evaluator {
  int64_t maxElements;
  llvm::DenseMap<Value, ConstantTensor> memo;
  // The box evaluated, over the shape of the value asked for (`root`): each
  // value on the way is evaluated over its part of it (a size-1 dim, which
  // broadcasts, over its one element).
  SmallVector<int64_t> root, lo, hi;

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
    if (in.values.size() == 1) return in.values[0];
    if (ArrayRef<int64_t>(in.shape) == out) return in.values[flat];
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
    if (!t || !t.hasStaticShape()) return std::nullopt;
    if (auto l = getLayout(t); l && !l.isRowMajor()) return std::nullopt;
    Operation *def = v.getDefiningOp();
    if (!def) return std::nullopt;
    // This value's part of the box: first[d] .. first[d] + out.shape[d].
    ConstantTensor out;
    SmallVector<int64_t> first(t.getRank(), 0);
    out.shape.assign(t.getShape().begin(), t.getShape().end());
    const int64_t R = static_cast<int64_t>(root.size()), r = t.getRank();
    if (r > R) return std::nullopt;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t rd = R - r + d;
      if (t.getDimSize(d) == 1) continue;
      if (t.getDimSize(d) != root[rd]) return std::nullopt;
      first[d] = lo[rd];
      out.shape[d] = hi[rd] - lo[rd];
    }
    int64_t n = 1;
    for (int64_t e : out.shape) n *= e;
    if (n > maxElements) return std::nullopt;
    out.values.resize(n);
    // The coordinates in the whole value of element `i` of the part.
    auto absolute = [&](int64_t i, SmallVectorImpl<int64_t> &coord) {
      coord.assign(out.shape.size(), 0);
      for (int64_t d = static_cast<int64_t>(out.shape.size()) - 1; d >= 0; --d) {
        coord[d] = first[d] + i % out.shape[d];
        i /= out.shape[d];
      }
    };
    Type et = t.getElementType();
    auto finish = [&]() -> std::optional<ConstantTensor> {
      for (double &x : out.values)
        if (!fit(et, x)) return std::nullopt;
      return memo[v] = std::move(out);
    };

    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
      if (!dense) return std::nullopt;
      // Every element of the constant (a splat: one), then the part's.
      if (!dense.isSplat() && t.getNumElements() > maxElements) return std::nullopt;
      std::vector<double> all;
      if (auto fp = dense.dyn_cast<DenseFPElementsAttr>()) {
        for (APFloat x : fp.getValues<APFloat>()) {
          all.push_back(x.convertToDouble());
          if (dense.isSplat()) break;
        }
      } else if (auto in = dense.dyn_cast<DenseIntElementsAttr>()) {
        bool i1 = et.isSignlessInteger(1);
        for (APInt x : in.getValues<APInt>()) {
          all.push_back(i1 ? static_cast<double>(x.getZExtValue()) : static_cast<double>(x.getSExtValue()));
          if (dense.isSplat()) break;
        }
      } else {
        return std::nullopt;
      }
      if (all.empty()) return std::nullopt;
      SmallVector<int64_t> coord;
      for (int64_t i = 0; i < n; ++i) {
        if (dense.isSplat()) {
          out.values[i] = all[0];
          continue;
        }
        absolute(i, coord);
        int64_t flat = 0;
        for (int64_t d = 0; d < t.getRank(); ++d) flat = flat * t.getDimSize(d) + coord[d];
        out.values[i] = all[flat];
      }
      return finish();
    }
    if (auto iota = dyn_cast<IotaOp>(def)) {
      ArrayRef<int64_t> shape = out.shape;
      int64_t inner = 1;
      const int64_t dim = static_cast<int64_t>(iota.getDim());
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d > dim; --d) inner *= shape[d];
      for (int64_t i = 0; i < n; ++i) out.values[i] = static_cast<double>(first[dim] + (i / inner) % shape[dim]);
      return finish();
    }
    // Elementwise ops of the forms masks are written in.
    SmallVector<ConstantTensor, 3> in;
    for (Value o : def->getOperands()) {
      auto x = eval(o);
      if (!x) return std::nullopt;
      in.push_back(std::move(*x));
    }
    // Each operand read as a scalar, element for element, or broadcast
    // (decided once per operand: a long mask's rows are the hot loop).
    auto reader = [&](const ConstantTensor &x) -> std::function<double(int64_t)> {
      if (x.values.size() == 1) return [v = x.values[0]](int64_t) { return v; };
      if (ArrayRef<int64_t>(x.shape) == ArrayRef<int64_t>(out.shape))
        return [p = x.values.data()](int64_t i) { return p[i]; };
      return [&x, &out](int64_t i) { return at(x, out.shape, i); };
    };
    auto unary = [&](auto f) {
      auto x = reader(in[0]);
      for (int64_t i = 0; i < n; ++i) out.values[i] = f(x(i));
    };
    auto binary = [&](auto f) {
      auto x = reader(in[0]), y = reader(in[1]);
      for (int64_t i = 0; i < n; ++i) out.values[i] = f(x(i), y(i));
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
      auto c = reader(in[0]), x = reader(in[1]), y = reader(in[2]);
      for (int64_t i = 0; i < n; ++i) out.values[i] = c(i) != 0.0 ? x(i) : y(i);
    } else {
      return std::nullopt;
    }
    return finish();
  }
};

}  // namespace

std::optional<ConstantTensor> evaluateConstantPart(Value v, ArrayRef<int64_t> shape, ArrayRef<int64_t> lo,
                                                   ArrayRef<int64_t> hi, int64_t maxElements) {
  Evaluator e{maxElements, llvm::DenseMap<Value, ConstantTensor>(), SmallVector<int64_t>(shape.begin(), shape.end()),
              SmallVector<int64_t>(lo.begin(), lo.end()), SmallVector<int64_t>(hi.begin(), hi.end())};
  return e.eval(v);
}

Value matchCausalMask(Operation *op, double factor) {
  if (!(factor > 0.0)) return nullptr;
  Value result = op->getNumResults() == 1 ? op->getResult(0) : Value();
  auto rt = result ? result.getType().dyn_cast<RankedTensorType>() : RankedTensorType();
  if (!rt || rt.getRank() < 2 || !rt.hasStaticShape()) return nullptr;
  ArrayRef<int64_t> shape = rt.getShape();
  const int64_t R = rt.getRank(), sq = shape[R - 2], skv = shape[R - 1];
  // The mask's values are evaluated one query row at a time (a box of
  // [.., i, 0 .. skv) over the result's shape), so a long sequence needs
  // O(skv) memory, not O(sq * skv).
  auto part = [&](Value v, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi) {
    return evaluateConstantPart(v, shape, lo, hi, kMaxMaskElements);
  };
  SmallVector<int64_t> lo0(R, 0), hi0(R, 1);
  hi0[R - 1] = skv;
  // The operand that is the scores (of the result's type) and the
  // constant ones: `a` (the added mask, or the select's condition) and `b`
  // (the select's other branch).
  Value scores, a, b;
  enum { kAdditive, kKeepWhereTrue, kKeepWhereFalse } form;
  if (isa<AddOp>(op)) {
    for (int i = 0; i < 2 && !scores; ++i)
      if (op->getOperand(i).getType() == rt && part(op->getOperand(1 - i), lo0, hi0))
        scores = op->getOperand(i), a = op->getOperand(1 - i);
    form = kAdditive;
  } else if (auto sel = dyn_cast<SelectOp>(op)) {
    if (!part(sel.getCond(), lo0, hi0)) return nullptr;
    a = sel.getCond();
    if (sel.getA().getType() == rt && part(sel.getB(), lo0, hi0)) {
      scores = sel.getA(), b = sel.getB();
      form = kKeepWhereTrue;
    } else if (sel.getB().getType() == rt && part(sel.getA(), lo0, hi0)) {
      scores = sel.getB(), b = sel.getA();
      form = kKeepWhereFalse;
    }
  }
  if (!scores) return nullptr;
  // The batch dims along which a constant varies (a mask of [sq, skv] is
  // the same for every head: one is checked).
  SmallVector<int64_t> batch(R - 2, 1);
  int64_t rows = sq;
  for (int64_t d = 0; d < R - 2; ++d) {
    for (Value c : {a, b}) {
      if (!c) continue;
      auto ct = c.getType().cast<RankedTensorType>();
      const int64_t cd = d - (R - ct.getRank());
      if (cd >= 0 && ct.getDimSize(cd) > 1) batch[d] = shape[d];
    }
    rows *= batch[d];
  }
  if (rows > kMaxMaskWork / std::max<int64_t>(1, skv)) return nullptr;
  // Every element: key j > query i masked (a value at most kMaskedAtMost),
  // every other one untouched (an added 0, or the scores selected).
  SmallVector<int64_t> lo(R, 0), hi(R, 1);
  hi[R - 1] = skv;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r;
    const int64_t i = rem % sq;
    rem /= sq;
    lo[R - 2] = i, hi[R - 2] = i + 1;
    for (int64_t d = R - 3; d >= 0; --d) {
      lo[d] = rem % batch[d], hi[d] = lo[d] + 1;
      rem /= batch[d];
    }
    std::optional<ConstantTensor> av = part(a, lo, hi), bv;
    if (b) bv = part(b, lo, hi);
    if (!av || (b && !bv)) return nullptr;
    ArrayRef<int64_t> row(hi0.data() + 0, R);  // [1, .., 1, skv]: one query row
    for (int64_t j = 0; j < skv; ++j) {
      const bool wantMasked = j > i;
      const double x = Evaluator::at(*av, row, j);
      bool masked;
      double value;
      switch (form) {
      case kAdditive: masked = x != 0.0, value = x; break;
      case kKeepWhereTrue: masked = x == 0.0, value = masked ? Evaluator::at(*bv, row, j) : 0.0; break;
      case kKeepWhereFalse: masked = x != 0.0, value = masked ? Evaluator::at(*bv, row, j) : 0.0; break;
      }
      if (masked != wantMasked || (masked && !(value * factor <= kMaskedAtMost))) return nullptr;
    }
  }
  return scores;
}

}  // namespace tessera::graph
