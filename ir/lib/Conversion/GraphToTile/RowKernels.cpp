//===- RowKernels.cpp - Tile IR kernels for Graph softmax and reduce ------===//
//
// See RowKernels.h for what each kernel computes and why the reductions
// are shaped the way they are (bitwise agreement with the cpu backend).
//===----------------------------------------------------------------------===//
#include "RowKernels.h"

#include "GpuElements.h"

#include <functional>
#include <limits>

#include "llvm/Support/MathExtras.h"
#include "mlir/IR/Builders.h"
#include "tessera/Conversion/GraphToTile/Passes.h"

using namespace mlir;
namespace g = tessera::graph;
namespace t = tessera::tile;

namespace tessera::conversion::rows {
namespace {

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }
Value cF32(OpBuilder &b, Location l, double v) {
  return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(static_cast<float>(v)));
}
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }
/// Stored element of type `elem` -> its compute type (f32 / i32), and back.
using gpu_elements::narrow;
using gpu_elements::widen;

/// One dimension of a row-major index decomposition: its extent and the
/// stride of its index in the input buffer.
struct Dim {
  int64_t size, stride;
};

/// Offset in the input of flat index `f` taken row-major over `dims`
/// (f < the product of their sizes).
Value offsetOf(OpBuilder &b, Location l, Value f, ArrayRef<Dim> dims) {
  Value off, rest = f;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k].size == 1) continue;
    Value idx = k == 0 ? rest : b.create<arith::RemUIOp>(l, rest, cIdx(b, l, dims[k].size)).getResult();
    if (k != 0) rest = b.create<arith::DivUIOp>(l, rest, cIdx(b, l, dims[k].size));
    Value term = dims[k].stride == 1 ? idx : b.create<arith::MulIOp>(l, idx, cIdx(b, l, dims[k].stride)).getResult();
    off = off ? b.create<arith::AddIOp>(l, off, term).getResult() : term;
  }
  return off ? off : cIdx(b, l, 0);
}

/// The kept and the reduced dims of a reduce, with their input strides.
struct ReduceShape {
  SmallVector<Dim> kept, reduced;
  int64_t outputs = 1, n = 1;  // outputs; reduced elements per output
};
ReduceShape reduceShape(g::ReduceOp op) {
  auto t = op.getInput().getType().cast<ShapedType>();
  SmallVector<int64_t> stride(t.getRank(), 1);
  for (int64_t d = t.getRank() - 2; d >= 0; --d) stride[d] = stride[d + 1] * t.getDimSize(d + 1);
  SmallVector<bool> isReduced(t.getRank(), false);
  for (int64_t d : op.getDims()) isReduced[d] = true;
  ReduceShape s;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    Dim dim{t.getDimSize(d), stride[d]};
    if (isReduced[d]) s.reduced.push_back(dim), s.n *= dim.size;
    else s.kept.push_back(dim), s.outputs *= dim.size;
  }
  return s;
}

/// Rows of a softmax: `rows` rows of `len` elements `stride` apart.
struct SoftmaxShape {
  int64_t len, stride, rows;
};
SoftmaxShape softmaxShape(g::SoftmaxOp op) {
  auto t = op.getType().cast<ShapedType>();
  int64_t d = static_cast<int64_t>(op.getDim()), inner = 1;
  for (int64_t k = d + 1; k < t.getRank(); ++k) inner *= t.getDimSize(k);
  return {t.getDimSize(d), inner, t.getNumElements() / t.getDimSize(d)};
}

struct Ids {
  Value group, groups, lane;
};
Ids ids(OpBuilder &b, Location l) {
  return {b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0}),
          b.create<t::GroupCountOp>(l, b.getIndexType(), uint64_t{0}),
          b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0})};
}

Value shared(OpBuilder &b, Location l, Type elem, int64_t n) {
  auto ty = MemRefType::get({n}, elem, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
  return b.create<t::SharedAllocOp>(l, ty, uint64_t{0});
}

/// Group-wide reduction of `v` through shared memory `sh` (`lanes` slots):
/// a fixed tree (strides lanes/2 .. 1, barrier after each step), so
/// results are the same run to run. Every lane gets the result.
Value groupReduce(OpBuilder &b, Location l, Value v, Value sh, Value lane, bool isMax, int64_t lanes) {
  b.create<memref::StoreOp>(l, v, sh, lane);
  b.create<t::BarrierOp>(l);
  auto steps = b.create<scf::ForOp>(l, cIdx(b, l, 0), cIdx(b, l, llvm::Log2_64(lanes)), cIdx(b, l, 1));
  {
    OpBuilder sb = OpBuilder::atBlockBegin(steps.getBody());
    Value stride = sb.create<arith::ShRUIOp>(l, cIdx(sb, l, lanes / 2), steps.getInductionVar());
    Value mine = sb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, lane, stride);
    auto ifOp = sb.create<scf::IfOp>(l, mine, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    Value x = ib.create<memref::LoadOp>(l, sh, lane);
    Value y = ib.create<memref::LoadOp>(l, sh, ValueRange{ib.create<arith::AddIOp>(l, lane, stride)});
    Value s = isMax ? ib.create<arith::MaxFOp>(l, x, y).getResult() : ib.create<arith::AddFOp>(l, x, y).getResult();
    ib.create<memref::StoreOp>(l, s, sh, lane);
    sb.create<t::BarrierOp>(l);
  }
  return b.create<memref::LoadOp>(l, sh, ValueRange{cIdx(b, l, 0)});
}

/// softmax: rows loop over groups (uniform bounds, so the barriers inside
/// are reached by every lane); each lane takes elements lane, lane+lanes, ...
/// The value `store` writes for the op's compute-type value `v` at `flat`.
Value stored(OpBuilder &b, Location l, const Store &store, Value v, Value flat) {
  return narrow(b, l, store.value ? store.value(b, v, flat) : v, store.elem);
}

void buildSoftmax(func::FuncOp k, g::SoftmaxOp op, int64_t lanes, Value x, Value out, const Store &store) {
  Location loc = op.getLoc();
  SoftmaxShape s = softmaxShape(op);
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  Ids id = ids(b, loc);
  Type elem = elemOf(op.getResult());  // a float type: f32 arithmetic
  Value shA = shared(b, loc, b.getF32Type(), lanes), shB = shared(b, loc, b.getF32Type(), lanes);
  Value cLen = cIdx(b, loc, s.len), cLanes = cIdx(b, loc, lanes);
  Value negInf = cF32(b, loc, -std::numeric_limits<double>::infinity());
  auto rowLoop = b.create<scf::ForOp>(loc, id.group, cIdx(b, loc, s.rows), id.groups);
  OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
  Value row = rowLoop.getInductionVar();
  // Row r starts at (r / stride) * len * stride + r % stride.
  Value base = s.stride == 1
                   ? rb.create<arith::MulIOp>(loc, row, cLen).getResult()
                   : rb.create<arith::AddIOp>(
                           loc,
                           rb.create<arith::MulIOp>(loc, rb.create<arith::DivUIOp>(loc, row, cIdx(rb, loc, s.stride)),
                                                    cIdx(rb, loc, s.len * s.stride)),
                           rb.create<arith::RemUIOp>(loc, row, cIdx(rb, loc, s.stride)))
                         .getResult();
  auto at = [&](OpBuilder &ob, Value e) -> Value {
    Value step = s.stride == 1 ? e : ob.create<arith::MulIOp>(loc, e, cIdx(ob, loc, s.stride)).getResult();
    return ob.create<arith::AddIOp>(loc, base, step);
  };
  auto laneFold = [&](Value init, function_ref<Value(OpBuilder &, Value, Value)> f) {
    auto lp = rb.create<scf::ForOp>(loc, id.lane, cLen, cLanes, ValueRange{init});
    OpBuilder lb = OpBuilder::atBlockBegin(lp.getBody());
    Value v = widen(lb, loc, lb.create<memref::LoadOp>(loc, x, ValueRange{at(lb, lp.getInductionVar())}), elem);
    lb.create<scf::YieldOp>(loc, f(lb, lp.getRegionIterArgs()[0], v));
    return lp.getResult(0);
  };
  Value mx = groupReduce(rb, loc,
                         laneFold(negInf, [&](OpBuilder &lb, Value a, Value v) -> Value {
                           return lb.create<arith::MaxFOp>(loc, a, v);
                         }),
                         shA, id.lane, /*isMax=*/true, lanes);
  Value part = laneFold(cF32(rb, loc, 0.0), [&](OpBuilder &lb, Value a, Value v) -> Value {
    return lb.create<arith::AddFOp>(loc, a, lb.create<math::ExpOp>(loc, lb.create<arith::SubFOp>(loc, v, mx)));
  });
  Value sum = groupReduce(rb, loc, part, shB, id.lane, /*isMax=*/false, lanes);
  auto wr = rb.create<scf::ForOp>(loc, id.lane, cLen, cLanes);
  OpBuilder wb = OpBuilder::atBlockBegin(wr.getBody());
  Value idx = at(wb, wr.getInductionVar());
  Value v = widen(wb, loc, wb.create<memref::LoadOp>(loc, x, idx), elem);
  Value e = wb.create<math::ExpOp>(loc, wb.create<arith::SubFOp>(loc, v, mx));
  wb.create<memref::StoreOp>(loc, stored(wb, loc, store, wb.create<arith::DivFOp>(loc, e, sum), idx), out, idx);
  // Every lane has read the shared results before the next row's stores.
  rb.create<t::BarrierOp>(loc);
  b.create<func::ReturnOp>(loc);
}

/// How a reduce combines, in the compute type of its element type (f32, or
/// i32: integer sums wrap, and wrap again to the width at the store), and
/// the value that changes nothing: -0.0 for float sums (x + -0.0 == x
/// bitwise, for every x), -inf / +inf for float max / min, 0, INT32_MIN and
/// INT32_MAX for integers. A mean combines as a sum and divides by the
/// count at the store.
struct Combiner {
  g::ReduceKind kind;
  int64_t count;
  Type elem, compute;
  explicit Combiner(g::ReduceOp op)
      : kind(op.getKind()), count(op.reducedCount()), elem(elemOf(op.getInput())),
        compute(elements::computeType(elem)) {}
  bool isFloat() const { return compute.isa<FloatType>(); }
  bool isMax() const { return kind == g::ReduceKind::max; }
  bool isMin() const { return kind == g::ReduceKind::min; }
  Value identity(OpBuilder &b, Location l) const {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (isFloat()) return cF32(b, l, isMax() ? -inf : isMin() ? inf : -0.0);
    double v = isMax() ? static_cast<double>(std::numeric_limits<int32_t>::min())
             : isMin() ? static_cast<double>(std::numeric_limits<int32_t>::max())
                       : 0.0;
    return elements::splatConstant(b, l, compute, v);
  }
  Value operator()(OpBuilder &b, Location l, Value x, Value y) const {
    if (isFloat()) {
      if (isMax()) return b.create<arith::MaxFOp>(l, x, y);
      if (isMin()) return b.create<arith::MinFOp>(l, x, y);
      return b.create<arith::AddFOp>(l, x, y);
    }
    if (isMax()) return b.create<arith::MaxSIOp>(l, x, y);
    if (isMin()) return b.create<arith::MinSIOp>(l, x, y);
    return b.create<arith::AddIOp>(l, x, y);
  }
  Value load(OpBuilder &b, Location l, Value buf, Value at) const {
    return widen(b, l, b.create<memref::LoadOp>(l, buf, at), elem);
  }
  /// The op's result has the input's element type; `store` says what is
  /// written (the result, or a fused tree over it).
  void store(OpBuilder &b, Location l, const Store &st, Value v, Value buf, Value at) const {
    if (kind == g::ReduceKind::mean) v = b.create<arith::DivFOp>(l, v, cF32(b, l, static_cast<double>(count)));
    b.create<memref::StoreOp>(l, stored(b, l, st, v, at), buf, at);
  }
};

/// reduce, order = sequential: one lane per output, left to right.
void buildSequentialReduce(func::FuncOp k, g::ReduceOp op, int64_t lanes, Value x, Value out,
                           const Store &store) {
  Location loc = op.getLoc();
  ReduceShape s = reduceShape(op);
  Combiner combine(op);
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  Ids id = ids(b, loc);
  Value cLanes = cIdx(b, loc, lanes);
  Value start = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, id.group, cLanes), id.lane);
  Value step = b.create<arith::MulIOp>(loc, id.groups, cLanes);
  auto outLoop = b.create<scf::ForOp>(loc, start, cIdx(b, loc, s.outputs), step);
  OpBuilder ob = OpBuilder::atBlockBegin(outLoop.getBody());
  Value o = outLoop.getInductionVar();
  Value kept = offsetOf(ob, loc, o, s.kept);
  Value first = combine.load(ob, loc, x, kept);
  auto fold = ob.create<scf::ForOp>(loc, cIdx(ob, loc, 1), cIdx(ob, loc, s.n), cIdx(ob, loc, 1), ValueRange{first});
  {
    OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
    Value off = fb.create<arith::AddIOp>(loc, kept, offsetOf(fb, loc, fold.getInductionVar(), s.reduced));
    Value v = combine.load(fb, loc, x, off);
    fb.create<scf::YieldOp>(loc, combine(fb, loc, fold.getRegionIterArgs()[0], v));
  }
  combine.store(ob, loc, store, fold.getResult(0), out, o);
  b.create<func::ReturnOp>(loc);
}

/// reduce, order = pairwise: lane c computes the tree of the chunk
/// [c*C, (c+1)*C) (C a power of two, so the tree's levels below C stay
/// inside chunks), then levels C, 2C, ... combine chunk c with c + t for
/// c % 2t == 0 in shared memory. Elements past the end read as the
/// identity, which leaves every partial result bitwise unchanged: the
/// reference's "no partner at this level" case.
void buildPairwiseReduce(func::FuncOp k, g::ReduceOp op, int64_t lanes, Value x, Value out,
                         const Store &store) {
  Location loc = op.getLoc();
  ReduceShape s = reduceShape(op);
  Combiner combine(op);
  const int64_t chunk = static_cast<int64_t>(llvm::PowerOf2Ceil(ceilDiv(s.n, lanes)));
  const int64_t chunks = ceilDiv(s.n, chunk);
  const bool guard = chunk * lanes != s.n;
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  Ids id = ids(b, loc);
  Value sh = shared(b, loc, combine.compute, lanes);
  auto rowLoop = b.create<scf::ForOp>(loc, id.group, cIdx(b, loc, s.outputs), id.groups);
  OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
  Value o = rowLoop.getInductionVar();
  Value kept = offsetOf(rb, loc, o, s.kept);
  auto element = [&](OpBuilder &eb, Value j) -> Value {
    if (!guard) return combine.load(eb, loc, x, eb.create<arith::AddIOp>(loc, kept, offsetOf(eb, loc, j, s.reduced)));
    Value ok = eb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, j, cIdx(eb, loc, s.n));
    Value safe = eb.create<arith::SelectOp>(loc, ok, j, cIdx(eb, loc, 0));
    Value v = combine.load(eb, loc, x, eb.create<arith::AddIOp>(loc, kept, offsetOf(eb, loc, safe, s.reduced)));
    return eb.create<arith::SelectOp>(loc, ok, v, combine.identity(eb, loc));
  };
  // The tree over [first, first + 2^level): two halves, each its own tree,
  // combined left to right (identity (+) left (+) right == left (+) right).
  std::function<Value(OpBuilder &, unsigned, Value)> tree = [&](OpBuilder &tb, unsigned level, Value first) -> Value {
    if (level == 0) return element(tb, first);
    auto halves = tb.create<scf::ForOp>(loc, cIdx(tb, loc, 0), cIdx(tb, loc, 2), cIdx(tb, loc, 1),
                                        ValueRange{combine.identity(tb, loc)});
    OpBuilder hb = OpBuilder::atBlockBegin(halves.getBody());
    Value half = hb.create<arith::AddIOp>(
        loc, first, hb.create<arith::MulIOp>(loc, halves.getInductionVar(), cIdx(hb, loc, int64_t{1} << (level - 1))));
    hb.create<scf::YieldOp>(loc, combine(hb, loc, halves.getRegionIterArgs()[0], tree(hb, level - 1, half)));
    return halves.getResult(0);
  };
  Value mine = tree(rb, llvm::Log2_64(chunk), rb.create<arith::MulIOp>(loc, id.lane, cIdx(rb, loc, chunk)));
  rb.create<memref::StoreOp>(loc, mine, sh, id.lane);
  rb.create<t::BarrierOp>(loc);
  for (int64_t t = 1; t < chunks; t *= 2) {
    Value rem = rb.create<arith::RemUIOp>(loc, id.lane, cIdx(rb, loc, 2 * t));
    Value leader = rb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem, cIdx(rb, loc, 0));
    auto ifOp = rb.create<scf::IfOp>(loc, leader, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    Value left = ib.create<memref::LoadOp>(loc, sh, id.lane);
    Value right = ib.create<memref::LoadOp>(loc, sh, ValueRange{ib.create<arith::AddIOp>(loc, id.lane, cIdx(ib, loc, t))});
    ib.create<memref::StoreOp>(loc, combine(ib, loc, left, right), sh, id.lane);
    rb.create<t::BarrierOp>(loc);
  }
  Value first = rb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, id.lane, cIdx(rb, loc, 0));
  auto leaderOnly = rb.create<scf::IfOp>(loc, first, /*withElse=*/false);
  OpBuilder sb = leaderOnly.getThenBodyBuilder();
  combine.store(sb, loc, store, sb.create<memref::LoadOp>(loc, sh, ValueRange{cIdx(sb, loc, 0)}), out, o);
  // Lane 0 has read the result before the next output's stores.
  rb.create<t::BarrierOp>(loc);
  b.create<func::ReturnOp>(loc);
}

/// Rows of a norm: `rows` rows of `len` contiguous elements (the last dim).
struct NormShape {
  int64_t len, rows;
};
NormShape normShape(Operation *op) {
  auto t = op->getResult(0).getType().cast<ShapedType>();
  return {t.getShape().back(), t.getNumElements() / t.getShape().back()};
}

/// layernorm / rmsnorm: one group per row (rows loop over groups, uniform
/// bounds for the barriers); each lane folds elements lane, lane+lanes, ...
/// then a shared-memory tree (groupReduce) gives every lane the row's sum.
/// Two passes for the layernorm's variance (sum((x - mean)^2), no
/// cancellation), one for the rmsnorm's sum of squares; then each lane
/// writes its elements `(x - mean) / sqrt(var + eps) * gamma + beta`
/// (rmsnorm: `x / sqrt(ms + eps) * gamma`), in f32, rounded once.
void buildNorm(func::FuncOp k, Operation *op, int64_t lanes, ValueRange operands, Value out,
               const Store &store) {
  Location loc = op->getLoc();
  const bool layer = isa<g::LayerNormOp>(op);
  const double eps = layer ? cast<g::LayerNormOp>(op).getEpsilon().convertToDouble()
                           : cast<g::RmsNormOp>(op).getEpsilon().convertToDouble();
  NormShape s = normShape(op);
  Value x = operands[0], gamma = operands[1], beta = layer ? operands[2] : Value();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  Ids id = ids(b, loc);
  Type elem = elemOf(op->getResult(0));  // a float type: f32 arithmetic
  Value shA = shared(b, loc, b.getF32Type(), lanes), shB = shared(b, loc, b.getF32Type(), lanes);
  Value cLen = cIdx(b, loc, s.len), cLanes = cIdx(b, loc, lanes);
  auto rowLoop = b.create<scf::ForOp>(loc, id.group, cIdx(b, loc, s.rows), id.groups);
  OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
  Value base = rb.create<arith::MulIOp>(loc, rowLoop.getInductionVar(), cLen);
  auto load = [&](OpBuilder &ob, Value buf, Value at) {
    return widen(ob, loc, ob.create<memref::LoadOp>(loc, buf, at), elem);
  };
  auto laneSum = [&](function_ref<Value(OpBuilder &, Value)> term) {
    auto lp = rb.create<scf::ForOp>(loc, id.lane, cLen, cLanes, ValueRange{cF32(rb, loc, 0.0)});
    OpBuilder lb = OpBuilder::atBlockBegin(lp.getBody());
    Value v = load(lb, x, lb.create<arith::AddIOp>(loc, base, lp.getInductionVar()));
    lb.create<scf::YieldOp>(loc, ValueRange{lb.create<arith::AddFOp>(loc, lp.getRegionIterArgs()[0], term(lb, v))});
    return lp.getResult(0);
  };
  Value n = cF32(rb, loc, static_cast<double>(s.len));
  Value mean;
  if (layer) {
    Value sum = groupReduce(rb, loc, laneSum([](OpBuilder &, Value v) { return v; }), shA, id.lane, false, lanes);
    mean = rb.create<arith::DivFOp>(loc, sum, n);
  }
  Value sq = groupReduce(rb, loc, laneSum([&](OpBuilder &lb, Value v) -> Value {
                           Value d = mean ? lb.create<arith::SubFOp>(loc, v, mean).getResult() : v;
                           return lb.create<arith::MulFOp>(loc, d, d);
                         }),
                         shB, id.lane, false, lanes);
  Value var = rb.create<arith::DivFOp>(loc, sq, n);
  Value inv = rb.create<arith::DivFOp>(
      loc, cF32(rb, loc, 1.0),
      rb.create<math::SqrtOp>(loc, rb.create<arith::AddFOp>(loc, var, cF32(rb, loc, eps))));
  auto wr = rb.create<scf::ForOp>(loc, id.lane, cLen, cLanes);
  OpBuilder wb = OpBuilder::atBlockBegin(wr.getBody());
  Value j = wr.getInductionVar();
  Value idx = wb.create<arith::AddIOp>(loc, base, j);
  Value v = load(wb, x, idx);
  if (mean) v = wb.create<arith::SubFOp>(loc, v, mean);
  Value y = wb.create<arith::MulFOp>(loc, wb.create<arith::MulFOp>(loc, v, inv), load(wb, gamma, j));
  if (beta) y = wb.create<arith::AddFOp>(loc, y, load(wb, beta, j));
  wb.create<memref::StoreOp>(loc, stored(wb, loc, store, y, idx), out, idx);
  // Every lane has read the shared sums before the next row overwrites them.
  rb.create<t::BarrierOp>(loc);
  b.create<func::ReturnOp>(loc);
}

}  // namespace

std::array<int64_t, 3> grid(Operation *op, int64_t lanes, int64_t maxGroups) {
  if (auto sm = dyn_cast<g::SoftmaxOp>(op)) return {std::min(softmaxShape(sm).rows, maxGroups), 1, 1};
  if (isa<g::LayerNormOp, g::RmsNormOp>(op)) return {std::min(normShape(op).rows, maxGroups), 1, 1};
  auto red = cast<g::ReduceOp>(op);
  ReduceShape s = reduceShape(red);
  int64_t groups = red.getOrder() == g::AssocOrder::sequential ? ceilDiv(s.outputs, lanes) : s.outputs;
  return {std::max<int64_t>(1, std::min(groups, maxGroups)), 1, 1};
}

void buildKernel(func::FuncOp k, Operation *op, int64_t lanes, ValueRange operands, Value out,
                 const Store &store) {
  if (auto sm = dyn_cast<g::SoftmaxOp>(op)) return buildSoftmax(k, sm, lanes, operands[0], out, store);
  if (isa<g::LayerNormOp, g::RmsNormOp>(op)) return buildNorm(k, op, lanes, operands, out, store);
  auto red = cast<g::ReduceOp>(op);
  if (red.getOrder() == g::AssocOrder::sequential)
    return buildSequentialReduce(k, red, lanes, operands[0], out, store);
  buildPairwiseReduce(k, red, lanes, operands[0], out, store);
}

}  // namespace tessera::conversion::rows
