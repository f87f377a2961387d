//===- RowStages.cpp - cut a function into kernels that split by rows -----===//
//
// The cut is greedy over a list schedule (ops whose operands are computed,
// in program order; the parts run in order): an op joins the current part
// when the part stays row-local with it, or when neither is row-local (a
// reduction over dim 0 and what follows it alone: one small single-group
// kernel), or when the part is single-group and the op a shape op too
// small to gain from splitting; otherwise it starts the next part. A shape op that moves
// dim 0 is row-local when it starts a part (it reads the part's input
// whole: analyzeRowLocality), so the transposes into heads and back start
// parts of their own rows. Constants are cloned into every part that reads
// them, so that a splat stays a scalar in its kernel instead of becoming a
// buffer; so are the transposes that only feed matmuls
// (isMatmulOperandTranspose), so that the gradient's `X^T . dY` reads X in
// place in the matmul's part rather than a copy made by a single-group part.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/RowStages.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Graph/Transforms/OutlineStage.h"
#include "tessera/Dialect/Graph/Transforms/RowLocality.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;
namespace g = tessera::graph;

namespace {

bool isConstant(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 && op->hasTrait<OpTrait::ConstantLike>();
}

/// Ops cloned into each part that reads them, never a part's output:
/// constants, and transposes read in place by matmuls (of a computed value
/// or an argument: a constant's transpose would need the constant as a
/// part input).
bool isCloned(Operation *op) {
  if (isConstant(op)) return true;
  if (!g::isMatmulOperandTranspose(op)) return false;
  Operation *d = op->getOperand(0).getDefiningOp();
  return !d || !isConstant(d);
}

/// The values `run` (top-level ops of one block) reads from outside, and the
/// values it defines that are used outside it.
void liveValues(ArrayRef<Operation *> run, SetVector<Value> &inputs, SetVector<Value> &outputs) {
  llvm::SmallPtrSet<Operation *, 32> in(run.begin(), run.end());
  Block *block = run.front()->getBlock();
  auto inside = [&](Operation *op) {
    Operation *top = op ? block->findAncestorOpInBlock(*op) : nullptr;
    return top && in.contains(top);
  };
  for (Operation *op : run) {
    for (Value v : op->getOperands())
      if (!inside(v.getDefiningOp())) inputs.insert(v);
    for (Region &r : op->getRegions()) {
      SetVector<Value> above;
      getUsedValuesDefinedAbove(r, above);
      for (Value v : above)
        if (!inside(v.getDefiningOp())) inputs.insert(v);
    }
    if (isCloned(op)) continue;  // cloned into every part that reads it: never an output
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inside(u); })) outputs.insert(r);
  }
}

/// The cloned ops (isCloned) `run` reads and `run`, in block order.
SmallVector<Operation *> withConstants(ArrayRef<Operation *> run) {
  SetVector<Operation *> all;
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *d = v.getDefiningOp(); d && d->getBlock() == run.front()->getBlock() && isCloned(d))
          all.insert(d);
    });
  all.insert(run.begin(), run.end());
  SmallVector<Operation *> sorted(all.begin(), all.end());
  llvm::sort(sorted, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

/// A shape op with too few elements to gain from splitting (at most 16K in
/// its results: a bias gradient's reshape of its column sums): a
/// single-group part takes it rather than launching a part of its own.
bool small(Operation *op) {
  if (!g::isShapeOp(op)) return false;
  int64_t n = 0;
  for (Type t : op->getResultTypes())
    if (auto rt = t.dyn_cast<RankedTensorType>()) n += rt.getNumElements();
  return n <= 16384;
}

bool rowLocal(ArrayRef<Operation *> run) {
  SmallVector<Operation *> all = withConstants(run);
  SetVector<Value> inputs, outputs;
  liveValues(all, inputs, outputs);
  if (outputs.empty()) return true;  // dead: erased by the outlining
  return g::analyzeRowLocality(all, inputs.getArrayRef(), outputs.getArrayRef()).local;
}

/// Clones the cloned ops (isCloned) `run` reads, each in front of its first
/// reader in `run` and read by `run` alone; returns them with `run`, in
/// block order.
SmallVector<Operation *> cloneConstantsInto(ArrayRef<Operation *> run) {
  Block *block = run.front()->getBlock();
  DenseMap<Operation *, Operation *> cloneOf;
  SmallVector<Operation *> ops(run.begin(), run.end());
  OpBuilder b(run.front());
  for (Operation *op : run) {
    b.setInsertionPoint(op);
    op->walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands()) {
        Operation *d = use.get().getDefiningOp();
        if (!d || d->getBlock() != block || !isCloned(d)) continue;
        Operation *&c = cloneOf[d];
        if (!c) {
          c = b.clone(*d);
          ops.push_back(c);
        }
        use.set(c->getResult(use.get().cast<OpResult>().getResultNumber()));
      }
    });
  }
  llvm::sort(ops, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
  return ops;
}

}  // namespace

LogicalResult g::cutIntoRowStages(func::FuncOp fn, SymbolTable &symbols) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock() || fn->hasAttr(kRowStagesAttr) || fn->hasAttr(kSpmdPlanAttr))
    return success();
  for (Type t : llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes()))
    if (!t.isa<RankedTensorType>()) return success();
  Block &block = fn.front();
  SmallVector<Operation *> work, cloned;
  for (Operation &op : block.without_terminator()) {
    if (isCloned(&op)) {
      cloned.push_back(&op);
      continue;
    }
    if (!op.getDialect() || !isa<GraphDialect, schedule::ScheduleDialect>(op.getDialect())) return success();
    work.push_back(&op);
  }
  if (work.empty() || analyzeRowLocality(fn).local) return success();
  // Each result computed by a part, once (a part writes each output once).
  DenseSet<Value> returned;
  for (Value v : block.getTerminator()->getOperands()) {
    Operation *d = v.getDefiningOp();
    if (!d || isConstant(d) || !returned.insert(v).second) return success();
  }
  // The greedy cut over a list schedule: among the ops whose operands are
  // computed (in program order), the first that the current part can take
  // joins it; when none can, the first of them starts the next part. An op
  // that does not depend on the current part is thus pulled into it rather
  // than splitting it (the bf16 block's causal mask, computed between the
  // transposes into heads and the products that read them).
  llvm::SmallPtrSet<Operation *, 32> pending(work.begin(), work.end());
  auto pendingDef = [&](Value v) {
    Operation *d = v.getDefiningOp();
    Operation *top = d ? block.findAncestorOpInBlock(*d) : nullptr;
    if (!top) return false;
    if (pending.contains(top)) return true;
    // A cloned op goes into the part of its reader: what it reads counts.
    return isCloned(top) && llvm::any_of(top->getOperands(), [&](Value w) {
             Operation *dw = w.getDefiningOp();
             return dw && pending.contains(dw);
           });
  };
  auto ready = [&](Operation *op) {
    bool ok = true;
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        Operation *d = v.getDefiningOp();
        if (d && op->isAncestor(d)) continue;  // defined inside op's regions
        if (pendingDef(v)) ok = false;
      }
    });
    return ok;
  };
  SmallVector<SmallVector<Operation *>> parts;
  bool partLocal = false;
  while (!pending.empty()) {
    Operation *first = nullptr, *joins = nullptr;
    for (Operation *op : work) {
      if (!pending.contains(op) || !ready(op)) continue;
      if (!first) first = op;
      if (parts.empty()) break;
      SmallVector<Operation *> grown = parts.back();
      grown.push_back(op);
      if (partLocal ? rowLocal(grown) : (!rowLocal(op) || small(op))) {
        joins = op;
        break;
      }
    }
    if (!first) return fn.emitOpError("row stages: no op is ready (a cycle?)");
    if (joins) {
      parts.back().push_back(joins);
      pending.erase(joins);
      continue;
    }
    parts.push_back({first});
    partLocal = rowLocal(first);
    pending.erase(first);
  }
  if (parts.size() < 2) return success();
  // The block in the schedule's order, each cloned op (a transpose) right
  // after what it reads, so that every part is a contiguous run again.
  Operation *terminator = block.getTerminator();
  for (const auto &part : parts)
    for (Operation *op : part) op->moveBefore(terminator);
  for (Operation *op : cloned)
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp(); d && d->getBlock() == &block) op->moveAfter(d);
  Operation *lastStage = fn;
  for (auto [i, part] : llvm::enumerate(parts)) {
    Operation *before = part.back()->getNextNode();
    SmallVector<Operation *> ops = cloneConstantsInto(part);
    if (failed(outlineStage(fn, ops, before, (fn.getName() + "_part" + Twine(i)).str(), symbols, lastStage)))
      return failure();
  }
  for (Operation *op : cloned)
    if (op->use_empty()) op->erase();
  fn->setAttr(kRowStagesAttr, UnitAttr::get(fn.getContext()));
  return success();
}
