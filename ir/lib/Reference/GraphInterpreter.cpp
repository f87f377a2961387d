#include "tessera/Reference/GraphInterpreter.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "tessera/element_types.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "tessera/Conversion/ShapeOps.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::reference {
using namespace tessera::elements;
namespace {

using namespace mlir;
namespace g = tessera::graph;

struct T {
  std::vector<int64_t> shape;
  std::vector<double> v;  // logical, row-major; values of the element type
  int64_t size() const { return static_cast<int64_t>(v.size()); }
};

// Logical <-> physical for the innermost two dims.
std::vector<double> toPhysical(const T& t, g::LayoutAttr l) {
  if (!l || l.isRowMajor()) return t.v;
  int64_t M = t.shape[t.shape.size() - 2], N = t.shape.back(), mats = t.size() / (M * N);
  std::vector<double> out(t.v.size());
  for (int64_t b = 0; b < mats; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) out[b * M * N + l.offset(i, j, M, N)] = t.v[b * M * N + i * N + j];
  return out;
}
T fromPhysical(const std::vector<double>& p, RankedTensorType type) {
  T t{std::vector<int64_t>(type.getShape().begin(), type.getShape().end()), p};
  auto l = g::getLayout(type);
  if (!l || l.isRowMajor()) return t;
  int64_t M = t.shape[t.shape.size() - 2], N = t.shape.back(), mats = t.size() / (M * N);
  for (int64_t b = 0; b < mats; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) t.v[b * M * N + i * N + j] = p[b * M * N + l.offset(i, j, M, N)];
  return t;
}

std::string dtypeOf(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  getElementTypeOrSelf(t).print(os);
  return os.str();
}

// A float elementwise op in F: float (the backends' f32 arithmetic) or
// double (the exact mode of ReferenceOptions).
template <typename F>
F floatElementwise(Operation& op, F x, F y) {
  if (isa<g::AddOp>(op)) return x + y;
  if (isa<g::SubOp>(op)) return x - y;
  if (isa<g::MulOp>(op)) return x * y;
  if (isa<g::DivOp>(op)) return x / y;
  // NaN from either side, as numpy's maximum / minimum (std::max kept y's
  // NaN out when x came first).
  if (isa<g::MaxOp>(op)) return std::isnan(x) || std::isnan(y) ? x + y : std::max(x, y);
  if (isa<g::MinOp>(op)) return std::isnan(x) || std::isnan(y) ? x + y : std::min(x, y);
  if (isa<g::PowOp>(op)) return std::pow(x, y);
  if (isa<g::ReluOp>(op)) return std::max(x, F(0));
  if (isa<g::ExpOp>(op)) return std::exp(x);
  if (auto ge = dyn_cast<g::GeluOp>(op)) {
    if (ge.getApproximate() == "none") return F(0.5) * x * (F(1) + std::erf(x * F(0.7071067811865476)));
    return F(0.5) * x * (F(1) + std::tanh(F(0.7978845608028654) * (x + F(0.044715) * x * x * x)));
  }
  if (isa<g::NegOp>(op)) return -x;
  if (isa<g::AbsOp>(op)) return std::fabs(x);
  if (isa<g::SqrtOp>(op)) return std::sqrt(x);
  if (isa<g::RsqrtOp>(op)) return F(1) / std::sqrt(x);
  if (isa<g::LogOp>(op)) return std::log(x);
  if (isa<g::TanhOp>(op)) return std::tanh(x);
  if (isa<g::SigmoidOp>(op)) return F(1) / (F(1) + std::exp(-x));
  if (isa<g::SiluOp>(op)) return x * (F(1) / (F(1) + std::exp(-x)));
  if (isa<g::ErfOp>(op)) return std::erf(x);
  return x;
}

// attention_grad: per batch element, the scores, the probabilities and
// every product in double (the exact value the kernels' f32 sums
// approximate in their own orders), each cotangent rounded to f32 once at
// the end (kept in exact mode). D = rowsum(dO * O) as defined, from the
// given O.
void attentionGrad(g::AttentionGradOp op, const T& q, const T& kt, const T& v, const T& o, const T& dout,
                   DenseMap<Value, T>& env, bool exact) {
  const size_t r = q.shape.size();
  const int64_t sq = q.shape[r - 2], d = q.shape[r - 1], skv = kt.shape[r - 1], dv = v.shape[r - 1];
  const int64_t batch = q.size() / (sq * d);
  const double scale = op.getScale().convertToDouble();
  const bool causal = op.getCausal();
  T dq{q.shape, std::vector<double>(q.v.size(), 0.0)};
  T dkt{kt.shape, std::vector<double>(kt.v.size(), 0.0)};
  T dvv{v.shape, std::vector<double>(v.v.size(), 0.0)};
  std::vector<double> p(skv), dp(skv);
  for (int64_t b = 0; b < batch; ++b) {
    const double* Q = &q.v[b * sq * d];
    const double* K = &kt.v[b * d * skv];  // K^T [d][Skv]
    const double* V = &v.v[b * skv * dv];
    const double* O = &o.v[b * sq * dv];
    const double* dO = &dout.v[b * sq * dv];
    double* dQ = &dq.v[b * sq * d];
    double* dK = &dkt.v[b * d * skv];
    double* dV = &dvv.v[b * skv * dv];
    for (int64_t i = 0; i < sq; ++i) {
      // P row i: softmax over the unmasked keys.
      double mx = -INFINITY, sum = 0.0;
      const int64_t keys = causal ? std::min(skv, i + 1) : skv;
      for (int64_t j = 0; j < keys; ++j) {
        double s = 0.0;
        for (int64_t c = 0; c < d; ++c) s += Q[i * d + c] * K[c * skv + j];
        p[j] = scale * s;
        mx = std::max(mx, p[j]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += p[j] = std::exp(p[j] - mx);
      double rowDot = 0.0;  // rowsum(dO * O)
      for (int64_t c = 0; c < dv; ++c) rowDot += dO[i * dv + c] * O[i * dv + c];
      for (int64_t j = 0; j < keys; ++j) {
        p[j] /= sum;
        double g = 0.0;
        for (int64_t c = 0; c < dv; ++c) {
          g += dO[i * dv + c] * V[j * dv + c];
          dV[j * dv + c] += p[j] * dO[i * dv + c];
        }
        dp[j] = p[j] * (g - rowDot);  // dS
        for (int64_t c = 0; c < d; ++c) {
          dQ[i * d + c] += scale * dp[j] * K[c * skv + j];
          dK[c * skv + j] += scale * dp[j] * Q[i * d + c];
        }
      }
    }
  }
  for (T* t : {&dq, &dkt, &dvv})
    if (!exact)
      for (double& x : t->v) x = static_cast<double>(static_cast<float>(x));
  env[op.getDquery()] = std::move(dq);
  env[op.getDkeyT()] = std::move(dkt);
  env[op.getDvalue()] = std::move(dvv);
}

std::string eval(Block& block, DenseMap<Value, T>& env, const ReferenceCollective& collective,
                 bool exact) {
  for (Operation& op : block) {
    auto in = [&](unsigned i) -> T& { return env[op.getOperand(i)]; };
    auto resultShape = [&](unsigned i = 0) {
      auto s = op.getResult(i).getType().cast<RankedTensorType>().getShape();
      return std::vector<int64_t>(s.begin(), s.end());
    };
    if (auto tile = dyn_cast<schedule::TileOp>(op)) {
      for (auto [a, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands())) env[a] = env[v];
      if (auto e = eval(tile.getBody().front(), env, collective, exact); !e.empty()) return e;
      auto y = cast<schedule::YieldOp>(tile.getBody().front().getTerminator());
      for (auto [r, v] : llvm::zip(tile.getResults(), y.getValues())) env[r] = env[v];
      continue;
    }
    if (isa<schedule::YieldOp, func::ReturnOp>(op)) continue;
    if (auto ag = dyn_cast<g::AttentionGradOp>(op)) {
      attentionGrad(ag, in(0), in(1), in(2), in(3), in(4), env, exact);
      continue;
    }
    T out{resultShape(), {}};
    int64_t n = 1;
    for (int64_t d : out.shape) n *= d;
    out.v.assign(n, 0.f);
    // Element types: float ops compute in f32 (as float), integer ops
    // exactly (int64 / uint64, wrapping), and every result is rounded to
    // its type at the end (RoundTo), as the generated code stores it.
    // Element `i` of the result read from operand `t` (numpy broadcasting).
    auto at = [&](const T& t, int64_t i) {
      return t.shape == out.shape ? i : g::broadcastOffset(t.shape, out.shape, i);
    };
    const std::string rt = dtypeOf(op.getResult(0).getType());
    const bool isInt = !IsFloatDtype(rt);
    if (auto mm = dyn_cast<g::MatmulOp>(op)) {
      // Accumulated exactly (double: every partial sum of f32 products up
      // to K = 2^29 terms within 2^-24; integers mod 2^64), rounded once.
      T &a = in(0), &b = in(1);
      int64_t r = a.shape.size(), M = a.shape[r - 2], K = a.shape[r - 1], N = b.shape[r - 1];
      int64_t batch = a.size() / (M * K);
      bool intAcc = !IsFloatDtype(dtypeOf(mm.getLhs().getType()));
      std::vector<uint64_t> iacc(intAcc ? n : 0);
      for (int64_t bt = 0; bt < batch; ++bt)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t k = 0; k < K; ++k) {
            double av = a.v[bt * M * K + i * K + k];
            for (int64_t j = 0; j < N; ++j) {
              int64_t o = bt * M * N + i * N + j;
              double bv = b.v[bt * K * N + k * N + j];
              if (intAcc) iacc[o] += static_cast<uint64_t>(static_cast<int64_t>(av) * static_cast<int64_t>(bv));
              else out.v[o] += av * bv;  // exact: 24-bit x 24-bit significands
            }
          }
      if (intAcc)  // the low 32 bits (the i32 accumulator); RoundTo wraps to the result type
        for (int64_t o = 0; o < n; ++o) out.v[o] = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(iacc[o])));
    } else if (auto cast = dyn_cast<g::CastOp>(op)) {
      std::string from = dtypeOf(cast.getInput().getType());
      // Exact mode: float -> float casts keep the value (no rounding).
      const bool keep = exact && IsFloatDtype(from) && IsFloatDtype(rt);
      if (cast.isStochastic()) {
        // The neighbour Philox picks for row-major element i (the same
        // bits as every backend), then the cast's overflow rule.
        // An SPMD part's cast keys by the element's index in the global
        // tensor: its digits times the global strides, plus the device's
        // offset from its mesh position (operand 1).
        const uint64_t seed = static_cast<uint64_t>(*cast.getSeed());
        const llvm::SmallVector<int64_t> strides = cast.indexStrides();
        const std::vector<int64_t>& shape = in(0).shape;
        uint64_t base = 0;
        if (cast.getPosition()) {
          // The digits of the position's unsigned value, as the kernels take them.
          const auto position = static_cast<int64_t>(static_cast<uint32_t>(static_cast<int32_t>(in(1).v[0])));
          const std::vector<int64_t> mesh(cast.getMeshShape()->begin(), cast.getMeshShape()->end());
          const std::vector<int64_t> coords = g::meshCoords(mesh, position);
          for (size_t a = 0; a < coords.size(); ++a)
            base += static_cast<uint64_t>(coords[a]) * static_cast<uint64_t>((*cast.getMeshOffsets())[a]);
        }
        for (int64_t i = 0; i < n; ++i) {
          uint64_t index = base;
          int64_t rest = i;
          for (size_t d = shape.size(); d-- > 0;) {
            index += static_cast<uint64_t>(rest % shape[d]) * static_cast<uint64_t>(strides[d]);
            rest /= shape[d];
          }
          out.v[i] = CastValue(StochasticRound(static_cast<float>(in(0).v[i]), rt, seed, index), "f32", rt);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) out.v[i] = keep ? in(0).v[i] : CastValue(in(0).v[i], from, rt);
      }
    } else if (isa<g::QuantizeOp, g::DequantizeOp>(op)) {
      // Per element, with its channel's scale: quantize in f32 as defined
      // (x / s, then trunc(v +- 0.5) saturated to i8 by the cast rule);
      // dequantize as f32(q) * s (exactly in exact mode).
      T &x = in(0), &s = in(1);
      auto axisAttr = op.getAttrOfType<IntegerAttr>("axis");
      int64_t inner = 1, channels = 1;
      if (axisAttr) {
        const int64_t axis = axisAttr.getInt();
        channels = x.shape[axis];
        for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = axisAttr ? (i / inner) % channels : 0;
        if (isa<g::QuantizeOp>(op)) {
          const float v = static_cast<float>(x.v[i]) / static_cast<float>(s.v[c]);
          out.v[i] = CastValue(v >= 0.0f ? v + 0.5f : v - 0.5f, "f32", "i8");
        } else {
          out.v[i] = exact ? x.v[i] * s.v[c] : static_cast<double>(static_cast<float>(x.v[i]) * static_cast<float>(s.v[c]));
        }
      }
    } else if (auto cmp = dyn_cast<g::CompareOp>(op)) {
      // Exact values (f32, narrow floats and integers are exact doubles):
      // every comparison with a NaN is false but ne (C++ is IEEE here).
      T &a = in(0), &b = in(1);
      for (int64_t i = 0; i < n; ++i) {
        double x = a.v[at(a, i)], y = b.v[at(b, i)];
        bool r = false;
        switch (cmp.getPredicate()) {
        case g::ComparePredicate::eq: r = x == y; break;
        case g::ComparePredicate::ne: r = x != y; break;
        case g::ComparePredicate::lt: r = x < y; break;
        case g::ComparePredicate::le: r = x <= y; break;
        case g::ComparePredicate::gt: r = x > y; break;
        case g::ComparePredicate::ge: r = x >= y; break;
        }
        out.v[i] = r ? 1 : 0;
      }
    } else if (isa<g::SelectOp>(op)) {
      T &c = in(0), &a = in(1), &b = in(2);
      for (int64_t i = 0; i < n; ++i) out.v[i] = c.v[at(c, i)] != 0 ? a.v[at(a, i)] : b.v[at(b, i)];
    } else if (g::isElementwise(&op) && isInt) {
      T& a = in(0);
      const T* b = op.getNumOperands() == 2 ? &in(1) : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        int64_t x = static_cast<int64_t>(a.v[at(a, i)]), y = b ? static_cast<int64_t>(b->v[at(*b, i)]) : 0;
        int64_t r = x;
        if (isa<g::AddOp>(op)) r = x + y;
        else if (isa<g::SubOp>(op)) r = x - y;
        else if (isa<g::MulOp>(op)) r = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
        else if (isa<g::DivOp>(op)) r = y == 0 ? 0 : x / y;  // toward zero; x / 0 = 0 (docs/ir.md)
        else if (isa<g::MaxOp>(op)) r = std::max(x, y);
        else if (isa<g::MinOp>(op)) r = std::min(x, y);
        else if (isa<g::ReluOp>(op)) r = std::max<int64_t>(x, 0);
        else if (isa<g::NegOp>(op)) r = -x;  // RoundTo wraps INT_MIN
        else if (isa<g::AbsOp>(op)) r = x < 0 ? -x : x;
        out.v[i] = static_cast<double>(r);
      }
    } else if (g::isElementwise(&op)) {
      T& a = in(0);
      const T* b = op.getNumOperands() == 2 ? &in(1) : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        double x = a.v[at(a, i)], y = b ? b->v[at(*b, i)] : 0.0;
        out.v[i] = exact ? floatElementwise<double>(op, x, y)
                         : floatElementwise<float>(op, static_cast<float>(x), static_cast<float>(y));
      }
    } else if (auto sm = dyn_cast<g::SoftmaxOp>(op)) {
      // Along any dim: [outer, len, inner] around it.
      T& a = in(0);
      const int64_t dim = static_cast<int64_t>(sm.getDim());
      int64_t len = a.shape[dim], inner = 1;
      for (size_t d = dim + 1; d < a.shape.size(); ++d) inner *= a.shape[d];
      auto rows = [&](auto zero) {
        using F = decltype(zero);
        std::vector<F> e(len);
        for (int64_t r = 0; r < n / len; ++r) {
          const int64_t base = (r / inner) * len * inner + r % inner;
          auto at = [&](int64_t j) { return base + j * inner; };
          F mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < len; ++j) mx = std::max(mx, static_cast<F>(a.v[at(j)]));
          for (int64_t j = 0; j < len; ++j) sum += e[j] = std::exp(static_cast<F>(a.v[at(j)]) - mx);
          for (int64_t j = 0; j < len; ++j) out.v[at(j)] = e[j] * (F(1) / sum);
        }
      };
      if (exact) rows(0.0);
      else rows(0.f);
    } else if (g::isShapeOp(&op)) {
      // Each result element from one input element (ShapeOps.h), or its
      // index along `dim` for iota.
      std::vector<int64_t> idx(out.shape.size(), 0);
      const T* src = op.getNumOperands() ? &in(0) : nullptr;
      for (int64_t r = 0; r < n; ++r) {
        if (auto iota = dyn_cast<g::IotaOp>(op)) {
          out.v[r] = static_cast<double>(idx[iota.getDim()]);
        } else if (auto cat = dyn_cast<g::ConcatOp>(op)) {
          const int64_t dim = cat.getDim();
          int64_t i = idx[dim];
          for (Value v : cat.getInputs()) {
            const T& t = env[v];
            if (i < t.shape[dim]) {
              int64_t f = 0;
              for (size_t d = 0; d < t.shape.size(); ++d) f = f * t.shape[d] + (int64_t(d) == dim ? i : idx[d]);
              out.v[r] = t.v[f];
              break;
            }
            i -= t.shape[dim];
          }
        } else if (auto pad = dyn_cast<g::PadOp>(op)) {
          int64_t f = 0;
          bool inside = true;
          for (size_t d = 0; d < idx.size(); ++d) {
            int64_t i = idx[d] - pad.getLow()[d];
            inside = inside && i >= 0 && i < src->shape[d];
            f = f * src->shape[d] + i;
          }
          out.v[r] = inside ? src->v[f] : pad.getValue().convertToDouble();
        } else if (auto am = dyn_cast<g::ArgmaxOp>(op)) {
          const int64_t dim = am.getDim();
          std::vector<int64_t> at(idx);
          at.insert(at.begin() + dim, 0);
          auto value = [&](int64_t j) {
            at[dim] = j;
            int64_t f = 0;
            for (size_t d = 0; d < at.size(); ++d) f = f * src->shape[d] + at[d];
            return src->v[f];
          };
          double best = value(0);
          int64_t arg = 0;
          for (int64_t j = 1; j < src->shape[dim]; ++j)
            if (double v = value(j); v > best) best = v, arg = j;  // NaN is never greater
          out.v[r] = static_cast<double>(arg);
        } else if (isa<g::GatherOp>(op)) {
          // table[clamp(indices[i..]), j..]
          const T& ids = in(1);
          const size_t k = ids.shape.size();
          int64_t f = 0;
          for (size_t d = 0; d < k; ++d) f = f * ids.shape[d] + idx[d];
          int64_t row = std::clamp<int64_t>(static_cast<int64_t>(ids.v[f]), 0, src->shape[0] - 1);
          int64_t t = row;
          for (size_t d = 1; d < src->shape.size(); ++d) t = t * src->shape[d] + idx[k + d - 1];
          out.v[r] = src->v[t];
        } else {
          std::vector<int64_t> s = shapes::sourceIndex(&op, idx);
          int64_t f = 0;
          for (size_t d = 0; d < s.size(); ++d) f = f * src->shape[d] + s[d];
          out.v[r] = src->v[f];
        }
        for (size_t d = idx.size(); d-- > 0;)  // next row-major index
          if (++idx[d] < out.shape[d]) break;
          else idx[d] = 0;
      }
    } else if (isa<g::LayerNormOp, g::RmsNormOp>(op)) {
      // Per row of the last dim: statistics in double (the exact value the
      // kernels' f32 sums approximate in their own orders), the affine map
      // in f32, rounded once by RoundTo below.
      auto ln = dyn_cast<g::LayerNormOp>(op);
      const double eps = ln ? ln.getEpsilon().convertToDouble()
                            : llvm::cast<g::RmsNormOp>(op).getEpsilon().convertToDouble();
      T& a = in(0);
      const T& gamma = in(1);
      const T* beta = ln ? &in(2) : nullptr;
      const int64_t len = a.shape.back();
      for (int64_t r = 0; r < n / len; ++r) {
        const double* x = &a.v[r * len];
        double mean = 0, sq = 0;
        if (ln) {
          for (int64_t j = 0; j < len; ++j) mean += x[j];
          mean /= static_cast<double>(len);
        }
        for (int64_t j = 0; j < len; ++j) sq += (x[j] - mean) * (x[j] - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(len) + eps);
        for (int64_t j = 0; j < len; ++j) {
          if (exact) {
            double y = (x[j] - mean) * inv * gamma.v[j];
            out.v[r * len + j] = beta ? y + beta->v[j] : y;
            continue;
          }
          float y = static_cast<float>(x[j] - mean) * static_cast<float>(inv) * static_cast<float>(gamma.v[j]);
          out.v[r * len + j] = beta ? y + static_cast<float>(beta->v[j]) : y;
        }
      }
    } else if (auto red = dyn_cast<g::ReduceOp>(op)) {
      // In the order the attribute fixes: floats in f32, integers exactly.
      // Any set of dims: the reduced elements of an output, in row-major
      // order over the (sorted) reduced dims, are the sequence the order
      // attribute associates.
      T& a = in(0);
      const int64_t rank = static_cast<int64_t>(a.shape.size());
      std::vector<int64_t> stride(rank, 1);
      for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * a.shape[d + 1];
      std::vector<bool> reduced(rank, false);
      for (int64_t d : red.getDims()) reduced[d] = true;
      std::vector<int64_t> keptDims, redDims;
      for (int64_t d = 0; d < rank; ++d) (reduced[d] ? redDims : keptDims).push_back(d);
      int64_t len = 1;
      for (int64_t d : redDims) len *= a.shape[d];
      // Offset of flat index `f` over `ds` (row-major) in the input.
      auto offsetOf = [&](int64_t f, const std::vector<int64_t>& ds) {
        int64_t off = 0;
        for (size_t k = ds.size(); k-- > 0;) {
          off += (f % a.shape[ds[k]]) * stride[ds[k]];
          f /= a.shape[ds[k]];
        }
        return off;
      };
      const g::ReduceKind kind = red.getKind();
      bool pairwise = red.getOrder() == g::AssocOrder::pairwise;
      std::vector<double> row(len);
      for (int64_t r = 0; r < n; ++r) {
        const int64_t base = offsetOf(r, keptDims);
        for (int64_t j = 0; j < len; ++j) row[j] = a.v[base + offsetOf(j, redDims)];
        auto combine = [&](double x, double y) -> double {
          if (kind == g::ReduceKind::max) return std::max(x, y);
          if (kind == g::ReduceKind::min) return std::min(x, y);
          if (isInt) return static_cast<double>(static_cast<int64_t>(x) + static_cast<int64_t>(y));
          if (exact) return x + y;
          return static_cast<float>(x) + static_cast<float>(y);
        };
        if (pairwise) {
          for (int64_t st = 1; st < len; st *= 2)
            for (int64_t i = 0; i + st < len; i += 2 * st) row[i] = combine(row[i], row[i + st]);
        } else {
          for (int64_t j = 1; j < len; ++j) row[0] = combine(row[0], row[j]);
        }
        // mean: the f32 sum divided by the count, in f32.
        out.v[r] = kind != g::ReduceKind::mean ? row[0]
                   : exact ? row[0] / static_cast<double>(len)
                           : static_cast<float>(row[0]) / static_cast<float>(len);
      }
    } else if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
      if (!dense) return "no reference for non-dense 'arith.constant'";
      int64_t i = 0;
      if (dense.getElementType().isa<FloatType>()) {
        for (const APFloat& f : dense.getValues<APFloat>()) out.v[i++] = f.convertToDouble();
      } else {
        for (const APInt& x : dense.getValues<APInt>()) out.v[i++] = static_cast<double>(x.getSExtValue());
      }
      if (dense.isSplat()) std::fill(out.v.begin(), out.v.end(), out.v[0]);
    } else if (isa<g::ConvertLayoutOp>(op)) {
      out.v = in(0).v;  // logical values are unchanged
    } else if (collective && isa<g::AllReduceOp, g::BroadcastOp, g::AllGatherOp, g::ReduceScatterOp>(op)) {
      if (auto e = collective(op, in(0).v, &out.v); !e.empty()) return e;
    } else if (isa<g::MeshPositionOp>(op)) {
      // Which device evaluates: only the SPMD evaluation knows.
      if (!collective) return "'tessera_graph.mesh_position' outside an SPMD evaluation (one per device)";
      if (auto e = collective(op, {}, &out.v); !e.empty()) return e;
    } else {
      return "no reference for '" + op.getName().getStringRef().str() + "'";
    }
    if (!exact || isInt) for (double& v : out.v) v = RoundTo(v, rt);
    env[op.getResult(0)] = std::move(out);
  }
  return "";
}

}  // namespace

std::string ReferenceGraph(func::FuncOp fn, const HostTensors& inputs, HostTensors* outputs,
                           const ReferenceCollective& collective, const ReferenceOptions& options) {
  DenseMap<Value, T> env;
  for (auto [i, a] : llvm::enumerate(fn.getArguments()))
    env[a] = fromPhysical(inputs[i], a.getType().cast<RankedTensorType>());
  if (auto e = eval(fn.front(), env, collective, options.exact); !e.empty()) return e;
  outputs->clear();
  for (Value v : fn.front().getTerminator()->getOperands())
    outputs->push_back(toPhysical(env[v], g::getLayout(v.getType())));
  return "";
}

}  // namespace tessera::reference
