//===- SpmdPlan.cpp - read the plan of an SPMD function -------------------===//
//
// The plan is the function `--tessera-spmd-stages` left behind: calls to
// its stages and the (flat) collectives between them. Reading checks
// everything a runner relies on, so a hand-edited plan gets a diagnostic
// rather than a wrong result.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tessera::graph;

namespace {

int axisIndex(MeshOp mesh, StringRef name) {
  for (auto [i, a] : llvm::enumerate(mesh.getAxes()))
    if (a.cast<StringAttr>().getValue() == name) return static_cast<int>(i);
  return -1;
}

/// True when the collective's full buffer is the rank-major concatenation
/// of the pieces (what SpmdStages makes of every gather and scatter).
bool isFlat(RankedTensorType piece, RankedTensorType full, int64_t dim) {
  LayoutAttr pl = getLayout(piece), fl = getLayout(full);
  if (pl && !pl.isRowMajor()) return false;
  if (dim == 0) return !fl || fl.isRowMajor();
  if (piece.getRank() != 2 || dim != 1 || !fl) return false;
  return fl.getKind() == LayoutKind::Blocked && fl.getBlock().size() >= 2 &&
         fl.getBlock()[0] == piece.getDimSize(0) && fl.getBlock()[1] == piece.getDimSize(1);
}

}  // namespace

FailureOr<SpmdSharding> tessera::graph::readSharding(Operation *at, ShardAttr attr, MeshOp mesh,
                                                     int64_t rank) {
  SpmdSharding s;
  s.dimAxes.assign(rank, {});
  if (!attr) return s;  // replicated over the whole mesh
  if (attr.getMesh().getValue() != mesh.getSymName())
    return at->emitOpError() << "sharding names mesh " << attr.getMesh() << ", the program runs on @"
                             << mesh.getSymName();
  if (static_cast<int64_t>(attr.getDims().size()) != rank)
    return at->emitOpError() << "sharding has " << attr.getDims().size()
                             << " dims entries for a tensor of rank " << rank;
  std::vector<bool> used(mesh.getAxes().size(), false);
  auto use = [&](StringRef name, const char *what) -> FailureOr<int> {
    int a = axisIndex(mesh, name);
    if (a < 0) return at->emitOpError() << "mesh @" << mesh.getSymName() << " has no axis '" << name << "'";
    if (used[a])
      return at->emitOpError() << "sharding uses mesh axis '" << name << "' twice (" << what
                               << "): an axis either partitions one dim, replicates or reduces";
    used[a] = true;
    return a;
  };
  for (int64_t d = 0; d < rank; ++d)
    for (StringRef name : attr.getDimAxes(d)) {
      FailureOr<int> idx = use(name, "in dims");
      if (failed(idx)) return failure();
      s.dimAxes[d].push_back(*idx);
    }
  for (Attribute a : attr.getReplicate())
    if (failed(use(a.cast<StringAttr>().getValue(), "in replicate"))) return failure();
  for (Attribute a : attr.getReduce()) {
    FailureOr<int> idx = use(a.cast<StringAttr>().getValue(), "in reduce");
    if (failed(idx)) return failure();
    s.reduceAxes.push_back(*idx);
  }
  return s;
}

FailureOr<SpmdPlan> tessera::graph::readSpmdPlan(func::FuncOp fn) {
  if (!fn->hasAttr(kSpmdPlanAttr)) return fn.emitOpError("is not an SPMD plan (run --tessera-spmd-stages)");
  auto meshRef = fn->getAttrOfType<FlatSymbolRefAttr>(kSpmdMeshAttr);
  auto mesh = meshRef ? SymbolTable::lookupNearestSymbolFrom<MeshOp>(fn, meshRef.getAttr()) : MeshOp();
  if (!mesh) return fn.emitOpError() << "SPMD plan without a valid " << kSpmdMeshAttr;
  SpmdPlan p;
  p.name = fn.getName().str();
  p.mesh = mesh.getSymName().str();
  for (Attribute a : mesh.getAxes()) p.axes.push_back(a.cast<StringAttr>().getValue().str());
  p.shape.assign(mesh.getShape().begin(), mesh.getShape().end());

  DenseMap<Value, unsigned> ids;
  auto addValue = [&](Value v) -> FailureOr<unsigned> {
    auto t = v.getType().dyn_cast<RankedTensorType>();
    if (!t || !t.hasStaticShape()) return emitError(v.getLoc()) << "SPMD values must be static tensors";
    SpmdValue sv;
    sv.dtype = typeText(t.getElementType());
    sv.shape.assign(t.getShape().begin(), t.getShape().end());
    sv.bytes = t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
    ids[v] = p.values.size();
    p.values.push_back(std::move(sv));
    return ids[v];
  };
  auto idOf = [&](Operation *at, Value v) -> FailureOr<unsigned> {
    auto it = ids.find(v);
    if (it == ids.end()) return at->emitOpError("uses a value the plan does not define");
    return it->second;
  };
  for (auto [i, a] : llvm::enumerate(fn.getArguments())) {
    if (failed(addValue(a))) return failure();
    auto sh = readSharding(fn, fn.getArgAttrOfType<ShardAttr>(i, kShardingAttr), mesh,
                           a.getType().cast<RankedTensorType>().getRank());
    if (failed(sh)) return failure();
    p.argShardings.push_back(*sh);
  }
  const unsigned numArgs = fn.getNumArguments();
  // Bytes of one row (dim 0 index) of a row-major tensor.
  auto rowBytes = [](RankedTensorType t) {
    return t.getNumElements() / std::max<int64_t>(1, t.getDimSize(0)) * ((t.getElementTypeBitWidth() + 7) / 8);
  };
  ModuleOp m = fn->getParentOfType<ModuleOp>();
  for (Operation &op : fn.front()) {
    SpmdStep st;
    st.op = &op;
    // Views: a slice of whole rows, and the operands of a concat along dim
    // 0, are parts of a buffer, not buffers (--tessera-overlap-collectives
    // makes both).
    if (auto slice = dyn_cast<SliceOp>(op)) {
      auto in = slice.getInput().getType().cast<RankedTensorType>();
      auto out = slice.getResult().getType().cast<RankedTensorType>();
      bool rows = isRowMajor(in) && isRowMajor(out) && in.getRank() >= 1;
      for (int64_t d = 0; rows && d < in.getRank(); ++d)
        rows = slice.getStrides()[d] == 1 && (d == 0 || (slice.getOffsets()[d] == 0 && in.getDimSize(d) == out.getDimSize(d)));
      if (!rows)
        return slice.emitOpError("in an SPMD plan must take whole rows (offsets and strides 1 in dim 0 only) of a "
                                 "row-major tensor: it is a view, not a copy");
      FailureOr<unsigned> base = idOf(&op, slice.getInput());
      if (failed(base) || failed(addValue(slice.getResult()))) return failure();
      SpmdValue &v = p.values[ids[slice.getResult()]];
      v.aliasOf = static_cast<int>(*base);
      v.byteOffset = slice.getOffsets()[0] * rowBytes(in);
      continue;
    }
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      auto out = concat.getResult().getType().cast<RankedTensorType>();
      if (concat.getDim() != 0 || !isRowMajor(out))
        return concat.emitOpError("in an SPMD plan must join row-major tensors along dim 0 (its operands become "
                                  "views of its result)");
      FailureOr<unsigned> whole = addValue(concat.getResult());
      if (failed(whole)) return failure();
      int64_t offset = 0;
      for (Value in : concat.getInputs()) {
        FailureOr<unsigned> id = idOf(&op, in);
        if (failed(id)) return failure();
        SpmdValue &v = p.values[*id];
        if (*id < numArgs || v.aliasOf >= 0 || !isRowMajor(in.getType()))
          return concat.emitOpError("in an SPMD plan joins values computed by the plan's steps, each once and "
                                    "row-major (not arguments, slices or another concat's operands)");
        v.aliasOf = static_cast<int>(*whole);
        v.byteOffset = offset;
        offset += v.bytes;
      }
      continue;
    }
    if (auto pos = dyn_cast<MeshPositionOp>(op)) {
      if (pos.getMesh() != mesh.getSymName())
        return pos.emitOpError() << "names another mesh than the plan's @" << mesh.getSymName();
      FailureOr<unsigned> id = addValue(pos.getResult());
      if (failed(id)) return failure();
      p.values[*id].meshPosition = true;
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        FailureOr<unsigned> id = idOf(&op, v);
        if (failed(id)) return failure();
        if (p.values[*id].aliasOf >= 0)
          return ret.emitOpError() << "returns value " << i
                                   << ", a view (slice or concat operand): results are buffers of their own";
        p.results.push_back(*id);
        auto sh = readSharding(fn, fn.getResultAttrOfType<ShardAttr>(i, kShardingAttr), mesh,
                               v.getType().cast<RankedTensorType>().getRank());
        if (failed(sh)) return failure();
        p.resultShardings.push_back(*sh);
      }
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto stage = m.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!stage || stage.isExternal()) return call.emitOpError("calls something that is not a stage function");
      st.kind = SpmdStep::kStage;
      st.stage = call.getCallee().str();
    } else if (auto ar = dyn_cast<AllReduceOp>(op)) {
      st.kind = SpmdStep::kAllReduce;
      st.reduce = ar.getKind();
    } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
      st.kind = SpmdStep::kBroadcast;
      st.root = bc.getRoot();
    } else if (auto ag = dyn_cast<AllGatherOp>(op)) {
      st.kind = SpmdStep::kAllGather;
      if (!isFlat(ag.getInput().getType().cast<RankedTensorType>(),
                  ag.getResult().getType().cast<RankedTensorType>(), ag.getDim()))
        return ag.emitOpError("is not a flat gather (run --tessera-spmd-stages)");
    } else if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
      st.kind = SpmdStep::kReduceScatter;
      st.reduce = rs.getKind();
      if (!isFlat(rs.getResult().getType().cast<RankedTensorType>(),
                  rs.getInput().getType().cast<RankedTensorType>(), rs.getDim()))
        return rs.emitOpError("is not a flat scatter (run --tessera-spmd-stages)");
    } else {
      return op.emitOpError("is not allowed in an SPMD plan: expected stage calls, collectives, and slices and "
                            "concats of rows");
    }
    if (st.kind != SpmdStep::kStage) {
      if (op.getAttrOfType<FlatSymbolRefAttr>("mesh").getValue() != mesh.getSymName())
        return op.emitOpError() << "runs on another mesh than the plan's @" << mesh.getSymName();
      for (Attribute a : op.getAttrOfType<ArrayAttr>("axes")) {
        int idx = axisIndex(mesh, a.cast<StringAttr>().getValue());
        if (idx < 0 || llvm::is_contained(st.axes, idx))
          return op.emitOpError() << "axis '" << a.cast<StringAttr>().getValue()
                                  << "' is unknown or repeated";
        st.axes.push_back(idx);
      }
      if (auto stream = op.getAttrOfType<IntegerAttr>(kPlanStreamAttr)) {
        if (stream.getInt() < 0 || stream.getInt() > 1)
          return op.emitOpError() << kPlanStreamAttr << " must be 0 (the program's stream) or 1 (the "
                                  << "communication stream)";
        st.stream = static_cast<unsigned>(stream.getInt());
      }
      // Per-rank element counts: the smaller of the two sides.
      auto in = op.getOperand(0).getType().cast<RankedTensorType>();
      auto out = op.getResult(0).getType().cast<RankedTensorType>();
      st.count = std::min(in.getNumElements(), out.getNumElements());
    }
    for (Value v : op.getOperands()) {
      FailureOr<unsigned> id = idOf(&op, v);
      if (failed(id)) return failure();
      st.inputs.push_back(*id);
    }
    for (Value r : op.getResults()) {
      FailureOr<unsigned> id = addValue(r);
      if (failed(id)) return failure();
      st.outputs.push_back(*id);
    }
    p.steps.push_back(std::move(st));
  }
  return p;
}
