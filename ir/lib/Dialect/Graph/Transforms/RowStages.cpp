//===- RowStages.cpp - cut a function into kernels that split by rows -----===//
//
// The cut is greedy in program order (a part is a contiguous run, so the
// parts run in order): an op joins the current part when the part stays
// row-local with it, or when neither is row-local (shape ops between two
// row-local parts are kept together: one small single-group kernel);
// otherwise it starts the next part. Constants are cloned into every part
// that reads them, so that a splat stays a scalar in its kernel instead of
// becoming a buffer.
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
    if (isConstant(op)) continue;  // cloned into every part that reads it: never an output
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inside(u); })) outputs.insert(r);
  }
}

/// The constants `run` reads, then `run`.
SmallVector<Operation *> withConstants(ArrayRef<Operation *> run) {
  SetVector<Operation *> consts;
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *d = v.getDefiningOp(); d && d->getBlock() == run.front()->getBlock() && isConstant(d))
          consts.insert(d);
    });
  SmallVector<Operation *> all(consts.begin(), consts.end());
  all.append(run.begin(), run.end());
  return all;
}

bool rowLocal(ArrayRef<Operation *> run) {
  SmallVector<Operation *> all = withConstants(run);
  SetVector<Value> inputs, outputs;
  liveValues(all, inputs, outputs);
  if (outputs.empty()) return true;  // dead: erased by the outlining
  return g::analyzeRowLocality(all, inputs.getArrayRef(), outputs.getArrayRef()).local;
}

/// Clones the constants `run` reads in front of it, used by it alone.
void cloneConstantsInto(ArrayRef<Operation *> run, SmallVectorImpl<Operation *> &clones) {
  Block *block = run.front()->getBlock();
  DenseMap<Operation *, Operation *> cloneOf;
  OpBuilder b(run.front());
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands()) {
        Operation *d = use.get().getDefiningOp();
        if (!d || d->getBlock() != block || !isConstant(d)) continue;
        Operation *&c = cloneOf[d];
        if (!c) {
          c = b.clone(*d);
          clones.push_back(c);
        }
        use.set(c->getResult(use.get().cast<OpResult>().getResultNumber()));
      }
    });
}

}  // namespace

LogicalResult g::cutIntoRowStages(func::FuncOp fn, SymbolTable &symbols) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock() || fn->hasAttr(kRowStagesAttr) || fn->hasAttr(kSpmdPlanAttr))
    return success();
  for (Type t : llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes()))
    if (!t.isa<RankedTensorType>()) return success();
  Block &block = fn.front();
  SmallVector<Operation *> work;
  for (Operation &op : block.without_terminator()) {
    if (isConstant(&op)) continue;
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
  SmallVector<SmallVector<Operation *>> parts;
  bool partLocal = false;
  for (Operation *op : work) {
    if (parts.empty()) {
      parts.push_back({op});
      partLocal = rowLocal(op);
      continue;
    }
    SmallVector<Operation *> grown = parts.back();
    grown.push_back(op);
    if (partLocal ? rowLocal(grown) : !rowLocal(op)) {
      parts.back() = std::move(grown);
      continue;
    }
    parts.push_back({op});
    partLocal = rowLocal(op);
  }
  if (parts.size() < 2) return success();
  Operation *lastStage = fn;
  for (auto [i, part] : llvm::enumerate(parts)) {
    Operation *before = part.back()->getNextNode();
    SmallVector<Operation *> ops;
    cloneConstantsInto(part, ops);
    ops.append(part.begin(), part.end());
    if (failed(outlineStage(fn, ops, before, (fn.getName() + "_part" + Twine(i)).str(), symbols, lastStage)))
      return failure();
  }
  for (Operation &op : llvm::make_early_inc_range(block))
    if (isConstant(&op) && op.use_empty()) op.erase();
  fn->setAttr(kRowStagesAttr, UnitAttr::get(fn.getContext()));
  return success();
}
