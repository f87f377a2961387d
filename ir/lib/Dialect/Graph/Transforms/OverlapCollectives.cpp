//===- OverlapCollectives.cpp - pipeline a stage and its all_reduce -------===//
//
// In an SPMD plan (after --tessera-spmd-stages), a stage whose result goes
// to an all_reduce is computed in row blocks, and the all_reduce of block i
// runs on the communication stream while block i+1 computes: a software
// pipeline of two stages (compute, reduce) over the blocks, unrolled into
// the plan (the design's "Schedule IR overlaps collectives with compute via
// pipelining"; docs/spmd.md, "Overlap").
//
// What makes it legal: an all_reduce is elementwise, so reducing the rows
// block by block gives the same bits as reducing them at once; and the
// stage must be *row-local*: row r of its result depends only on row r of
// some of its arguments (the *split* arguments: the activations) and on
// the whole of the others (weights, biases), and not on its index (a
// stochastic cast keys its random bits by it). The pass proves that op by op
// (matmul with a split lhs, elementwise ops with broadcast invariants,
// reductions, softmax and norms that keep dim 0), then:
//
//   %p = call @f_stage0(%x, %w1, %b1, %w2)
//   %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"]
//
// becomes, for 4 blocks of m rows (a clone @f_stage0_rows<m> of the stage
// with m-row types):
//
//   %x0 = tessera_graph.slice %x offsets = [0, 0] ...     // a view
//   %p0 = call @f_stage0_rows64(%x0, %w1, %b1, %w2)
//   %x1 = ... ; %p1 = call @f_stage0_rows64(%x1, ...)
//   %r0 = tessera_graph.all_reduce sum %p0 ... {tessera.stream = 1}
//   %x2 = ... ; %p2 = call ...
//   %r1 = tessera_graph.all_reduce sum %p1 ... {tessera.stream = 1}
//   ...
//   %y0 = tessera_graph.concat %r0, %r1, %r2, %r3 dim = 0   // r_i are views of y0
//
// readSpmdPlan turns the slices and the concat into views (no copies) and
// the stream attribute into the step's stream; Program::Run orders the two
// streams with events. A stage that is not row-local, a result whose rows
// do not divide, or an all_reduce not fed by a stage alone is left as it
// is.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"

namespace tessera::graph {
#define GEN_PASS_DEF_OVERLAPCOLLECTIVES
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera::graph;

namespace {

RankedTensorType withRows(Type t, int64_t rows) {
  auto tt = t.cast<RankedTensorType>();
  SmallVector<int64_t> shape(tt.getShape().begin(), tt.getShape().end());
  shape[0] = rows;
  return RankedTensorType::get(shape, tt.getElementType(), tt.getEncoding());
}

bool hasRows(Type t, int64_t rows) {
  auto tt = t.dyn_cast<RankedTensorType>();
  return tt && tt.getRank() >= 1 && tt.getDimSize(0) == rows && isRowMajor(tt);
}

/// The values of `stage` whose row r depends on row r of the split
/// arguments only (and on all of the invariant values); failure when some
/// op mixes rows, or its result is not row-local.
FailureOr<DenseSet<Value>> rowLocalValues(func::FuncOp stage, const SmallVector<bool> &split, int64_t rows) {
  DenseSet<Value> rowwise;
  for (auto [i, a] : llvm::enumerate(stage.getArguments()))
    if (split[i]) rowwise.insert(a);
  auto isRow = [&](Value v) { return rowwise.contains(v); };
  for (Operation &op : stage.front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1 || !isRow(ret.getOperand(0))) return failure();
      continue;
    }
    const bool anyRow = llvm::any_of(op.getOperands(), isRow);
    if (!anyRow) {
      if (op.getNumRegions() != 0) return failure();
      continue;  // invariant: the same for every block (recomputed per block)
    }
    if (op.getNumResults() != 1 || !hasRows(op.getResult(0).getType(), rows)) return failure();
    const int64_t rank = op.getResult(0).getType().cast<RankedTensorType>().getRank();
    bool ok = false;
    if (auto cast = dyn_cast<CastOp>(&op); cast && cast.isStochastic()) {
      // Its random bits are keyed by the element's index: a block's clone
      // (shared by every block) would start each block at row 0.
      ok = false;
    } else if (isElementwise(&op)) {
      // Row-local operands span the result's rows; invariant ones broadcast
      // along dim 0 (a bias [N], a column [1, N]).
      ok = llvm::all_of(op.getOperands(), [&](Value v) {
        auto t = v.getType().cast<RankedTensorType>();
        if (isRow(v)) return t.getRank() == rank && hasRows(t, rows);
        return t.getRank() < rank || t.getDimSize(0) == 1;
      });
    } else if (auto mm = dyn_cast<MatmulOp>(op)) {
      ok = rank == 2 && isRow(mm.getLhs()) && !isRow(mm.getRhs()) && hasRows(mm.getLhs().getType(), rows);
    } else if (auto sm = dyn_cast<SoftmaxOp>(op)) {
      ok = rank >= 2 && sm.getDim() != 0 && hasRows(sm.getInput().getType(), rows);
    } else if (auto ln = dyn_cast<LayerNormOp>(op)) {
      ok = rank >= 2 && isRow(ln.getInput()) && !isRow(ln.getGamma()) && !isRow(ln.getBeta());
    } else if (auto rn = dyn_cast<RmsNormOp>(op)) {
      ok = rank >= 2 && isRow(rn.getInput()) && !isRow(rn.getGamma());
    } else if (auto red = dyn_cast<ReduceOp>(op)) {
      ok = !llvm::is_contained(red.getDims(), 0) && hasRows(red.getInput().getType(), rows);
    }
    if (!ok) return failure();
    rowwise.insert(op.getResult(0));
  }
  return rowwise;
}

/// Which arguments to split: the largest set of the arguments that have the
/// result's rows for which the stage is row-local (weights that happen to
/// have as many rows fail the test and stay whole).
FailureOr<std::pair<SmallVector<bool>, DenseSet<Value>>> chooseSplit(func::FuncOp stage, int64_t rows) {
  SmallVector<unsigned> candidates;
  for (auto [i, t] : llvm::enumerate(stage.getArgumentTypes()))
    if (hasRows(t, rows)) candidates.push_back(i);
  if (candidates.empty() || candidates.size() > 8) return failure();
  // Subsets by decreasing size: the first that works splits the most.
  SmallVector<unsigned> masks;
  for (unsigned m = (1u << candidates.size()) - 1; m > 0; --m) masks.push_back(m);
  llvm::stable_sort(masks, [](unsigned a, unsigned b) { return __builtin_popcount(a) > __builtin_popcount(b); });
  for (unsigned m : masks) {
    SmallVector<bool> split(stage.getNumArguments(), false);
    for (auto [k, i] : llvm::enumerate(candidates)) split[i] = (m >> k) & 1;
    FailureOr<DenseSet<Value>> rowwise = rowLocalValues(stage, split, rows);
    if (succeeded(rowwise)) return std::make_pair(split, std::move(*rowwise));
  }
  return failure();
}

/// The largest number of blocks <= `want` (>= 2) that divides `rows`; 0 if
/// none.
int64_t blocksFor(int64_t rows, int64_t want) {
  for (int64_t k = std::min(want, rows); k >= 2; --k)
    if (rows % k == 0) return k;
  return 0;
}

struct OverlapCollectivesPass
    : tessera::graph::impl::OverlapCollectivesBase<OverlapCollectivesPass> {
  using OverlapCollectivesBase::OverlapCollectivesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chunks < 2) return;
    SymbolTable symbols(module);
    for (func::FuncOp plan : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!plan->hasAttr(kSpmdPlanAttr)) continue;
      for (AllReduceOp ar : llvm::to_vector(plan.front().getOps<AllReduceOp>()))
        if (failed(pipeline(ar, symbols))) return signalPassFailure();
    }
  }

  LogicalResult pipeline(AllReduceOp ar, SymbolTable &symbols) {
    auto call = ar.getInput().getDefiningOp<func::CallOp>();
    if (!call || call->getNumResults() != 1 || !ar.getInput().hasOneUse()) return success();
    auto stage = symbols.lookup<func::FuncOp>(call.getCallee());
    auto type = ar.getInput().getType().cast<RankedTensorType>();
    if (!stage || !hasRows(type, type.getRank() >= 1 ? type.getDimSize(0) : -1)) return success();
    const int64_t rows = type.getDimSize(0);
    const int64_t blocks = blocksFor(rows, chunks);
    if (blocks == 0) return success();
    auto choice = chooseSplit(stage, rows);
    if (failed(choice)) return success();
    const SmallVector<bool> &split = choice->first;
    const int64_t m = rows / blocks;

    // The stage on m rows: the same ops, row-local values retyped.
    IRMapping map;
    auto block = cast<func::FuncOp>(stage->clone(map));
    block.setName((stage.getName() + "_rows" + Twine(m)).str());
    block.setPrivate();
    for (Value v : choice->second) map.lookup(v).setType(withRows(v.getType(), m));
    block.setType(FunctionType::get(stage.getContext(), block.front().getArgumentTypes(),
                                    block.front().getTerminator()->getOperandTypes()));
    symbols.insert(block, std::next(Block::iterator(stage)));
    if (failed(mlir::verify(block))) return stage.emitError("the row-block clone does not verify");

    OpBuilder b(ar);
    Location loc = ar.getLoc();
    auto compute = [&](int64_t i) -> Value {
      SmallVector<Value> operands;
      for (auto [k, v] : llvm::enumerate(call.getOperands())) {
        if (!split[k]) {
          operands.push_back(v);
          continue;
        }
        SmallVector<int64_t> offsets(v.getType().cast<RankedTensorType>().getRank(), 0), strides(offsets.size(), 1);
        offsets[0] = i * m;
        operands.push_back(b.create<SliceOp>(loc, withRows(v.getType(), m), v, offsets, strides));
      }
      return b.create<func::CallOp>(loc, block, operands).getResult(0);
    };
    auto reduce = [&](Value part) -> Value {
      auto r = b.create<AllReduceOp>(loc, part.getType(), part, ar.getMeshAttr(), ar.getAxesAttr(), ar.getKindAttr());
      r->setAttr(kPlanStreamAttr, b.getI64IntegerAttr(1));
      return r.getResult();
    };
    // Issue order: compute i+1 before reduce i, so the host never blocks in
    // a collective while the next block could be computing.
    SmallVector<Value> parts, reduced;
    for (int64_t i = 0; i < blocks; ++i) {
      parts.push_back(compute(i));
      if (i >= 1) reduced.push_back(reduce(parts[i - 1]));
    }
    reduced.push_back(reduce(parts.back()));
    Value whole = b.create<ConcatOp>(loc, type, reduced, b.getI64IntegerAttr(0));
    ar.getResult().replaceAllUsesWith(whole);
    ar.erase();
    call.erase();
    // The whole-rows stage may now be unused.
    if (SymbolTable::symbolKnownUseEmpty(stage, stage->getParentOp())) symbols.erase(stage);
    return success();
  }
};

}  // namespace
