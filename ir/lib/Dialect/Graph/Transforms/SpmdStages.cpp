//===- SpmdStages.cpp - cut SPMD Graph IR functions at their collectives --===//
//
// A device runs an SPMD function as compiled kernels (stages) with
// collectives between them; the collectives go through the runtime's
// Communicator, which moves flat buffers: all_gather concatenates the ranks'
// buffers and reduce_scatter hands rank r the r-th contiguous chunk. Two
// rewrites make every gather and scatter flat before the cut:
//
// - along dim 0 of row-major tensors the chunks are already contiguous;
// - along the last dim of a rank-2 tensor, the rank-major concatenation of
//   [M, n] pieces *is* the [M, P*n] tensor in layout blocked<M, n> (block b
//   holds columns b*n .. b*n+n-1), so the gather produces that layout and a
//   convert_layout, compiled into the next stage, restores row-major; a
//   scatter converts its input to blocked<M, n> in the previous stage.
//
// Operands in other layouts are converted to row-major first. Anything else
// (gathers along a middle dim) is a diagnostic.
//
// The cut: maximal runs of non-collective ops become private functions
// `<fn>_stage<i>(live-ins) -> (live-outs)`, called from the function, which
// keeps its signature (and argument/result shardings) and is marked
// `tessera.spmd_plan`. Ops whose results nobody uses are dropped. A
// `mesh_position` stays in the plan (a value the program layer fills per
// device), and the stages that read it take it as an argument.
// Constants are cloned next to the ops that read them, so no stage returns
// one for a later stage.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/OutlineStage.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

#include "llvm/ADT/SetVector.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tessera::graph {
#define GEN_PASS_DEF_SPMDSTAGES
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera::graph;

namespace {

bool isCollective(Operation *op) {
  return isa<AllReduceOp, BroadcastOp, AllGatherOp, ReduceScatterOp>(op);
}

RankedTensorType withLayout(RankedTensorType t, LayoutAttr layout) {
  return RankedTensorType::get(t.getShape(), t.getElementType(), layout);
}
RankedTensorType rowMajor(RankedTensorType t) { return withLayout(t, nullptr); }
bool isRowMajor(Type t) {
  LayoutAttr l = getLayout(t);
  return !l || l.isRowMajor();
}
LayoutAttr blockedLayout(MLIRContext *ctx, int64_t rows, int64_t cols) {
  return LayoutAttr::get(ctx, LayoutKind::Blocked, {rows, cols}, {}, 0);
}

/// `v` converted to `type` (no op when it already has it).
Value convertTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  if (v.getType() == type) return v;
  return b.create<ConvertLayoutOp>(loc, type, v);
}

/// Rewrites a gather/scatter so that the runtime can run it on flat buffers
/// (the file comment). `gather`: all_gather, else reduce_scatter.
LogicalResult makeFlat(Operation *op, bool gather) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto in = op->getOperand(0).getType().cast<RankedTensorType>();
  auto out = op->getResult(0).getType().cast<RankedTensorType>();
  int64_t dim = gather ? cast<AllGatherOp>(op).getDim() : cast<ReduceScatterOp>(op).getDim();
  int64_t rank = in.getRank();
  // The local piece: the gather's input, the scatter's result.
  RankedTensorType piece = gather ? in : out;
  RankedTensorType full = gather ? out : in;
  RankedTensorType fullFlat;
  if (dim == 0) {
    fullFlat = rowMajor(full);
  } else if (rank == 2 && dim == 1) {
    fullFlat = withLayout(full, blockedLayout(op->getContext(), piece.getDimSize(0),
                                              piece.getDimSize(1)));
  } else if (!in.getEncoding() && !out.getEncoding()) {
    // Another dim: moved first by a transpose, gathered or scattered along
    // dim 0, moved back (the runtime concatenates flat buffers).
    SmallVector<int64_t> perm{dim}, inverse(rank);
    for (int64_t k = 0; k < rank; ++k)
      if (k != dim) perm.push_back(k);
    for (int64_t k = 0; k < rank; ++k) inverse[perm[k]] = k;
    auto permuted = [&](RankedTensorType t, ArrayRef<int64_t> p) {
      SmallVector<int64_t> shape;
      for (int64_t k : p) shape.push_back(t.getDimSize(k));
      return RankedTensorType::get(shape, t.getElementType());
    };
    Value first = b.create<TransposeOp>(loc, permuted(in, perm), op->getOperand(0), b.getDenseI64ArrayAttr(perm));
    op->setOperand(0, first);
    op->setAttr("dim", b.getI64IntegerAttr(0));
    RankedTensorType moved = permuted(out, perm);
    op->getResult(0).setType(moved);
    b.setInsertionPointAfter(op);
    Value back = b.create<TransposeOp>(loc, out, op->getResult(0), b.getDenseI64ArrayAttr(inverse));
    op->getResult(0).replaceAllUsesExcept(back, back.getDefiningOp());
    return makeFlat(op, gather);
  } else {
    return op->emitOpError() << "along dim " << dim << " of a rank-" << rank
                             << " tensor in a layout is not supported by the SPMD runtime: it "
                                "gathers and scatters such tensors along dim 0, or along the last dim "
                                "of a rank-2 tensor";
  }
  Value src = op->getOperand(0);
  if (gather) {
    src = convertTo(b, loc, src, rowMajor(in));
    if (src == op->getOperand(0) && out == fullFlat) return success();
    op->setOperand(0, src);
    op->getResult(0).setType(fullFlat);
    b.setInsertionPointAfter(op);
    Value back = convertTo(b, loc, op->getResult(0), out);
    op->getResult(0).replaceAllUsesExcept(back, back.getDefiningOp());
    return success();
  }
  src = convertTo(b, loc, src, fullFlat);
  op->setOperand(0, src);
  if (!isRowMajor(out)) {
    op->getResult(0).setType(rowMajor(out));
    b.setInsertionPointAfter(op);
    Value back = convertTo(b, loc, op->getResult(0), out);
    op->getResult(0).replaceAllUsesExcept(back, back.getDefiningOp());
  }
  return success();
}

LogicalResult cutAtCollectives(func::FuncOp fn, MeshOp mesh, SymbolTable &symbols) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError("an SPMD function must have a single block");
  for (Type t : llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes()))
    if (!t.isa<RankedTensorType>())
      return fn.emitOpError() << "SPMD function arguments and results must be tensors, got " << t;
  // 1. Flat gathers and scatters.
  SmallVector<Operation *> gs;
  fn.walk([&](Operation *op) {
    if (isa<AllGatherOp, ReduceScatterOp>(op)) gs.push_back(op);
  });
  for (Operation *op : gs)
    if (failed(makeFlat(op, isa<AllGatherOp>(op)))) return failure();
  // 2. Drop what nobody uses (Graph ops are pure; collectives are kept: a
  //    device must not skip a collective the others enter).
  Block &block = fn.front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isOpTriviallyDead(&op)) op.erase();
  // 3. The device's mesh position is a value of the plan (the program
  //    layer writes it), not computed by a stage: moved to the top, where
  //    it splits no run, and read by the stages as an argument.
  for (MeshPositionOp p : llvm::make_early_inc_range(block.getOps<MeshPositionOp>()))
    p->moveBefore(&block, block.begin());
  // 4. Constants are made by the ops that read them: a stage does not
  //    compute one for a later stage (on GPUs a launch per constant, and a
  //    buffer crossing the plan).
  SmallVector<Operation *> constants;
  for (Operation &op : block)
    if (op.hasTrait<OpTrait::ConstantLike>()) constants.push_back(&op);
  for (Operation *c : constants) {
    for (OpOperand &use : llvm::make_early_inc_range(c->getUses())) {
      Operation *user = use.getOwner();
      if (isCollective(user) || user->hasTrait<OpTrait::IsTerminator>() || user == c->getNextNode()) continue;
      OpBuilder b(user);
      use.set(b.clone(*c)->getResult(0));
    }
    if (c->use_empty()) c->erase();
  }
  // 5. Cut. Collect the runs first: outlining changes the block.
  SmallVector<std::pair<SmallVector<Operation *>, Operation *>> runs;
  SmallVector<Operation *> cur;
  for (Operation &op : block) {
    if (isa<MeshPositionOp>(op)) continue;
    if (isCollective(&op) || op.hasTrait<OpTrait::IsTerminator>()) {
      if (!cur.empty()) runs.push_back({cur, &op});
      cur.clear();
      continue;
    }
    if (op.getNumRegions() && !isa<tessera::schedule::TileOp>(op) && op.getDialect() &&
        !isa<GraphDialect, tessera::schedule::ScheduleDialect>(op.getDialect()))
      return op.emitOpError("is not allowed in an SPMD function");
    cur.push_back(&op);
  }
  unsigned index = 0;
  Operation *lastStage = fn;
  for (auto &[ops, before] : runs)
    if (failed(outlineStage(fn, ops, before, (fn.getName() + "_stage" + Twine(index++)).str(), symbols, lastStage))) return failure();
  fn->setAttr(kSpmdPlanAttr, UnitAttr::get(fn.getContext()));
  fn->setAttr(kSpmdMeshAttr, FlatSymbolRefAttr::get(mesh.getSymNameAttr()));
  return success();
}

struct SpmdStagesPass : tessera::graph::impl::SpmdStagesBase<SpmdStagesPass> {
  void runOnOperation() override {
    ModuleOp m = getOperation();
    SymbolTable symbols(m);
    SmallVector<std::pair<func::FuncOp, MeshOp>> todo;
    for (auto fn : m.getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn->hasAttr(kSpmdPlanAttr)) continue;
      FailureOr<MeshOp> mesh = findSpmdMesh(fn);
      if (failed(mesh)) return signalPassFailure();
      if (*mesh) todo.push_back({fn, *mesh});
    }
    for (auto [fn, mesh] : todo)
      if (failed(cutAtCollectives(fn, mesh, symbols))) return signalPassFailure();
  }
};

}  // namespace

FailureOr<MeshOp> tessera::graph::findSpmdMesh(func::FuncOp fn) {
  llvm::SetVector<StringAttr> names;
  auto addShard = [&](Attribute a) {
    if (auto s = a.dyn_cast_or_null<ShardAttr>()) names.insert(s.getMesh().getAttr());
  };
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) addShard(fn.getArgAttr(i, kShardingAttr));
  for (unsigned i = 0; i < fn.getNumResults(); ++i) addShard(fn.getResultAttr(i, kShardingAttr));
  fn.walk([&](Operation *op) {
    addShard(op->getAttr(kShardingAttr));
    if (auto a = op->getAttrOfType<FlatSymbolRefAttr>("mesh"); a && (isCollective(op) || isa<MeshPositionOp>(op)))
      names.insert(a.getAttr());
  });
  if (names.empty()) return MeshOp();
  if (names.size() > 1)
    return fn.emitOpError() << "uses the meshes @" << names[0].getValue() << " and @"
                            << names[1].getValue() << ": an SPMD function runs on one mesh";
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(fn, names[0]);
  if (!mesh) return fn.emitOpError() << "mesh @" << names[0].getValue() << " does not exist";
  return mesh;
}

std::vector<int64_t> tessera::graph::meshCoords(const std::vector<int64_t> &shape,
                                                int64_t device) {
  std::vector<int64_t> c(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    c[a] = device % shape[a];
    device /= shape[a];
  }
  return c;
}

std::vector<int64_t> tessera::graph::collectiveGroup(const std::vector<int64_t> &shape,
                                                     const std::vector<int> &axes,
                                                     int64_t device, int64_t *rank) {
  std::vector<int64_t> base = meshCoords(shape, device);
  int64_t n = 1;
  for (int a : axes) n *= shape[a];
  std::vector<int64_t> group;
  for (int64_t r = 0; r < n; ++r) {
    // Coordinates of rank r: row-major over `axes` (the last axis fastest).
    std::vector<int64_t> c = base;
    int64_t rest = r;
    for (size_t i = axes.size(); i-- > 0;) {
      c[axes[i]] = rest % shape[axes[i]];
      rest /= shape[axes[i]];
    }
    int64_t d = 0;
    for (size_t a = 0; a < shape.size(); ++a) d = d * shape[a] + c[a];
    if (d == device && rank) *rank = r;
    group.push_back(d);
  }
  return group;
}
