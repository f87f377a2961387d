//===- RowLocality.cpp - which computations split into blocks of rows -----===//
#include "tessera/Dialect/Graph/Transforms/RowLocality.h"

#include <functional>

#include "llvm/ADT/SmallPtrSet.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;
namespace g = tessera::graph;
namespace s = tessera::schedule;

namespace {

int64_t rankOf(Value v) { return v.getType().cast<ShapedType>().getRank(); }

/// Does operand `o` of an elementwise op have the rows of its result `r`
/// (same rank and dim 0), rather than being broadcast along dim 0?
bool sameRows(Value o, Value r) {
  auto a = o.getType().cast<ShapedType>(), b = r.getType().cast<ShapedType>();
  return a.getRank() == b.getRank() && (a.getRank() == 0 || a.getDimSize(0) == b.getDimSize(0));
}

bool isBatched(g::MatmulOp mm) { return mm.getType().cast<RankedTensorType>().getRank() > 2; }

bool isBatchedRhs(OpOperand &use) {
  auto mm = dyn_cast<g::MatmulOp>(use.getOwner());
  return mm && use.getOperandNumber() == 1 && isBatched(mm);
}

int64_t dim0Of(Value v) {
  auto t = v.getType().cast<ShapedType>();
  return t.getRank() >= 1 ? t.getDimSize(0) : -1;
}

/// Shape ops whose row i of the result is made from row i of their data
/// operands alone (dim 0 kept, in the same order): a transpose keeping dim
/// 0 first, a slice, pad or broadcast that leaves dim 0 alone, a reshape of
/// the dims after it, a concat along another dim; and gather, whose rows
/// are its indices' (the table is read whole). The data operands' numbers
/// go to `rows`.
bool preservesRows(Operation *op, SmallVectorImpl<unsigned> &rows) {
  Value r = op->getNumResults() == 1 ? op->getResult(0) : Value();
  if (!r || rankOf(r) < 1) return false;
  auto sameDim0 = [&](Value v) { return rankOf(v) >= 1 && dim0Of(v) == dim0Of(r); };
  bool keep = false;
  if (auto t = dyn_cast<g::TransposeOp>(op)) keep = t.getPerm()[0] == 0;
  else if (auto sl = dyn_cast<g::SliceOp>(op)) keep = sl.getOffsets()[0] == 0 && sl.getStrides()[0] == 1 && sameDim0(sl.getInput());
  else if (auto p = dyn_cast<g::PadOp>(op)) keep = p.getLow()[0] == 0 && p.getHigh()[0] == 0;
  else if (auto bc = dyn_cast<g::BroadcastInDimOp>(op))
    keep = !bc.getDims().empty() && bc.getDims()[0] == 0 && sameDim0(bc.getInput());
  else if (isa<g::ReshapeOp>(op)) keep = sameDim0(op->getOperand(0));
  else if (auto c = dyn_cast<g::ConcatOp>(op)) keep = c.getDim() != 0;
  else if (isa<g::GatherOp>(op)) {
    if (!sameDim0(op->getOperand(1))) return false;
    rows.push_back(1);
    return true;
  }
  if (!keep) return false;
  for (unsigned k = 0; k < op->getNumOperands(); ++k)
    if (!sameDim0(op->getOperand(k))) return false;
  for (unsigned k = 0; k < op->getNumOperands(); ++k) rows.push_back(k);
  return true;
}

}  // namespace

bool g::isMatmulOperandTranspose(Operation *op) {
  auto t = dyn_cast_or_null<g::TransposeOp>(op);
  if (!t || !g::isRowMajor(t.getInput().getType()) || !g::isRowMajor(t.getType())) return false;
  ArrayRef<int64_t> perm = t.getPerm();
  const int64_t r = static_cast<int64_t>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return false;
  for (int64_t d = 0; d + 2 < r; ++d)
    if (perm[d] != d) return false;
  std::function<bool(OpOperand &)> matmulOperand = [&](OpOperand &use) {
    Operation *u = use.getOwner();
    if (isa<g::MatmulOp>(u)) return true;
    auto tile = dyn_cast<s::TileOp>(u);
    if (!tile) return false;
    Value arg = tile.getBody().getArgument(use.getOperandNumber());
    return !arg.use_empty() &&
           llvm::all_of(arg.getUses(), [](OpOperand &inner) { return isa<g::MatmulOp>(inner.getOwner()); });
  };
  return !t->use_empty() && llvm::all_of(t->getUses(), matmulOperand);
}

g::RowLocality g::analyzeRowLocality(ArrayRef<Operation *> ops, ArrayRef<Value> inputs, ArrayRef<Value> outputs) {
  RowLocality out;
  if (outputs.empty()) return out;
  auto r0 = outputs.front().getType().dyn_cast<RankedTensorType>();
  if (!r0 || r0.getRank() < 1) {  // a scalar result: one group computes everything
    out.rows = 1;
    return out;
  }
  const int64_t rowsTotal = out.rows = r0.getDimSize(0);
  DenseSet<Value> &rowValues = out.rowValues;
  llvm::SmallPtrSet<Operation *, 32> inRun(ops.begin(), ops.end());
  DenseSet<Value> inputSet(inputs.begin(), inputs.end());
  bool ok = true;
  // A matmul operand's transpose of an input is read in place (a view of
  // the input, isMatmulOperandTranspose): an input itself, whose rows any
  // group can read.
  SmallVector<Value> allInputs(inputs.begin(), inputs.end());
  DenseSet<Operation *> views;
  for (Operation *op : ops)
    if (isMatmulOperandTranspose(op) && inputSet.contains(op->getOperand(0))) {
      views.insert(op);
      inputSet.insert(op->getResult(0));
      allInputs.push_back(op->getResult(0));
    }
  auto isInput = [&](Value v) { return inputSet.contains(v); };
  auto dim0 = [&](Value v) {
    auto t = v.getType().cast<RankedTensorType>();
    return t.getRank() >= 1 ? t.getDimSize(0) : -1;
  };
  std::function<void(Operation *)> visit = [&](Operation *op) {
    if (views.contains(op)) return;
    if (auto tile = dyn_cast<s::TileOp>(op)) {
      // Map region arguments to operands, analyse the region, map back.
      for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
        if (rowValues.contains(v)) rowValues.insert(arg);
      for (Operation &inner : tile.getBody().front().without_terminator()) visit(&inner);
      auto y = cast<s::YieldOp>(tile.getBody().front().getTerminator());
      for (auto [res, v] : llvm::zip(tile.getResults(), y.getValues()))
        if (rowValues.contains(v)) rowValues.insert(res);
      // Weights inside the region must be inputs (read whole by every group).
      for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
        if (!rowValues.contains(arg) && !isInput(v)) ok = false;
      return;
    }
    if (auto mm = dyn_cast<g::MatmulOp>(op)) {
      // Rank 2: rows of the lhs, the whole rhs.  Batched: dim 0 is a batch
      // dim of both operands, so both are split with it.
      if (!rowValues.contains(mm.getLhs()) || rowValues.contains(mm.getRhs()) != isBatched(mm)) ok = false;
      rowValues.insert(mm.getResult());
      return;
    }
    if (g::isElementwise(op)) {
      // Operands of the result's rank and dim 0 are rows (or splat
      // constants: the same in every row); the others are broadcasts
      // along dim 0 (lower rank, or dim 0 of size 1), read whole.
      bool anyRows = false;
      for (Value o : op->getOperands()) {
        bool full = sameRows(o, op->getResult(0));
        if (full && rowValues.contains(o)) anyRows = true;
        else if (full ? !g::isSplatConstant(o) : rowValues.contains(o)) ok = false;
      }
      if (!anyRows) ok = false;
      rowValues.insert(op->getResult(0));
      return;
    }
    if (g::isSplatConstant(op->getNumResults() == 1 ? op->getResult(0) : Value())) return;
    if (auto fa = dyn_cast<s::FlashAttentionOp>(op)) {
      // Query rows are independent; every group reads all of K and V, which
      // must therefore be inputs (computed ones would be per-group rows).
      // Batched (heads): dim 0 is the batch of all three, split with it.
      if (rankOf(fa.getQuery()) == 3) {
        for (Value v : {fa.getQuery(), fa.getKeyT(), fa.getValue()})
          if (!rowValues.contains(v)) ok = false;
      } else if (!rowValues.contains(fa.getQuery()) || !isInput(fa.getKeyT()) || !isInput(fa.getValue()) ||
                 rowValues.contains(fa.getKeyT()) || rowValues.contains(fa.getValue())) {
        ok = false;
      }
      rowValues.insert(fa.getResult());
      return;
    }
    if (auto fg = dyn_cast<s::FlashAttentionGradOp>(op)) {
      // Every query reaches every key's cotangent: only heads (dim 0 of
      // every operand and result of a rank-3 op) are independent.
      if (rankOf(fg.getQuery()) != 3) ok = false;
      for (Value v : fg->getOperands())
        if (!rowValues.contains(v)) ok = false;
      for (Value r : fg->getResults()) rowValues.insert(r);
      return;
    }
    if (auto sm = dyn_cast<g::SoftmaxOp>(op)) {
      if (!rowValues.contains(sm.getInput()) || sm.getDim() == 0) ok = false;
      rowValues.insert(sm.getResult());
      return;
    }
    if (auto red = dyn_cast<g::ReduceOp>(op)) {
      if (!rowValues.contains(red.getInput()) || llvm::is_contained(red.getDims(), 0)) ok = false;
      rowValues.insert(red.getResult());
      return;
    }
    if (isa<g::LayerNormOp, g::RmsNormOp>(op)) {
      // Rows of the input (rank >= 2: dim 0 is not the normalized one);
      // the scale and shift are weights, read whole.
      if (!rowValues.contains(op->getOperand(0)) || rankOf(op->getOperand(0)) < 2) ok = false;
      for (Value w : op->getOperands().drop_front())
        if (rowValues.contains(w)) ok = false;
      rowValues.insert(op->getResult(0));
      return;
    }
    if (g::isShapeOp(op)) {
      // A shape op that reads only inputs (whole in every group) or splat
      // constants, whatever it does to dim 0 (a transpose into heads or back,
      // a reshape of the rows, iota): each group computes its own rows of
      // the result from whatever elements they need.
      Value r = op->getNumResults() == 1 ? op->getResult(0) : Value();
      if (r && rankOf(r) >= 1 && dim0Of(r) == rowsTotal &&
          llvm::all_of(op->getOperands(), [&](Value o) { return isInput(o) || g::isSplatConstant(o); })) {
        rowValues.insert(r);
        return;
      }
      // Row-preserving shape ops: their data operands are rows; a gather's
      // table is read whole by every group, so it must be an input.
      SmallVector<unsigned> rows;
      if (!preservesRows(op, rows)) {
        ok = false;
        return;
      }
      // A splat constant is the same in every row: any row of it will do.
      for (unsigned k = 0; k < op->getNumOperands(); ++k) {
        Value o = op->getOperand(k);
        if (llvm::is_contained(rows, k) ? !rowValues.contains(o) && !g::isSplatConstant(o)
                                        : (rowValues.contains(o) || !isInput(o)))
          ok = false;
      }
      rowValues.insert(op->getResult(0));
      return;
    }
    ok = false;  // other shape ops, layout conversions, collectives: not row-local
  };
  // Seed: inputs with the row count that some op of the run reads as rows.
  std::function<bool(OpOperand &)> readsAsRows = [&](OpOperand &use) -> bool {
    Operation *u = use.getOwner();
    if (auto tile = dyn_cast<s::TileOp>(u)) {
      Value arg = tile.getBody().getArgument(use.getOperandNumber());
      return llvm::any_of(arg.getUses(), readsAsRows);
    }
    if (isa<g::MatmulOp>(u)) return use.getOperandNumber() == 0 || isBatchedRhs(use);
    if (isa<s::FlashAttentionOp>(u)) return use.getOperandNumber() == 0 || rankOf(use.get()) == 3;
    if (isa<s::FlashAttentionGradOp>(u)) return rankOf(use.get()) == 3;
    if (isa<g::LayerNormOp, g::RmsNormOp>(u)) return use.getOperandNumber() == 0;
    if (g::isElementwise(u)) return sameRows(use.get(), u->getResult(0));
    if (isa<g::GatherOp>(u)) return use.getOperandNumber() == 1;  // the table is read whole
    if (views.contains(u)) return false;  // read in place, whole
    return true;
  };
  auto usedByRun = [&](OpOperand &use) {
    Operation *u = use.getOwner();
    Operation *top = ops.empty() ? nullptr : ops.front()->getBlock()->findAncestorOpInBlock(*u);
    return top && inRun.contains(top);
  };
  for (Value a : allInputs) {
    auto t = a.getType().dyn_cast<RankedTensorType>();
    if (!t) {
      ok = false;
      continue;
    }
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : a.getUses())
      if (usedByRun(use)) uses.push_back(&use);
    if (llvm::any_of(uses, [&](OpOperand *u) { return readsAsRows(*u); }) && dim0(a) == rowsTotal)
      rowValues.insert(a);
    // Inputs in a layout are not row blocks; the K^T of a flash_attention is
    // read whole in any layout (the kernel's index map), so it does not count.
    bool onlyKey = !uses.empty() && llvm::all_of(uses, [](OpOperand *use) {
      return isa<s::FlashAttentionOp>(use->getOwner()) && use->getOperandNumber() == 1 && rankOf(use->get()) == 2;
    });
    if (g::getLayout(t) && !g::getLayout(t).isRowMajor() && !onlyKey) ok = false;
  }
  for (Operation *op : ops) visit(op);
  for (Value v : outputs)
    if (!rowValues.contains(v)) ok = false;
  // Every row value is split into the same blocks of rowsTotal rows: one
  // with another row count (a slice of a constant, whose rows no operand
  // ties to the part's) would be computed only in the rows the groups
  // cover, its other rows left unwritten.
  for (Value v : rowValues)
    if (rankOf(v) < 1 || dim0Of(v) != rowsTotal) ok = false;
  out.local = ok;
  if (!ok) rowValues.clear();
  return out;
}

g::RowLocality g::analyzeRowLocality(func::FuncOp fn) {
  SmallVector<Operation *> ops;
  for (Operation &op : fn.front().without_terminator()) ops.push_back(&op);
  SmallVector<Value> inputs(fn.getArguments().begin(), fn.getArguments().end());
  SmallVector<Value> outputs(fn.front().getTerminator()->getOperands());
  return analyzeRowLocality(ops, inputs, outputs);
}
