//===- Grad.cpp - --tessera-grad: the reverse sweep ----------------------===//
//
// One reverse pass over a clone of the function: each op whose results
// carry cotangents hands them to its VJP rule (GradRules.cpp), and the
// contributions to each operand are summed. The forward values stay live
// for the backward ops that read them (nothing is recomputed except the
// statistics the rules rebuild).
//
// SPMD functions (docs/spmd.md) differentiate the way JAX's shard_map
// does. A value is *varying* over a mesh axis when the devices along it
// hold different values (an argument sharded or partial over it, and what
// is computed from one); an all_reduce / all_gather makes it invariant
// again. Where an op reads an invariant operand and yields a varying
// result (the implicit broadcast of a replicated value), the operand's
// cotangent is a *partial sum* over those axes: it is kept as such
// (Cotangent::partial) until something needs its value, and only then
// all-reduced, so that
//   - data-parallel gradients of replicated weights get one all_reduce;
//   - all_gather transposes to reduce_scatter (no all_reduce first), and
//     reduce_scatter to all_gather;
//   - all_reduce(sum) transposes to the identity.
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/Grad.h"

#include <cmath>
#include <numeric>
#include <set>

#include "GradBuilder.h"
#include "GraphToSchedule.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

namespace tessera::graph {
#define GEN_PASS_DEF_GRAD
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

namespace tessera::graph {

using namespace mlir;

namespace {

using AxisSet = std::set<std::string>;

struct Cotangent {
  Value value;
  AxisSet partial;  // the devices along these axes hold addends of it
};

AxisSet varyingOfArgument(func::FuncOp fn, unsigned i) {
  AxisSet out;
  auto shard = fn.getArgAttrOfType<ShardAttr>(i, kShardingAttr);
  if (!shard) return out;
  for (unsigned d = 0; d < shard.getDims().size(); ++d)
    for (StringRef a : shard.getDimAxes(d)) out.insert(a.str());
  for (Attribute a : shard.getReduce())
    if (auto s = a.dyn_cast<StringAttr>()) out.insert(s.str());
  return out;
}

AxisSet axesOf(Operation* op) {
  AxisSet out;
  if (auto axes = op->getAttrOfType<ArrayAttr>("axes"))
    for (Attribute a : axes)
      if (auto s = a.dyn_cast<StringAttr>()) out.insert(s.str());
  return out;
}

/// The attention chain `op` (a matmul) ends, when its VJP can be one
/// attention_grad (which reads a row-major K^T).
std::optional<AttentionChain> attentionEndingAt(Operation* op) {
  auto pv = dyn_cast<MatmulOp>(op);
  auto sm = pv ? pv.getLhs().getDefiningOp<SoftmaxOp>() : SoftmaxOp();
  if (!sm) return std::nullopt;
  std::optional<AttentionChain> chain = analyzeAttention(sm);
  if (!chain || chain->pv != pv || !isRowMajor(chain->keyT().getType())) return std::nullopt;
  return chain;
}

class Sweep {
 public:
  Sweep(func::FuncOp fn, MeshOp mesh, OpBuilder& b) : fn_(fn), mesh_(mesh), b_(b), gb_(b) {}

  LogicalResult run(ArrayRef<unsigned> wrt, SmallVectorImpl<Value>& grads, double lossScale, Value* finite);

 private:
  Value allReduce(Value v, const AxisSet& axes);
  Value materialize(const Cotangent& c) { return allReduce(c.value, c.partial); }
  void accumulate(Value primal, Cotangent c);
  LogicalResult collective(Operation* op, const Cotangent& dy, SmallVectorImpl<Cotangent>& out);
  ArrayAttr axesAttr(const AxisSet& axes);
  int64_t groupSize(Operation* op);

  func::FuncOp fn_;
  MeshOp mesh_;
  OpBuilder& b_;
  grad::GradBuilder gb_;
  DenseMap<Value, AxisSet> varying_;
  DenseMap<Value, Cotangent> cot_;
};

ArrayAttr Sweep::axesAttr(const AxisSet& axes) {
  // In the mesh's order (any order sums the same; this one is stable).
  SmallVector<Attribute> out;
  for (Attribute a : mesh_.getAxes())
    if (axes.count(a.cast<StringAttr>().str())) out.push_back(a);
  return b_.getArrayAttr(out);
}

int64_t Sweep::groupSize(Operation* op) {
  int64_t n = 1;
  for (const std::string& a : axesOf(op)) n *= mesh_.axisSize(a);
  return n;
}

Value Sweep::allReduce(Value v, const AxisSet& axes) {
  if (axes.empty()) return v;
  return b_.create<AllReduceOp>(gb_.loc(), v.getType(), v, mesh_.getSymName(), axesAttr(axes), ReduceKind::sum);
}

void Sweep::accumulate(Value primal, Cotangent c) {
  auto it = cot_.find(primal);
  if (it == cot_.end()) {
    cot_[primal] = std::move(c);
    return;
  }
  Cotangent& have = it->second;
  if (have.partial != c.partial) {  // different addends: sum each first
    have.value = materialize(have);
    have.partial.clear();
    c.value = materialize(c);
  }
  have.value = gb_.add(have.value, c.value);
}

// The transposes of the collectives; `dy` may be a partial sum.
LogicalResult Sweep::collective(Operation* op, const Cotangent& dy, SmallVectorImpl<Cotangent>& out) {
  const AxisSet axes = axesOf(op);
  AxisSet inside, outside;  // dy's partial axes within / beyond the op's
  for (const std::string& a : dy.partial) (axes.count(a) ? inside : outside).insert(a);
  Type inType = gb_.cotangentType(op->getOperand(0));
  auto opAxes = op->getAttrOfType<ArrayAttr>("axes");
  // max / min over the group: the cotangent goes to the ranks whose x is
  // the extremum, shared equally among ties (as reduce max does within a
  // tensor): dx = dY * [x == y] / (how many ranks hold y), with dY the whole
  // cotangent of y and the count an all_reduce sum of the hits.
  auto toExtremum = [&](Value x, Value y, Value whole) {
    Value hit = gb_.compare(ComparePredicate::eq, x, y);
    const auto shape = grad::GradBuilder::shapeOf(x);
    Value ones = gb_.select(hit, gb_.splat(shape, 1.0), gb_.splat(shape, 0.0));
    Value count = b_.create<AllReduceOp>(gb_.loc(), ones.getType(), ones, mesh_.getSymName(), opAxes, ReduceKind::sum);
    return gb_.div(gb_.mul(whole, ones), count);
  };
  if (auto ar = dyn_cast<AllReduceOp>(op)) {
    if (ar.getKind() == ReduceKind::mean) {
      op->emitOpError() << "has no VJP rule for `mean`";
      return failure();
    }
    Value whole = allReduce(dy.value, inside);
    if (ar.getKind() == ReduceKind::sum) {
      // y = sum of the group's x: each x gets the whole of dy.
      out[0] = {whole, outside};
      return success();
    }
    out[0] = {toExtremum(gb_.primal(ar.getInput()), gb_.primal(ar.getResult()), whole), outside};
    return success();
  }
  if (auto ag = dyn_cast<AllGatherOp>(op)) {
    Value v;
    if (inside == axes) {  // dy is the group's sum: reduce_scatter is it
      v = b_.create<ReduceScatterOp>(gb_.loc(), inType, dy.value, mesh_.getSymName(), opAxes, ReduceKind::sum,
                                     ag.getDim());
    } else {  // every rank holds the same dy: its own part of the group's sum / group size
      Value whole = allReduce(dy.value, inside);
      v = b_.create<ReduceScatterOp>(gb_.loc(), inType, whole, mesh_.getSymName(), opAxes, ReduceKind::sum,
                                     ag.getDim());
      v = gb_.scale(v, 1.0 / static_cast<double>(groupSize(op)));
    }
    out[0] = {v, outside};
    return success();
  }
  if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
    if (rs.getKind() == ReduceKind::mean) {
      op->emitOpError() << "has no VJP rule for `mean`";
      return failure();
    }
    Value whole = allReduce(dy.value, inside);
    Value gathered = b_.create<AllGatherOp>(gb_.loc(), inType, whole, mesh_.getSymName(), opAxes, rs.getDim());
    if (rs.getKind() == ReduceKind::sum) {
      out[0] = {gathered, outside};
      return success();
    }
    // max / min: every rank's part of the result, gathered, tells each x
    // element whether it is its block's extremum.
    Value y = b_.create<AllGatherOp>(gb_.loc(), inType, gb_.primal(rs.getResult()), mesh_.getSymName(), opAxes,
                                     rs.getDim());
    out[0] = {toExtremum(gb_.primal(rs.getInput()), y, gathered), outside};
    return success();
  }
  if (auto bc = dyn_cast<BroadcastOp>(op)) {
    // y = the root's x on every device: the root's x gets the whole of
    // dy, the others' nothing. A device learns its rank in the group from
    // a reduce_scatter of [0, 1, .., P-1] (P * rank: exact in f32).
    const int64_t p = groupSize(op);
    Value whole = allReduce(dy.value, inside);
    Value iota = b_.create<IotaOp>(gb_.loc(), gb_.f32({p}), 0);
    Value pr = b_.create<ReduceScatterOp>(gb_.loc(), gb_.f32({1}), iota, mesh_.getSymName(), opAxes,
                                          ReduceKind::sum, 0);
    Value isRoot = gb_.compare(ComparePredicate::eq, pr,
                               gb_.splat({1}, static_cast<double>(p) * static_cast<double>(bc.getRoot())));
    out[0] = {gb_.select(isRoot, whole, gb_.zerosLike(whole)), outside};
    return success();
  }
  op->emitOpError() << "has no VJP rule";
  return failure();
}

LogicalResult Sweep::run(ArrayRef<unsigned> wrt, SmallVectorImpl<Value>& grads, double lossScale, Value* finite) {
  Block& body = fn_.getBody().front();
  Operation* ret = body.getTerminator();
  // Forward: which values vary over which mesh axes, which are active
  // (computed from an argument in `wrt`).
  DenseSet<Value> active;
  for (unsigned i : wrt) active.insert(fn_.getArgument(i));
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) varying_[fn_.getArgument(i)] = varyingOfArgument(fn_, i);
  SmallVector<Operation*> ops;
  for (Operation& op : body.without_terminator()) {
    ops.push_back(&op);
    AxisSet v;
    bool anyActive = false;
    for (Value o : op.getOperands()) {
      const AxisSet& ov = varying_[o];
      v.insert(ov.begin(), ov.end());
      anyActive |= active.count(o) > 0;
    }
    if (isa<AllReduceOp, AllGatherOp, BroadcastOp>(op))
      for (const std::string& a : axesOf(&op)) v.erase(a);
    else if (isa<ReduceScatterOp>(op))
      for (const std::string& a : axesOf(&op)) v.insert(a);
    for (Value r : op.getResults()) {
      varying_[r] = v;
      if (anyActive && grad::isDifferentiable(r.getType())) active.insert(r);
    }
  }
  // Backward, appended before the return.
  b_.setInsertionPoint(ret);
  gb_.setLoc(fn_.getLoc());
  Value loss = ret->getOperand(0);
  cot_[loss] = {gb_.splat(gb_.shapeOf(loss), lossScale), {}};
  for (Operation* op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getOperands(), [&](Value o) { return active.count(o) > 0; })) continue;
    SmallVector<Cotangent> dres;
    bool any = false;
    for (Value r : op->getResults()) {
      auto it = cot_.find(r);
      dres.push_back(it == cot_.end() ? Cotangent{} : it->second);
      any |= it != cot_.end();
    }
    if (!any) continue;
    gb_.setLoc(op->getLoc());
    if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, BroadcastOp>(op)) {
      SmallVector<Cotangent> out(1);
      if (failed(collective(op, dres[0], out))) return failure();
      if (active.count(op->getOperand(0))) accumulate(op->getOperand(0), out[0]);
      continue;
    }
    SmallVector<Value> ds, operands(op->getOperands()), out(op->getNumOperands());
    for (const Cotangent& c : dres) ds.push_back(c.value ? materialize(c) : Value());
    if (std::optional<AttentionChain> att = attentionEndingAt(op)) {
      // The whole chain's VJP at once (attention_grad: blockwise, no score
      // matrix); its inner values (scores, probabilities) get no cotangent,
      // so their ops are skipped.
      operands = {att->query(), att->keyT(), att->value()};
      auto g = b_.create<AttentionGradOp>(gb_.loc(), att->query(), att->keyT(), att->value(), op->getResult(0), ds[0],
                                          b_.getF32FloatAttr(static_cast<float>(att->scale)),
                                          att->causal ? b_.getUnitAttr() : UnitAttr());
      out.assign(g->getResults().begin(), g->getResults().end());
    } else if (failed(grad::vjp(op, ds, out, gb_))) {
      return failure();
    }
    AxisSet resultVarying;
    for (Value r : op->getResults()) resultVarying.insert(varying_[r].begin(), varying_[r].end());
    for (auto [o, c] : llvm::zip(operands, out)) {
      if (!c || !active.count(o)) continue;
      // An invariant operand read into a varying result: partial sums.
      AxisSet partial;
      for (const std::string& a : resultVarying)
        if (!varying_[o].count(a)) partial.insert(a);
      accumulate(o, {c, partial});
    }
  }
  gb_.setLoc(fn_.getLoc());
  // Overflow detection: g - g is 0 where g is finite and NaN where it is
  // inf or NaN; their sums over every gradient (and every device) are 0
  // exactly when all are finite.
  Value bad = finite ? gb_.splat({1}, 0.0) : Value();
  for (unsigned i : wrt) {
    Value arg = fn_.getArgument(i);
    auto it = cot_.find(arg);
    Value g = it == cot_.end() ? gb_.zerosLike(arg) : materialize(it->second);
    if (lossScale != 1.0) g = gb_.scale(g, 1.0 / lossScale);  // the scale removed, in f32
    if (finite) {
      const auto shape = grad::GradBuilder::shapeOf(g);
      SmallVector<int64_t> all(shape.size());
      std::iota(all.begin(), all.end(), 0);
      Value nan = gb_.sub(g, g);
      Value sum = all.empty() ? nan : gb_.reduce(ReduceKind::sum, nan, all, /*keep=*/true);
      bad = gb_.add(bad, gb_.reshape(sum, {1}));
    }
    grads.push_back(gb_.castTo(g, arg.getType()));
  }
  if (finite) {
    if (mesh_) {
      AxisSet every;
      for (Attribute a : mesh_.getAxes()) every.insert(a.cast<StringAttr>().str());
      bad = allReduce(bad, every);
    }
    *finite = gb_.compare(ComparePredicate::eq, bad, gb_.splat({1}, 0.0));
  }
  return success();
}

void inlineCall(func::CallOp call, func::FuncOp callee) {
  IRMapping map;
  Block& body = callee.getBody().front();
  for (auto [a, v] : llvm::zip(body.getArguments(), call.getOperands())) map.map(a, v);
  OpBuilder b(call);
  for (Operation& op : body.without_terminator()) b.clone(op, map);
  for (auto [r, v] : llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
    r.replaceAllUsesWith(map.lookupOrDefault(v));
  call.erase();
}

bool isGraphFunction(func::FuncOp f) {
  auto tensor = [](Type t) { return t.isa<TensorType>(); };
  return llvm::any_of(f.getArgumentTypes(), tensor) || llvm::any_of(f.getResultTypes(), tensor);
}

}  // namespace

FailureOr<func::FuncOp> buildGradient(func::FuncOp fn, ArrayRef<unsigned> wrt, StringRef name,
                                      const GradientOptions& options) {
  if (fn.isExternal()) return fn.emitOpError("has no body to differentiate"), failure();
  if (!fn.getBody().hasOneBlock()) return fn.emitOpError("has several blocks; --tessera-grad takes one"), failure();
  if (fn.getNumResults() == 0) return fn.emitOpError("returns nothing: result 0 must be the loss"), failure();
  auto loss = fn.getResultTypes()[0].dyn_cast<RankedTensorType>();
  if (!loss || !loss.getElementType().isa<FloatType>() || loss.getNumElements() != 1)
    return fn.emitOpError() << "result 0 is " << fn.getResultTypes()[0]
                            << ": the loss --tessera-grad differentiates must be one float element "
                               "(e.g. tensor<1xf32>; reduce it with keepdims)",
           failure();
  for (unsigned i : wrt) {
    if (i >= fn.getNumArguments())
      return fn.emitOpError() << "wrt names argument " << i << ", and @" << fn.getName() << " has "
                              << fn.getNumArguments() << " (numbered from 0)",
             failure();
    if (!grad::isDifferentiable(fn.getArgumentTypes()[i]))
      return fn.emitOpError() << "wrt names argument " << i << " of type " << fn.getArgumentTypes()[i]
                              << ": only float tensors have gradients",
             failure();
  }
  FailureOr<MeshOp> mesh = findSpmdMesh(fn);
  if (failed(mesh)) return failure();
  auto module = fn->getParentOfType<ModuleOp>();
  auto g = cast<func::FuncOp>(fn->clone());
  g.setName(name);
  g->removeAttr(kCustomVjpAttr);
  g.setPublic();
  SymbolTable(module).insert(g, Block::iterator(fn->getNextNode()));
  // Calls of functions without a custom VJP are differentiated inside.
  for (int round = 0; round < 64; ++round) {
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    g.walk([&](func::CallOp c) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(c, c.getCalleeAttr());
      if (callee && !callee.isExternal() && !callee->hasAttr(kCustomVjpAttr) && callee.getBody().hasOneBlock())
        calls.push_back({c, callee});
    });
    if (calls.empty()) break;
    for (auto [c, callee] : calls) inlineCall(c, callee);
  }
  OpBuilder b(g.getContext());
  Sweep sweep(g, *mesh, b);
  SmallVector<Value> grads;
  DenseSet<Operation*> forward;
  for (Operation& op : g.getBody().front().without_terminator()) forward.insert(&op);
  if (!(options.lossScale > 0) || !std::isfinite(options.lossScale))
    return fn.emitOpError() << "loss scale " << options.lossScale << " must be a positive finite number", failure();
  Value finite;
  if (failed(sweep.run(wrt, grads, options.lossScale, options.finiteFlag ? &finite : nullptr))) {
    g.erase();
    return failure();
  }
  Operation* ret = g.getBody().front().getTerminator();
  SmallVector<Value> results(ret->getOperands());
  for (auto [k, i] : llvm::enumerate(wrt)) results.push_back(grads[k]);
  if (finite) results.push_back(finite);
  ret->setOperands(results);
  // The rules build every operand's cotangent; drop those nobody reads
  // (inactive operands, the seed of an empty `wrt`).
  SmallVector<Operation*> body;
  for (Operation& op : g.getBody().front().without_terminator()) body.push_back(&op);
  for (Operation* op : llvm::reverse(body))
    if (isOpTriviallyDead(op)) op->erase();
  // What the backward keeps of the forward: the bytes of the forward
  // values (arguments aside) that backward ops read.
  int64_t saved = 0;
  for (Operation& live : g.getBody().front().without_terminator()) {
    Operation* op = &live;
    if (!forward.count(op)) continue;
    for (Value r : op->getResults()) {
      auto t = r.getType().dyn_cast<RankedTensorType>();
      if (!t || isa<arith::ConstantOp>(op)) continue;
      if (llvm::any_of(r.getUsers(), [&](Operation* u) { return !forward.count(u) && !isa<func::ReturnOp>(u); }))
        saved += t.getNumElements() * std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
    }
  }
  g->setAttr(kSavedBytesAttr, b.getI64IntegerAttr(saved));
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    DictionaryAttr d = fn.getResultAttrDict(i);
    resultAttrs.push_back(d ? d : b.getDictionaryAttr({}));
  }
  for (unsigned i : wrt) {
    // A gradient has its argument's sharding.
    SmallVector<NamedAttribute> attrs;
    if (auto s = fn.getArgAttr(i, kShardingAttr)) attrs.push_back(b.getNamedAttr(kShardingAttr, s));
    resultAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  if (finite) resultAttrs.push_back(b.getDictionaryAttr({}));
  SmallVector<Type> types;
  for (Value v : results) types.push_back(v.getType());
  g.setType(FunctionType::get(g.getContext(), g.getArgumentTypes(), types));
  g.setAllResultAttrs(resultAttrs);
  return g;
}

bool hasGradientDeclarations(ModuleOp module) {
  bool found = false;
  module.walk([&](func::FuncOp f) { found |= f->hasAttr(kGradOfAttr); });
  return found;
}

namespace {

/// Fails (with the cycle named on a call) when calls between Graph IR
/// functions form a cycle.
LogicalResult rejectRecursiveGraphCalls(ModuleOp module) {
  // The calls of each Graph function to other Graph functions with a body.
  llvm::DenseMap<Operation *, SmallVector<std::pair<func::CallOp, func::FuncOp>>> calls;
  module.walk([&](func::CallOp c) {
    auto caller = c->getParentOfType<func::FuncOp>();
    auto callee = module.lookupSymbol<func::FuncOp>(c.getCallee());
    if (caller && callee && !callee.isExternal() && isGraphFunction(caller) && isGraphFunction(callee))
      calls[caller].push_back({c, callee});
  });
  // Iterative depth-first search: 0 unseen, 1 on the path, 2 done.
  llvm::DenseMap<Operation *, int> state;
  SmallVector<func::FuncOp> path;
  // (`calls` is only read below: an insertion would move its entries.)
  static const SmallVector<std::pair<func::CallOp, func::FuncOp>> kNone;
  auto callsOf = [&](Operation *f) -> const SmallVector<std::pair<func::CallOp, func::FuncOp>> & {
    auto it = calls.find(f);
    return it == calls.end() ? kNone : it->second;
  };
  // Roots in the module's order (not the map's, which follows addresses):
  // the cycle named is the same on every run.
  for (func::FuncOp root : module.getOps<func::FuncOp>()) {
    if (!calls.count(root) || state[root]) continue;
    SmallVector<std::pair<func::FuncOp, size_t>> stack{{root, 0}};
    state[root] = 1;
    path.assign({root});
    while (!stack.empty()) {
      auto &[fn, next] = stack.back();
      const auto &out = callsOf(fn);
      if (next == out.size()) {
        state[fn] = 2;
        stack.pop_back();
        path.pop_back();
        continue;
      }
      auto [call, callee] = out[next++];
      int &s = state[callee];
      if (s == 1) {
        std::string cycle;
        bool on = false;
        for (func::FuncOp f : path) {
          on |= f == callee;
          if (on) cycle += "@" + f.getName().str() + " -> ";
        }
        return call.emitOpError() << "calls between Graph IR functions form a cycle (" << cycle << "@"
                                  << callee.getName() << "): Tessera inlines every call, so a program may not "
                                  << "recurse";
      }
      if (s == 0) {
        s = 1;
        stack.push_back({callee, 0});
        path.push_back(callee);
      }
    }
  }
  return success();
}

}  // namespace

LogicalResult expandGradients(ModuleOp module) {
  bool changed = false;
  SmallVector<func::FuncOp> decls;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr(kGradOfAttr)) decls.push_back(f);
  });
  for (func::FuncOp decl : decls) {
    auto of = decl->getAttrOfType<FlatSymbolRefAttr>(kGradOfAttr);
    if (!of) return decl.emitOpError() << "`" << kGradOfAttr.str() << "` must name a function (@f)";
    if (!decl.isExternal())
      return decl.emitOpError() << "declares the gradient of @" << of.getValue()
                                << " and has a body: a gradient declaration has none";
    auto fn = module.lookupSymbol<func::FuncOp>(of.getValue());
    if (!fn) return decl.emitOpError() << "is the gradient of @" << of.getValue() << ", and there is no such function";
    SmallVector<unsigned> wrt;
    if (Attribute a = decl->getAttr(kWrtAttr)) {
      auto list = a.dyn_cast<ArrayAttr>();
      if (!list) return decl.emitOpError() << "`" << kWrtAttr.str() << "` must be a list of argument numbers ([0, 2])";
      for (Attribute e : list) {
        auto n = e.dyn_cast<IntegerAttr>();
        if (!n || n.getInt() < 0)
          return decl.emitOpError() << "`" << kWrtAttr.str() << "` must be a list of argument numbers ([0, 2])";
        wrt.push_back(static_cast<unsigned>(n.getInt()));
      }
    } else {
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (grad::isDifferentiable(fn.getArgumentTypes()[i])) wrt.push_back(i);
    }
    GradientOptions options;
    if (Attribute a = decl->getAttr(kLossScaleAttr)) {
      auto f = a.dyn_cast<FloatAttr>();
      if (!f) return decl.emitOpError() << "`" << kLossScaleAttr.str() << "` must be a float (1024.0)";
      options.lossScale = f.getValueAsDouble();
    }
    // A last result of tensor<1xi1> beyond the gradients asks for the
    // finite flag.
    if (decl.getNumResults() == fn.getNumResults() + wrt.size() + 1) {
      auto last = decl.getResultTypes().back().dyn_cast<RankedTensorType>();
      options.finiteFlag = last && last.getElementType().isInteger(1) && last.getShape() == ArrayRef<int64_t>{1};
    }
    FailureOr<func::FuncOp> g = buildGradient(fn, wrt, (decl.getName() + "__built").str(), options);
    if (failed(g)) return decl.emitOpError() << "cannot be built (see the error above)";
    if (g->getFunctionType() != decl.getFunctionType()) {
      auto want = g->getFunctionType();
      g->erase();
      return decl.emitOpError() << "is declared " << decl.getFunctionType() << "; the gradient of @"
                                << fn.getName() << " with respect to the arguments listed is " << want
                                << " (its results, then one gradient per argument in `wrt`, then optionally "
                                   "tensor<1xi1>: every gradient finite)";
    }
    decl.getBody().takeBody(g->getBody());
    // The forward's argument attributes (shardings) and the gradient's
    // result attributes, where the declaration gives none.
    auto given = [](DictionaryAttr d) { return d && !d.empty(); };
    for (unsigned i = 0; i < decl.getNumArguments(); ++i)
      if (!given(decl.getArgAttrDict(i)) && given(g->getArgAttrDict(i))) decl.setArgAttrs(i, g->getArgAttrDict(i));
    for (unsigned i = 0; i < decl.getNumResults(); ++i)
      if (!given(decl.getResultAttrDict(i)) && given(g->getResultAttrDict(i)))
        decl.setResultAttrs(i, g->getResultAttrDict(i));
    decl->setAttr(kSavedBytesAttr, (*g)->getAttr(kSavedBytesAttr));
    decl->removeAttr(kGradOfAttr);
    decl->removeAttr(kWrtAttr);
    decl->removeAttr(kLossScaleAttr);
    // A gradient nothing calls is an entry point of its own: public (a
    // declaration had to be private), kept.
    if (SymbolTable::symbolKnownUseEmpty(decl, module)) decl.setPublic();
    g->erase();
    changed = true;
  }
  // Inline every call between Graph IR functions: the backends compile
  // one function of plain Graph IR.  Recursion cannot be inlined: mutually
  // recursive functions grew the module each round (gigabytes in seconds).
  if (failed(rejectRecursiveGraphCalls(module))) return failure();
  for (int round = 0; round < 64; ++round) {
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    module.walk([&](func::CallOp c) {
      auto caller = c->getParentOfType<func::FuncOp>();
      auto callee = module.lookupSymbol<func::FuncOp>(c.getCallee());
      if (caller && callee && !callee.isExternal() && callee.getBody().hasOneBlock() && isGraphFunction(caller) &&
          isGraphFunction(callee))
        calls.push_back({c, callee});
    });
    if (calls.empty()) break;
    for (auto [c, callee] : calls) inlineCall(c, callee);
    changed = true;
  }
  if (!changed) return success();
  // Private functions nobody calls any more (the forward halves).
  for (bool erased = true; erased;) {
    erased = false;
    for (func::FuncOp f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (f.isPrivate() && SymbolTable::symbolKnownUseEmpty(f, module)) {
        f.erase();
        erased = true;
      }
  }
  return success();
}

namespace {

struct GradPass : impl::GradBase<GradPass> {
  using GradBase::GradBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (function.empty()) {
      if (failed(expandGradients(module))) signalPassFailure();
      return;
    }
    auto fn = module.lookupSymbol<func::FuncOp>(function);
    if (!fn) {
      module.emitError() << "--tessera-grad: no function @" << function;
      return signalPassFailure();
    }
    SmallVector<unsigned> args(wrt.begin(), wrt.end());
    if (args.empty())
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (grad::isDifferentiable(fn.getArgumentTypes()[i])) args.push_back(i);
    std::string name = gradName.empty() ? function + "_grad" : std::string(gradName);
    if (module.lookupSymbol(name)) {
      module.emitError() << "--tessera-grad: @" << name << " exists already (pick another with name=...)";
      return signalPassFailure();
    }
    GradientOptions options;
    options.lossScale = lossScale;
    options.finiteFlag = finiteFlag;
    if (failed(buildGradient(fn, args, name, options))) signalPassFailure();
  }
};

}  // namespace

}  // namespace tessera::graph
