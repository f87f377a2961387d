//===- ShardPropagation.cpp - global-view programs made SPMD --------------===//
//
// A function marked `tessera.global_view` is written on global tensors, with
// shardings (docs/spmd.md) only on its arguments and results. This pass
// decides the sharding of every intermediate, one op at a time in program
// order, rewrites every type to the local type one device holds, and
// inserts the collectives that the decisions need, so that the result is an
// ordinary SPMD function for --tessera-spmd-stages (docs/spmd.md, "Automatic
// sharding").
//
// The rules keep data where it is and communicate only where an op needs
// it (the Megatron MLP gets exactly one all_reduce):
//  - elementwise ops: each dim keeps the axis its operands agree on; an
//    operand sharded where another holds the whole dim is all-gathered;
//    partial sums pass through add/sub (of equal partials), mul/div by a
//    value that is not partial, neg; anything else all-reduces them first;
//  - matmul: M and N keep their shardings; K sharded on both sides over
//    the same axis makes the result a partial sum over it (no collective);
//    any other K sharding is all-gathered;
//  - reduce sum / mean over a sharded dim: a partial sum (mean scaled by
//    1 / axis size); max / min: the local reduction then an all_reduce;
//  - softmax and the norms need their dim whole (all-gathered);
//  - the data-movement ops and the rest compute on replicated operands;
//  - a stochastic cast of a partitioned tensor gets the device's
//    mesh_position and the global strides, so that its random bits are
//    keyed by the global index, as in the single-device program;
//  - at the return, each value is brought to its declared sharding:
//    partial -> reduce_scatter (when the result is sharded over the same
//    axis) or all_reduce; sharded -> all_gather; replicated -> sharded by
//    each device keeping its part (a reduce_scatter of equal copies
//    divided by the group size: exact when the size is a power of two).
// Each rewritten op carries its decision as `tessera_graph.sharding`.
//===----------------------------------------------------------------------===//
#include <set>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

namespace tessera::graph {
#define GEN_PASS_DEF_SHARDPROPAGATION
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

namespace tessera::graph {

using namespace mlir;

namespace {

struct Sharding {
  SmallVector<std::string> dims;  // per dim: the mesh axis, or ""
  std::set<std::string> partial;  // axes holding partial sums
};

class Propagator {
 public:
  Propagator(func::FuncOp fn, MeshOp mesh, bool annotate)
      : fn_(fn), mesh_(mesh), b_(fn.getContext()), annotate_(annotate) {}
  FailureOr<func::FuncOp> run();

 private:
  int64_t axisSize(const std::string& a) { return a.empty() ? 1 : mesh_.axisSize(a); }
  FailureOr<RankedTensorType> localType(Operation* at, RankedTensorType global, const Sharding& s);
  Sharding fromAttr(ShardAttr attr, int64_t rank);
  ShardAttr toAttr(const Sharding& s);
  ArrayAttr axes(const std::set<std::string>& a);
  ArrayAttr axis(const std::string& a) { return b_.getArrayAttr({b_.getStringAttr(a)}); }

  // The collectives, on the new (local) values; each updates `s`.
  Value allReduce(Value v, Sharding& s);
  Value gatherDim(Value v, Sharding& s, unsigned d);
  Value replicate(Value v, Sharding& s);
  Value scatterDim(Value v, Sharding& s, unsigned d, const std::string& a);

  LogicalResult visit(Operation* op);
  LogicalResult elementwise(Operation* op);
  LogicalResult matmul(MatmulOp op);
  LogicalResult reduce(ReduceOp op);
  LogicalResult rowOp(Operation* op, int64_t dim);
  LogicalResult replicated(Operation* op);
  LogicalResult stochasticCast(CastOp op);
  // The device's tessera_graph.mesh_position, made once at the entry.
  Value position();
  // Clones `op` on `operands` with its result typed for `s`, records it.
  LogicalResult emit(Operation* op, ArrayRef<Value> operands, const Sharding& s);

  func::FuncOp fn_;
  MeshOp mesh_;
  OpBuilder b_;
  bool annotate_;  // record each decision on its op
  Location loc_ = UnknownLoc::get(fn_.getContext());
  DenseMap<Value, Value> local_;        // old value -> new (local) value
  DenseMap<Value, Sharding> sharding_;  // new value -> its sharding
  Value position_;                      // position(), once made
};

FailureOr<RankedTensorType> Propagator::localType(Operation* at, RankedTensorType global, const Sharding& s) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [d, a] : llvm::enumerate(s.dims)) {
    if (a.empty()) continue;
    const int64_t n = axisSize(a);
    if (shape[d] % n != 0)
      return at->emitOpError() << "dim " << d << " of " << global << " (size " << shape[d]
                               << ") does not divide over mesh axis '" << a << "' of size " << n,
             failure();
    shape[d] /= n;
  }
  return RankedTensorType::get(shape, global.getElementType(), global.getEncoding());
}

Sharding Propagator::fromAttr(ShardAttr attr, int64_t rank) {
  Sharding s;
  s.dims.assign(rank, "");
  if (!attr) return s;
  for (auto [d, a] : llvm::enumerate(attr.getDims()))
    if (d < static_cast<size_t>(rank)) s.dims[d] = a.cast<StringAttr>().str();
  for (Attribute a : attr.getReduce()) s.partial.insert(a.cast<StringAttr>().str());
  return s;
}

ArrayAttr Propagator::axes(const std::set<std::string>& a) {
  SmallVector<Attribute> out;
  for (Attribute m : mesh_.getAxes())
    if (a.count(m.cast<StringAttr>().str())) out.push_back(m);
  return b_.getArrayAttr(out);
}

ShardAttr Propagator::toAttr(const Sharding& s) {
  SmallVector<Attribute> dims;
  for (const std::string& a : s.dims) dims.push_back(b_.getStringAttr(a));
  return ShardAttr::get(b_.getContext(), FlatSymbolRefAttr::get(mesh_.getSymNameAttr()), b_.getArrayAttr(dims),
                        b_.getArrayAttr({}), axes(s.partial));
}

Value Propagator::allReduce(Value v, Sharding& s) {
  if (s.partial.empty()) return v;
  Value r = b_.create<AllReduceOp>(loc_, v.getType(), v, mesh_.getSymName(), axes(s.partial), ReduceKind::sum);
  s.partial.clear();
  sharding_[r] = s;
  return r;
}

Value Propagator::gatherDim(Value v, Sharding& s, unsigned d) {
  if (s.dims[d].empty()) return v;
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  shape[d] *= axisSize(s.dims[d]);
  Value r = b_.create<AllGatherOp>(loc_, RankedTensorType::get(shape, t.getElementType(), t.getEncoding()), v,
                                   mesh_.getSymName(), axis(s.dims[d]), d);
  s.dims[d] = "";
  sharding_[r] = s;
  return r;
}

Value Propagator::replicate(Value v, Sharding& s) {
  v = allReduce(v, s);
  for (unsigned d = 0; d < s.dims.size(); ++d) v = gatherDim(v, s, d);
  return v;
}

Value Propagator::scatterDim(Value v, Sharding& s, unsigned d, const std::string& a) {
  // Every device along `a` holds the same v: the reduce_scatter of equal
  // copies is n times each device's part.
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  const int64_t n = axisSize(a);
  shape[d] /= n;
  auto lt = RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
  Value r = b_.create<ReduceScatterOp>(loc_, lt, v, mesh_.getSymName(), axis(a), ReduceKind::sum, d);
  if (n != 1) {
    auto splat = DenseElementsAttr::get(RankedTensorType::get({1}, t.getElementType()),
                                        b_.getFloatAttr(t.getElementType(), 1.0 / static_cast<double>(n)).cast<Attribute>());
    Value c = b_.create<arith::ConstantOp>(loc_, splat);
    r = b_.create<MulOp>(loc_, lt, r, c);
  }
  s.dims[d] = a;
  sharding_[r] = s;
  return r;
}

LogicalResult Propagator::emit(Operation* op, ArrayRef<Value> operands, const Sharding& s) {
  auto global = op->getResult(0).getType().cast<RankedTensorType>();
  FailureOr<RankedTensorType> lt = localType(op, global, s);
  if (failed(lt)) return failure();
  IRMapping map;
  for (auto [o, n] : llvm::zip(op->getOperands(), operands)) map.map(o, n);
  Operation* n = b_.clone(*op, map);
  n->getResult(0).setType(*lt);
  if (annotate_) n->setAttr(kShardingAttr, toAttr(s));
  local_[op->getResult(0)] = n->getResult(0);
  sharding_[n->getResult(0)] = s;
  return success();
}

// Operands and result of an elementwise op: numpy broadcasting aligns the
// operands' dims with the result's last ones.
LogicalResult Propagator::elementwise(Operation* op) {
  auto rt = op->getResult(0).getType().cast<RankedTensorType>();
  const int64_t rank = rt.getRank();
  SmallVector<Value> vals;
  SmallVector<Sharding> shs;
  for (Value o : op->getOperands()) {
    vals.push_back(local_[o]);
    shs.push_back(sharding_[local_[o]]);
  }
  Sharding out;
  out.dims.assign(rank, "");
  for (int64_t d = 0; d < rank; ++d) {
    // The operands that hold this dim whole-sized (not broadcast).
    std::string agreed;
    bool conflict = false, first = true;
    for (auto [i, o] : llvm::enumerate(op->getOperands())) {
      auto ot = o.getType().cast<RankedTensorType>();
      const int64_t od = d - (rank - ot.getRank());
      if (od < 0 || ot.getDimSize(od) != rt.getDimSize(d)) continue;
      const std::string& a = shs[i].dims[od];
      if (first) agreed = a, first = false;
      else if (a != agreed) conflict = true;
    }
    for (auto [i, o] : llvm::enumerate(op->getOperands())) {
      auto ot = o.getType().cast<RankedTensorType>();
      const int64_t od = d - (rank - ot.getRank());
      if (od < 0) continue;
      // Broadcast (size-1) dims and conflicting ones are made whole.
      if (conflict || ot.getDimSize(od) != rt.getDimSize(d)) vals[i] = gatherDim(vals[i], shs[i], od);
    }
    if (!conflict) out.dims[d] = agreed;
  }
  // Partial sums: what stays linear.
  bool anyPartial = llvm::any_of(shs, [](const Sharding& s) { return !s.partial.empty(); });
  if (anyPartial) {
    bool keep = false;
    if (isa<AddOp, SubOp>(op)) {
      keep = llvm::all_of(shs, [&](const Sharding& s) { return s.partial == shs[0].partial; });
    } else if (isa<NegOp>(op)) {
      keep = true;
    } else if (isa<MulOp>(op)) {
      keep = shs[0].partial.empty() != shs[1].partial.empty();
    } else if (isa<DivOp>(op)) {
      keep = shs[1].partial.empty();
    }
    if (keep) {
      for (const Sharding& s : shs) out.partial.insert(s.partial.begin(), s.partial.end());
    } else {
      for (size_t i = 0; i < vals.size(); ++i) vals[i] = allReduce(vals[i], shs[i]);
    }
  }
  return emit(op, vals, out);
}

LogicalResult Propagator::matmul(MatmulOp op) {
  Value a = local_[op.getLhs()], b = local_[op.getRhs()];
  Sharding sa = sharding_[a], sb = sharding_[b];
  a = allReduce(a, sa);
  b = allReduce(b, sb);
  const unsigned r = sa.dims.size();
  // Batch dims: agree or gather both.
  for (unsigned d = 0; d + 2 < r; ++d)
    if (sa.dims[d] != sb.dims[d]) {
      a = gatherDim(a, sa, d);
      b = gatherDim(b, sb, d);
    }
  // K: sharded alike on both sides -> a partial sum; otherwise whole.
  Sharding out;
  if (sa.dims[r - 1] != sb.dims[r - 2]) {
    a = gatherDim(a, sa, r - 1);
    b = gatherDim(b, sb, r - 2);
  } else if (!sa.dims[r - 1].empty()) {
    out.partial.insert(sa.dims[r - 1]);
  }
  // M and N over the same axis cannot both stay.
  if (!sa.dims[r - 2].empty() && sa.dims[r - 2] == sb.dims[r - 1]) b = gatherDim(b, sb, r - 1);
  for (unsigned d = 0; d + 2 < r; ++d) out.dims.push_back(sa.dims[d]);
  out.dims.push_back(sa.dims[r - 2]);
  out.dims.push_back(sb.dims[r - 1]);
  for (const std::string& x : out.dims)
    if (out.partial.count(x)) return replicated(op);  // an axis twice: keep it simple
  return emit(op, {a, b}, out);
}

LogicalResult Propagator::reduce(ReduceOp op) {
  Value v = local_[op.getInput()];
  Sharding s = sharding_[v];
  const ReduceKind kind = op.getKind();
  if (kind != ReduceKind::sum && kind != ReduceKind::mean) v = allReduce(v, s);
  std::set<std::string> over;  // reduced sharded dims' axes
  for (int64_t d : op.getDims())
    if (!s.dims[d].empty()) over.insert(s.dims[d]);
  Sharding out;
  out.partial = s.partial;
  const bool keep = op.keepsDims();
  for (unsigned d = 0; d < s.dims.size(); ++d) {
    const bool reduced = llvm::is_contained(op.getDims(), static_cast<int64_t>(d));
    if (!reduced) out.dims.push_back(s.dims[d]);
    else if (keep) out.dims.push_back("");
  }
  if (failed(emit(op, {v}, out))) return failure();
  if (over.empty()) return success();
  Value r = local_[op.getResult()];
  Sharding rs = sharding_[r];
  if (kind == ReduceKind::max || kind == ReduceKind::min) {
    // The local extrema, then the extremum over the devices.
    r = b_.create<AllReduceOp>(loc_, r.getType(), r, mesh_.getSymName(), axes(over), kind);
  } else {
    rs.partial.insert(over.begin(), over.end());
    if (annotate_) r.getDefiningOp()->setAttr(kShardingAttr, toAttr(rs));
    if (kind == ReduceKind::mean) {  // each local mean covers 1/n of the elements
      int64_t n = 1;
      for (const std::string& a : over) n *= axisSize(a);
      auto et = r.getType().cast<RankedTensorType>().getElementType();
      auto splat = DenseElementsAttr::get(RankedTensorType::get({1}, et),
                                          b_.getFloatAttr(et, 1.0 / static_cast<double>(n)).cast<Attribute>());
      Value c = b_.create<arith::ConstantOp>(loc_, splat);
      r = b_.create<MulOp>(loc_, r.getType(), r, c);
    }
  }
  local_[op.getResult()] = r;
  sharding_[r] = rs;
  return success();
}

// softmax / layernorm / rmsnorm: `dim` whole; the other operands (gamma,
// beta) replicated.
LogicalResult Propagator::rowOp(Operation* op, int64_t dim) {
  SmallVector<Value> vals;
  Value x = local_[op->getOperand(0)];
  Sharding s = sharding_[x];
  x = allReduce(x, s);
  x = gatherDim(x, s, static_cast<unsigned>(dim));
  vals.push_back(x);
  for (Value o : op->getOperands().drop_front()) {
    Value v = local_[o];
    Sharding os = sharding_[v];
    vals.push_back(replicate(v, os));
  }
  return emit(op, vals, s);
}

LogicalResult Propagator::replicated(Operation* op) {
  SmallVector<Value> vals;
  for (Value o : op->getOperands()) {
    Value v = local_[o];
    Sharding s = sharding_[v];
    vals.push_back(replicate(v, s));
  }
  Sharding out;
  out.dims.assign(op->getResult(0).getType().cast<RankedTensorType>().getRank(), "");
  return emit(op, vals, out);
}

Value Propagator::position() {
  if (position_) return position_;
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(b_.getInsertionBlock());
  position_ = b_.create<MeshPositionOp>(fn_.getLoc(), RankedTensorType::get({1}, b_.getI32Type()),
                                        mesh_.getSymName());
  sharding_[position_].dims.assign(1, "");
  return position_;
}

// A stochastic cast of a partitioned tensor keys its random bits by the
// element's index in the global tensor (so the bits are the single-device
// program's): the device's position and the global strides go with it.
LogicalResult Propagator::stochasticCast(CastOp op) {
  if (failed(elementwise(op))) return failure();
  Value local = local_[op.getResult()];
  const Sharding& s = sharding_[local];
  if (llvm::all_of(s.dims, [](const std::string& a) { return a.empty(); })) return success();
  auto global = op.getResult().getType().cast<RankedTensorType>();
  auto localType = local.getType().cast<RankedTensorType>();
  const int64_t rank = global.getRank();
  SmallVector<int64_t> strides = op.indexStrides();  // the global (row-major) tensor's
  SmallVector<int64_t> meshShape(mesh_.getShape()), offsets;
  for (Attribute axis : mesh_.getAxes()) {
    int64_t offset = 0;  // a device's first element per unit of its coordinate
    for (int64_t d = 0; d < rank; ++d)
      if (s.dims[d] == axis.cast<StringAttr>().getValue()) offset += localType.getDimSize(d) * strides[d];
    offsets.push_back(offset);
  }
  auto cast = cast_or_null<CastOp>(local.getDefiningOp());
  if (!cast) return op.emitOpError("lost its stochastic cast while placing it"), failure();
  cast.getPositionMutable().assign(position());
  cast.setGlobalStridesAttr(b_.getDenseI64ArrayAttr(strides));
  cast.setMeshShapeAttr(b_.getDenseI64ArrayAttr(meshShape));
  cast.setMeshOffsetsAttr(b_.getDenseI64ArrayAttr(offsets));
  return success();
}

LogicalResult Propagator::visit(Operation* op) {
  loc_ = op->getLoc();
  if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, BroadcastOp, MeshPositionOp>(op))
    return op->emitOpError() << "in a `tessera.global_view` function: collectives and mesh positions are what "
                                "--tessera-shard-propagation inserts; write the program on global tensors";
  if (auto c = dyn_cast<CastOp>(op); c && c.getPosition())
    return op->emitOpError() << "in a `tessera.global_view` function keys its random bits by the global index "
                                "already: leave out the mesh position, --tessera-shard-propagation adds it";
  if (auto c = dyn_cast<CastOp>(op); c && c.isStochastic()) return stochasticCast(c);
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isa<RankedTensorType>())
    return op->emitOpError() << "is not a Graph IR op on tensors: --tessera-shard-propagation cannot place it";
  if (auto mm = dyn_cast<MatmulOp>(op)) return matmul(mm);
  if (isElementwise(op)) return elementwise(op);
  if (auto r = dyn_cast<ReduceOp>(op)) return reduce(r);
  if (auto sm = dyn_cast<SoftmaxOp>(op)) return rowOp(op, static_cast<int64_t>(sm.getDim()));
  if (isa<LayerNormOp, RmsNormOp>(op))
    return rowOp(op, op->getOperand(0).getType().cast<RankedTensorType>().getRank() - 1);
  return replicated(op);  // constants, data movement, argmax, layouts
}

FailureOr<func::FuncOp> Propagator::run() {
  Block& body = fn_.getBody().front();
  // The local signature.
  SmallVector<Type> args, results;
  SmallVector<Sharding> argS;
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
    auto t = fn_.getArgumentTypes()[i].cast<RankedTensorType>();
    Sharding s = fromAttr(fn_.getArgAttrOfType<ShardAttr>(i, kShardingAttr), t.getRank());
    FailureOr<RankedTensorType> lt = localType(fn_, t, s);
    if (failed(lt)) return failure();
    args.push_back(*lt);
    argS.push_back(s);
  }
  SmallVector<Sharding> resS;
  for (unsigned i = 0; i < fn_.getNumResults(); ++i) {
    auto t = fn_.getResultTypes()[i].cast<RankedTensorType>();
    Sharding s = fromAttr(fn_.getResultAttrOfType<ShardAttr>(i, kShardingAttr), t.getRank());
    FailureOr<RankedTensorType> lt = localType(fn_, t, s);
    if (failed(lt)) return failure();
    results.push_back(*lt);
    resS.push_back(s);
  }
  auto local = func::FuncOp::create(fn_.getLoc(), fn_.getName(), b_.getFunctionType(args, results));
  local->setAttrs(fn_->getAttrs());
  local->removeAttr(kGlobalViewAttr);
  local.setFunctionType(b_.getFunctionType(args, results));
  Block* entry = local.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
    local_[fn_.getArgument(i)] = entry->getArgument(i);
    sharding_[entry->getArgument(i)] = argS[i];
  }
  for (Operation& op : body.without_terminator())
    if (failed(visit(&op))) {
      local.erase();
      return failure();
    }
  // Each result to its declared sharding.
  SmallVector<Value> outs;
  loc_ = body.getTerminator()->getLoc();
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    Value x = local_[v];
    Sharding s = sharding_[x];
    const Sharding& want = resS[i];
    // Partial sums over an axis the result is sharded over: reduce_scatter.
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (!want.dims[d].empty() && s.partial.count(want.dims[d]) && s.dims[d].empty() && !want.partial.count(want.dims[d])) {
        auto t = x.getType().cast<RankedTensorType>();
        SmallVector<int64_t> shape(t.getShape());
        shape[d] /= axisSize(want.dims[d]);
        x = b_.create<ReduceScatterOp>(loc_, RankedTensorType::get(shape, t.getElementType(), t.getEncoding()), x,
                                       mesh_.getSymName(), axis(want.dims[d]), ReduceKind::sum, d);
        s.partial.erase(want.dims[d]);
        s.dims[d] = want.dims[d];
      }
    std::set<std::string> extra;
    for (const std::string& a : s.partial)
      if (!want.partial.count(a)) extra.insert(a);
    if (!extra.empty()) {
      x = b_.create<AllReduceOp>(loc_, x.getType(), x, mesh_.getSymName(), axes(extra), ReduceKind::sum);
      for (const std::string& a : extra) s.partial.erase(a);
    }
    if (s.partial != want.partial)
      return fn_.emitOpError() << "result " << i << " is declared partial over axes its value is not; "
                                  "declare it replicated or sharded",
             failure();
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] != want.dims[d] && !s.dims[d].empty()) x = gatherDim(x, s, d);
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] != want.dims[d]) x = scatterDim(x, s, d, want.dims[d]);
    outs.push_back(x);
  }
  b_.create<func::ReturnOp>(loc_, outs);
  return local;
}

}  // namespace

LogicalResult propagateShardings(func::FuncOp fn, bool annotate) {
  MeshOp mesh;
  auto module = fn->getParentOfType<ModuleOp>();
  auto pick = [&](ShardAttr s) {
    if (s && !mesh) mesh = module.lookupSymbol<MeshOp>(s.getMesh().getValue());
  };
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) pick(fn.getArgAttrOfType<ShardAttr>(i, kShardingAttr));
  for (unsigned i = 0; i < fn.getNumResults(); ++i) pick(fn.getResultAttrOfType<ShardAttr>(i, kShardingAttr));
  if (!mesh)
    return fn.emitOpError() << "is marked `" << kGlobalViewAttr.str()
                            << "` but no argument or result names a mesh in its tessera_graph.sharding";
  if (!fn.getBody().hasOneBlock()) return fn.emitOpError("has several blocks");
  Propagator p(fn, mesh, annotate);
  FailureOr<func::FuncOp> local = p.run();
  if (failed(local)) return failure();
  fn->getBlock()->getOperations().insert(Block::iterator(fn), *local);
  StringAttr name = fn.getNameAttr();
  fn.erase();
  (*local).setName(name);
  return success();
}

LogicalResult propagateGlobalViewShardings(ModuleOp module, bool annotate) {
  SmallVector<func::FuncOp> fns;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr(kGlobalViewAttr)) fns.push_back(f);
  });
  for (func::FuncOp f : fns)
    if (failed(propagateShardings(f, annotate))) return failure();
  return success();
}

namespace {
struct ShardPropagationPass : impl::ShardPropagationBase<ShardPropagationPass> {
  void runOnOperation() override {
    if (failed(propagateGlobalViewShardings(getOperation(), /*annotate=*/true))) signalPassFailure();
  }
};
}  // namespace

}  // namespace tessera::graph
