//===- GradRules.cpp - the VJP rule of every Graph IR op ------------------===//
//
// Each rule writes the cotangents of an op's operands as Graph IR from the
// cotangents of its results and its primal values (recomputing what it
// needs: the statistics of a norm, the mask of a max), so the backward
// pass is compiled and fused by the same pipeline as the forward one.
// docs/autodiff.md lists the formulas.
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

#include <cmath>
#include <numeric>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "tessera/Dialect/Graph/Transforms/Grad.h"

namespace tessera::graph::grad {

using namespace mlir;

bool isDifferentiable(Type type) {
  auto t = type.dyn_cast<RankedTensorType>();
  return t && t.getElementType().isa<FloatType>();
}

ArrayRef<int64_t> GradBuilder::shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }

RankedTensorType GradBuilder::f32(ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b_.getF32Type());
}

RankedTensorType GradBuilder::cotangentType(Value primal) { return f32(shapeOf(primal)); }

// Attention's probabilities, P = softmax(f(Q . K^T)) read only by the
// matmul P . V: the backward recomputes them from Q and K (the chain
// cloned) rather than keeping P from the forward. The forward's chain then
// has single uses, so the schedule fuses it into flash_attention (P never
// formed in the forward) and the forward keeps no score matrix for the
// backward. (The backward still forms P once, whole.)
static Value recomputeAttentionProbabilities(OpBuilder& b, Value v) {
  auto sm = v.getDefiningOp<SoftmaxOp>();
  if (!sm || !v.hasOneUse()) return nullptr;
  auto pv = dyn_cast<MatmulOp>(*v.getUsers().begin());
  if (!pv || pv.getLhs() != v) return nullptr;
  SmallVector<Operation*> chain = {sm};
  Value x = sm.getInput();
  while (true) {
    Operation* def = x.getDefiningOp();
    if (!def || !x.hasOneUse()) return nullptr;
    chain.push_back(def);
    if (isa<MatmulOp>(def)) break;
    if (!isElementwise(def) || def->getNumOperands() == 0) return nullptr;
    x = def->getOperand(0);
  }
  IRMapping map;
  Operation* last = nullptr;
  for (Operation* op : llvm::reverse(chain)) last = b.clone(*op, map);
  return last->getResult(0);
}

Value GradBuilder::primal(Value v) {
  if (auto it = primals_.find(v); it != primals_.end()) return it->second;
  auto t = v.getType().cast<RankedTensorType>();
  Value out = v;
  if (Value p = recomputeAttentionProbabilities(b_, v)) out = p;
  // The layout first, in the value's own (possibly narrower) type.
  if (!isRowMajor(t)) out = b_.create<ConvertLayoutOp>(loc_, RankedTensorType::get(t.getShape(), t.getElementType()), out);
  if (!t.getElementType().isF32()) out = b_.create<CastOp>(loc_, f32(t.getShape()), out);
  primals_[v] = out;
  return out;
}

Value GradBuilder::castTo(Value v, Type type) {
  auto t = type.cast<RankedTensorType>();
  auto vt = v.getType().cast<RankedTensorType>();
  if (vt.getElementType() != t.getElementType())
    v = b_.create<CastOp>(loc_, RankedTensorType::get(vt.getShape(), t.getElementType(), vt.getEncoding()), v);
  if (v.getType() != type) v = b_.create<ConvertLayoutOp>(loc_, type, v);
  return v;
}

Value GradBuilder::splat(ArrayRef<int64_t> shape, double value) {
  RankedTensorType t = f32(shape);
  return b_.create<arith::ConstantOp>(loc_, DenseElementsAttr::get(t, b_.getF32FloatAttr(static_cast<float>(value))
                                                                         .cast<Attribute>()));
}

Value GradBuilder::add(Value a, Value b) { return b_.create<AddOp>(loc_, a, b); }
Value GradBuilder::sub(Value a, Value b) { return b_.create<SubOp>(loc_, a, b); }
Value GradBuilder::mul(Value a, Value b) { return b_.create<MulOp>(loc_, a, b); }
Value GradBuilder::div(Value a, Value b) { return b_.create<DivOp>(loc_, a, b); }
Value GradBuilder::compare(ComparePredicate p, Value a, Value b) { return b_.create<CompareOp>(loc_, p, a, b); }
Value GradBuilder::select(Value c, Value a, Value b) { return b_.create<SelectOp>(loc_, c, a, b); }

Value GradBuilder::reduce(ReduceKind kind, Value v, ArrayRef<int64_t> dims, bool keep) {
  if (dims.empty()) return v;
  SmallVector<int64_t> shape;
  auto in = shapeOf(v);
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    bool reduced = llvm::is_contained(dims, d);
    if (!reduced) shape.push_back(in[d]);
    else if (keep) shape.push_back(1);
  }
  auto et = v.getType().cast<RankedTensorType>().getElementType();
  return b_.create<ReduceOp>(loc_, RankedTensorType::get(shape, et), kind, v, dims, AssocOrder::pairwise,
                             TypeAttr());
}

Value GradBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape) return v;
  auto et = v.getType().cast<RankedTensorType>().getElementType();
  return b_.create<ReshapeOp>(loc_, RankedTensorType::get(shape, et), v);
}

Value GradBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(shapeOf(v)[p]);
  auto et = v.getType().cast<RankedTensorType>().getElementType();
  return b_.create<TransposeOp>(loc_, RankedTensorType::get(shape, et), v, perm);
}

Value GradBuilder::transposeLast2(Value v) {
  if (auto it = transposed_.find(v); it != transposed_.end()) return it->second;
  SmallVector<int64_t> perm(shapeOf(v).size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transposed_[v] = transpose(v, perm);
}

Value GradBuilder::matmul(Value a, Value b) {
  SmallVector<int64_t> shape(shapeOf(a));
  shape.back() = shapeOf(b).back();
  return b_.create<MatmulOp>(loc_, f32(shape), a, b, TypeAttr());
}

Value GradBuilder::slice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape) return v;
  return b_.create<SliceOp>(loc_, f32(shape), v, offsets, strides);
}

Value GradBuilder::pad(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  if (llvm::all_of(low, [](int64_t x) { return x == 0; }) && llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return v;
  SmallVector<int64_t> shape(shapeOf(v));
  for (size_t d = 0; d < shape.size(); ++d) shape[d] += low[d] + high[d];
  return b_.create<PadOp>(loc_, f32(shape), v, low, high, llvm::APFloat(0.0));
}

Value GradBuilder::unbroadcast(Value c, ArrayRef<int64_t> target) {
  ArrayRef<int64_t> shape = shapeOf(c);
  if (shape == target) return c;
  const int64_t lead = static_cast<int64_t>(shape.size()) - static_cast<int64_t>(target.size());
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d < lead || (target[d - lead] == 1 && shape[d] != 1)) dims.push_back(d);
  return reshape(reduce(ReduceKind::sum, c, dims, /*keep=*/true), target);
}

Value GradBuilder::expandReduced(Value v, ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  // Keep the reduced dims as 1, then numpy broadcasting spreads them.
  SmallVector<int64_t> kept(shape);
  for (int64_t d : dims) kept[d] = 1;
  Value k = reshape(v, kept);
  return mul(k, splat(shape, 1.0));
}

namespace {

// The rule of one op: `d` the result's cotangent, `out` the operands'.
using Outs = SmallVectorImpl<Value>;

// Elementwise unary ops: the derivative as a function of x and y = f(x).
Value unaryDerivative(Operation* op, GradBuilder& gb, Value x, Value y) {
  auto shape = GradBuilder::shapeOf(x);
  auto one = [&] { return gb.splat(shape, 1.0); };
  // relu reads its result (x > 0 iff relu(x) > 0): the backward keeps y,
  // which the next op's backward keeps anyway, rather than x too.
  if (isa<ReluOp>(op)) return gb.select(gb.compare(ComparePredicate::gt, y, gb.splat(shape, 0.0)), one(), gb.splat(shape, 0.0));
  if (isa<ExpOp>(op)) return y;
  if (isa<NegOp>(op)) return gb.splat(shape, -1.0);
  if (isa<AbsOp>(op)) return gb.select(gb.compare(ComparePredicate::lt, x, gb.splat(shape, 0.0)), gb.splat(shape, -1.0), one());
  if (isa<SqrtOp>(op)) return gb.div(gb.splat(shape, 0.5), y);                  // 1 / (2 sqrt x)
  if (isa<RsqrtOp>(op)) return gb.mul(gb.scale(gb.mul(y, y), -0.5), y);           // -x^-3/2 / 2
  if (isa<LogOp>(op)) return gb.div(one(), x);
  if (isa<TanhOp>(op)) return gb.sub(one(), gb.mul(y, y));
  if (isa<SigmoidOp>(op)) return gb.mul(y, gb.sub(one(), y));
  if (isa<ErfOp>(op)) return gb.scale(gb.unary<ExpOp>(gb.unary<NegOp>(gb.mul(x, x))), 2.0 / std::sqrt(M_PI));
  if (isa<SiluOp>(op)) {  // s (1 + x (1 - s))
    Value s = gb.unary<SigmoidOp>(x);
    return gb.mul(s, gb.add(one(), gb.mul(x, gb.sub(one(), s))));
  }
  if (auto ge = dyn_cast<GeluOp>(op)) {
    if (ge.getApproximate() == "none") {  // Phi(x) + x phi(x)
      Value cdf = gb.scale(gb.add(one(), gb.unary<ErfOp>(gb.scale(x, M_SQRT1_2))), 0.5);
      Value pdf = gb.scale(gb.unary<ExpOp>(gb.scale(gb.mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
      return gb.add(cdf, gb.mul(x, pdf));
    }
    // u = c (x + a x^3), t = tanh u: 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
    const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value x2 = gb.mul(x, x);
    Value u = gb.scale(gb.add(x, gb.scale(gb.mul(x2, x), a)), c);
    Value t = gb.unary<TanhOp>(u);
    Value left = gb.scale(gb.add(one(), t), 0.5);
    Value du = gb.scale(gb.add(one(), gb.scale(x2, 3.0 * a)), c);
    Value right = gb.mul(gb.scale(gb.mul(x, gb.sub(one(), gb.mul(t, t))), 0.5), du);
    return gb.add(left, right);
  }
  return nullptr;
}

LogicalResult binaryRule(Operation* op, Value d, Outs& out, GradBuilder& gb) {
  Value x = gb.primal(op->getOperand(0)), y = gb.primal(op->getOperand(1));
  auto xs = GradBuilder::shapeOf(x), ys = GradBuilder::shapeOf(y);
  Value dx, dy;
  if (isa<AddOp>(op)) {
    dx = d, dy = d;
  } else if (isa<SubOp>(op)) {
    dx = d, dy = gb.unary<NegOp>(d);
  } else if (isa<MulOp>(op)) {
    dx = gb.mul(d, y), dy = gb.mul(d, x);
  } else if (isa<DivOp>(op)) {  // d/dy (x / y) = -(x / y) / y
    dx = gb.div(d, y);
    dy = gb.unary<NegOp>(gb.div(gb.mul(d, gb.primal(op->getResult(0))), y));
  } else if (isa<MaxOp, MinOp>(op)) {
    // Ties go to the lhs (as PyTorch's max with dim picks one).
    Value takeX = gb.compare(isa<MaxOp>(op) ? ComparePredicate::ge : ComparePredicate::le, x, y);
    Value zero = gb.splat(GradBuilder::shapeOf(d), 0.0);
    dx = gb.select(takeX, d, zero), dy = gb.select(takeX, zero, d);
  } else if (isa<PowOp>(op)) {  // x^y: y x^(y-1), x^y log x
    Value z = gb.primal(op->getResult(0));
    dx = gb.mul(d, gb.mul(y, gb.builder().create<PowOp>(gb.loc(), x, gb.sub(y, gb.splat(ys, 1.0))).getResult()));
    dy = gb.mul(d, gb.mul(z, gb.unary<LogOp>(x)));
  } else {
    return failure();
  }
  out[0] = gb.unbroadcast(dx, xs);
  out[1] = gb.unbroadcast(dy, ys);
  return success();
}

// Reductions: sum / mean spread the cotangent back; max / min send it to
// the elements equal to the result, shared evenly between ties.
LogicalResult reduceRule(ReduceOp op, Value d, Outs& out, GradBuilder& gb) {
  auto shape = GradBuilder::shapeOf(op.getInput());
  SmallVector<int64_t> dims(op.getDims());
  Value spread = gb.expandReduced(d, shape, dims);
  switch (op.getKind()) {
    case ReduceKind::sum:
      out[0] = spread;
      return success();
    case ReduceKind::mean:
      out[0] = gb.scale(spread, 1.0 / static_cast<double>(op.reducedCount()));
      return success();
    case ReduceKind::max:
    case ReduceKind::min: {
      Value x = gb.primal(op.getInput());
      Value y = gb.expandReduced(gb.primal(op.getResult()), shape, dims);
      Value hit = gb.compare(ComparePredicate::eq, x, y);
      Value ones = gb.select(hit, gb.splat(shape, 1.0), gb.splat(shape, 0.0));
      Value count = gb.expandReduced(gb.reduce(ReduceKind::sum, ones, dims, true), shape, dims);
      out[0] = gb.div(gb.mul(spread, ones), count);
      return success();
    }
  }
  return failure();
}

// The dims before `last`: what a norm's scale and shift are summed over.
SmallVector<int64_t> leadingDims(int64_t last) {
  SmallVector<int64_t> dims(last);
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

// layernorm: xhat = (x - mean) rstd, y = xhat gamma + beta.
LogicalResult layerNormRule(LayerNormOp op, Value d, Outs& out, GradBuilder& gb) {
  Value x = gb.primal(op.getInput()), g = gb.primal(op.getGamma());
  const int64_t last = static_cast<int64_t>(GradBuilder::shapeOf(x).size()) - 1;
  const SmallVector<int64_t> rows = leadingDims(last);
  Value mean = gb.reduce(ReduceKind::mean, x, {last}, true);
  Value xc = gb.sub(x, mean);
  Value var = gb.reduce(ReduceKind::mean, gb.mul(xc, xc), {last}, true);
  Value rstd = gb.unary<RsqrtOp>(gb.add(var, gb.splat({1}, op.getEpsilon().convertToDouble())));
  Value xhat = gb.mul(xc, rstd);
  out[1] = gb.reduce(ReduceKind::sum, gb.mul(d, xhat), rows, false);
  out[2] = gb.reduce(ReduceKind::sum, d, rows, false);
  Value gd = gb.mul(d, g);
  Value m1 = gb.reduce(ReduceKind::mean, gd, {last}, true);
  Value m2 = gb.reduce(ReduceKind::mean, gb.mul(gd, xhat), {last}, true);
  out[0] = gb.mul(rstd, gb.sub(gb.sub(gd, m1), gb.mul(xhat, m2)));
  return success();
}

// rmsnorm: r = rsqrt(mean(x^2) + eps), y = x r gamma.
LogicalResult rmsNormRule(RmsNormOp op, Value d, Outs& out, GradBuilder& gb) {
  Value x = gb.primal(op.getInput()), g = gb.primal(op.getGamma());
  const int64_t last = static_cast<int64_t>(GradBuilder::shapeOf(x).size()) - 1;
  const SmallVector<int64_t> rows = leadingDims(last);
  Value ms = gb.reduce(ReduceKind::mean, gb.mul(x, x), {last}, true);
  Value r = gb.unary<RsqrtOp>(gb.add(ms, gb.splat({1}, op.getEpsilon().convertToDouble())));
  Value xr = gb.mul(x, r);
  out[1] = gb.reduce(ReduceKind::sum, gb.mul(d, xr), rows, false);
  Value gd = gb.mul(d, g);
  Value m = gb.reduce(ReduceKind::mean, gb.mul(gd, x), {last}, true);
  out[0] = gb.sub(gb.mul(r, gd), gb.mul(gb.mul(x, gb.mul(r, gb.mul(r, r))), m));
  return success();
}

// softmax along `dim`: dx = y (d - sum(d y, dim)).
LogicalResult softmaxRule(SoftmaxOp op, Value d, Outs& out, GradBuilder& gb) {
  Value y = gb.primal(op.getResult());
  const int64_t dim = static_cast<int64_t>(op.getDim());
  Value s = gb.reduce(ReduceKind::sum, gb.mul(d, y), {dim}, true);
  out[0] = gb.mul(y, gb.sub(d, s));
  return success();
}

// A strided slice puts its cotangent back at offsets + i * strides: each
// strided dim is spread by interleaving zeros (reshape to [.., n, 1, ..],
// pad to [.., n, s, ..], reshape to [.., n * s, ..]), then zeros around.
LogicalResult sliceRule(SliceOp op, Value d, Outs& out, GradBuilder& gb) {
  auto in = GradBuilder::shapeOf(op.getInput());
  SmallVector<int64_t> offsets(op.getOffsets()), strides(op.getStrides());
  const size_t rank = in.size();
  Value c = d;
  for (size_t k = 0; k < rank; ++k) {
    const int64_t s = strides[k];
    if (s == 1) continue;
    SmallVector<int64_t> shape(GradBuilder::shapeOf(c));
    const int64_t n = shape[k];
    SmallVector<int64_t> split(shape.begin(), shape.begin() + k + 1);
    split.push_back(1);
    split.append(shape.begin() + k + 1, shape.end());
    SmallVector<int64_t> low(split.size(), 0), high(split.size(), 0);
    high[k + 1] = s - 1;
    Value spread = gb.pad(gb.reshape(c, split), low, high);
    shape[k] = n * s;
    c = gb.reshape(spread, shape);
    // The last s - 1 zeros may pass the input's end: drop what does.
    const int64_t room = in[k] - offsets[k];
    if (shape[k] > room) {
      SmallVector<int64_t> keep(shape);
      keep[k] = room;
      c = gb.slice(c, SmallVector<int64_t>(rank, 0), SmallVector<int64_t>(rank, 1), keep);
    }
  }
  auto cs = GradBuilder::shapeOf(c);
  SmallVector<int64_t> low(offsets), high;
  for (size_t k = 0; k < rank; ++k) high.push_back(in[k] - offsets[k] - cs[k]);
  out[0] = gb.pad(c, low, high);
  return success();
}

LogicalResult broadcastInDimRule(BroadcastInDimOp op, Value d, Outs& out, GradBuilder& gb) {
  auto in = GradBuilder::shapeOf(op.getInput()), res = GradBuilder::shapeOf(op.getResult());
  ArrayRef<int64_t> map = op.getDims();
  SmallVector<int64_t> dims;
  for (int64_t r = 0; r < static_cast<int64_t>(res.size()); ++r) {
    auto it = llvm::find(map, r);
    if (it == map.end() || (in[it - map.begin()] == 1 && res[r] != 1)) dims.push_back(r);
  }
  out[0] = gb.reshape(gb.reduce(ReduceKind::sum, d, dims, true), in);
  return success();
}

// dequantize: y = f32(q) * scale, per tensor or per channel along `axis`.
// The scale's cotangent sums dy * f32(q) over every other dim; the integer
// input has none (integers carry no gradient).
LogicalResult dequantizeRule(DequantizeOp op, Value d, Outs& out, GradBuilder& gb) {
  const int64_t rank = static_cast<int64_t>(GradBuilder::shapeOf(op.getInput()).size());
  std::optional<int64_t> axis;
  if (op.getAxis()) axis = static_cast<int64_t>(*op.getAxis());
  SmallVector<int64_t> dims;
  for (int64_t r = 0; r < rank; ++r)
    if (!axis || r != *axis) dims.push_back(r);
  Value prod = gb.mul(d, gb.primal(op.getInput()));
  if (!dims.empty()) prod = gb.reduce(ReduceKind::sum, prod, dims, true);
  out[1] = gb.reshape(prod, GradBuilder::shapeOf(op.getScale()));
  return success();
}

// gather: the cotangent of the table is the one-hot matrix of the
// (clamped) indices, transposed, times the cotangent rows (a scatter-add
// as a matmul: deterministic, and fused by the matmul path).
LogicalResult gatherRule(GatherOp op, Value d, Outs& out, GradBuilder& gb) {
  auto table = GradBuilder::shapeOf(op.getTable());
  auto ids = op.getIndices();
  int64_t rows = 1, cols = 1;
  for (int64_t s : GradBuilder::shapeOf(ids)) rows *= s;
  for (size_t k = 1; k < table.size(); ++k) cols *= table[k];
  const int64_t vocab = table[0];
  OpBuilder& b = gb.builder();
  auto i32 = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, b.getI32Type()); };
  auto i32Splat = [&](ArrayRef<int64_t> shape, int32_t v) -> Value {
    return b.create<arith::ConstantOp>(gb.loc(), DenseElementsAttr::get(i32(shape), b.getI32IntegerAttr(v).cast<Attribute>()));
  };
  Value col = b.create<ReshapeOp>(gb.loc(), i32({rows, 1}), ids);
  // Clamp as gather does: an index outside [0, V) reads the nearest row.
  col = b.create<MinOp>(gb.loc(), b.create<MaxOp>(gb.loc(), col, i32Splat({rows, 1}, 0)), i32Splat({rows, 1}, vocab - 1));
  Value iota = b.create<IotaOp>(gb.loc(), i32({rows, vocab}), 1);
  Value hit = gb.compare(ComparePredicate::eq, iota, col);
  Value onehot = gb.select(hit, gb.splat({rows, vocab}, 1.0), gb.splat({rows, vocab}, 0.0));
  Value dt = gb.matmul(gb.transposeLast2(onehot), gb.reshape(d, {rows, cols}));
  out[0] = gb.reshape(dt, table);
  return success();
}

// A call of a function with a custom VJP: its backward function, called
// with the arguments and the results' cotangents.
LogicalResult customVjpRule(func::CallOp call, ArrayRef<Value> ds, Outs& out, GradBuilder& gb) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  auto ref = callee ? callee->getAttrOfType<FlatSymbolRefAttr>(kCustomVjpAttr) : nullptr;
  if (!ref) {
    call.emitOpError() << "calls @" << call.getCallee()
                       << ", which has no VJP rule: give it a `" << kCustomVjpAttr.str()
                       << "` or inline it before --tessera-grad";
    return failure();
  }
  auto bwd = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, ref);
  if (!bwd) {
    call.emitOpError() << "@" << call.getCallee() << " names @" << ref.getValue()
                       << " as its custom VJP, and there is no such function";
    return failure();
  }
  SmallVector<Type> wantIn(callee.getArgumentTypes());
  wantIn.append(callee.getResultTypes().begin(), callee.getResultTypes().end());
  if (bwd.getArgumentTypes() != ArrayRef<Type>(wantIn) || bwd.getResultTypes() != callee.getArgumentTypes()) {
    std::string want;
    llvm::raw_string_ostream os(want);
    os << FunctionType::get(call.getContext(), wantIn, callee.getArgumentTypes());
    call.emitOpError() << "the custom VJP @" << bwd.getName() << " of @" << callee.getName() << " has type "
                       << bwd.getFunctionType() << "; it must be " << os.str()
                       << " (the arguments of @" << callee.getName()
                       << ", one cotangent per result -> one cotangent per argument)";
    return failure();
  }
  SmallVector<Value> args(call.getOperands());
  for (auto [i, r] : llvm::enumerate(call.getResults()))
    args.push_back(ds[i] ? gb.castTo(ds[i], r.getType()) : gb.castTo(gb.zerosLike(r), r.getType()));
  auto c = gb.builder().create<func::CallOp>(gb.loc(), bwd, args);
  for (auto [i, v] : llvm::enumerate(c.getResults()))
    if (isDifferentiable(v.getType())) out[i] = gb.primal(v);
  return success();
}

}  // namespace

LogicalResult vjp(Operation* op, ArrayRef<Value> ds, SmallVectorImpl<Value>& out, GradBuilder& gb) {
  gb.setLoc(op->getLoc());
  if (auto call = dyn_cast<func::CallOp>(op)) return customVjpRule(call, ds, out, gb);
  Value d = ds.empty() ? Value() : ds[0];
  if (!d) return success();
  if (auto mm = dyn_cast<MatmulOp>(op)) {  // dA = dC B^T, dB = A^T dC
    out[0] = gb.matmul(d, gb.transposeLast2(gb.primal(mm.getRhs())));
    out[1] = gb.matmul(gb.transposeLast2(gb.primal(mm.getLhs())), d);
    return success();
  }
  if (op->getNumOperands() == 2 && isElementwise(op) && !isa<CompareOp, CastOp>(op))
    if (succeeded(binaryRule(op, d, out, gb))) return success();
  if (auto sel = dyn_cast<SelectOp>(op)) {
    Value zero = gb.zerosLike(d);
    out[1] = gb.unbroadcast(gb.select(sel.getOperand(0), d, zero), GradBuilder::shapeOf(op->getOperand(1)));
    out[2] = gb.unbroadcast(gb.select(sel.getOperand(0), zero, d), GradBuilder::shapeOf(op->getOperand(2)));
    return success();
  }
  if (isa<CastOp, ConvertLayoutOp>(op)) {  // cotangents are f32 and row-major already
    out[0] = d;
    return success();
  }
  if (op->getNumOperands() == 1 && isElementwise(op)) {
    Value x = gb.primal(op->getOperand(0));
    if (Value der = unaryDerivative(op, gb, x, gb.primal(op->getResult(0)))) {
      out[0] = gb.mul(d, der);
      return success();
    }
  }
  if (auto r = dyn_cast<ReduceOp>(op)) return reduceRule(r, d, out, gb);
  if (auto s = dyn_cast<SoftmaxOp>(op)) return softmaxRule(s, d, out, gb);
  if (auto ln = dyn_cast<LayerNormOp>(op)) return layerNormRule(ln, d, out, gb);
  if (auto rn = dyn_cast<RmsNormOp>(op)) return rmsNormRule(rn, d, out, gb);
  if (auto t = dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> inv(t.getPerm().size());
    for (auto [i, p] : llvm::enumerate(t.getPerm())) inv[p] = static_cast<int64_t>(i);
    out[0] = gb.transpose(d, inv);
    return success();
  }
  if (isa<ReshapeOp>(op)) {
    out[0] = gb.reshape(d, GradBuilder::shapeOf(op->getOperand(0)));
    return success();
  }
  if (auto s = dyn_cast<SliceOp>(op)) return sliceRule(s, d, out, gb);
  if (auto p = dyn_cast<PadOp>(op)) {
    auto in = GradBuilder::shapeOf(p.getInput());
    out[0] = gb.slice(d, p.getLow(), SmallVector<int64_t>(in.size(), 1), in);
    return success();
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    const int64_t dim = static_cast<int64_t>(c.getDim());
    int64_t at = 0;
    for (auto [i, v] : llvm::enumerate(c.getInputs())) {
      auto shape = GradBuilder::shapeOf(v);
      SmallVector<int64_t> offsets(shape.size(), 0);
      offsets[dim] = at;
      at += shape[dim];
      if (isDifferentiable(v.getType())) out[i] = gb.slice(d, offsets, SmallVector<int64_t>(shape.size(), 1), shape);
    }
    return success();
  }
  if (auto b = dyn_cast<BroadcastInDimOp>(op)) return broadcastInDimRule(b, d, out, gb);
  if (auto g = dyn_cast<GatherOp>(op)) return gatherRule(g, d, out, gb);
  if (auto dq = dyn_cast<DequantizeOp>(op)) return dequantizeRule(dq, d, out, gb);
  op->emitOpError() << "has no VJP rule: --tessera-grad cannot differentiate through it "
                    << "(docs/autodiff.md lists the ops it can)";
  return failure();
}

}  // namespace tessera::graph::grad
