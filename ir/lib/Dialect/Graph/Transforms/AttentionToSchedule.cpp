//===- AttentionToSchedule.cpp - attention -> flash_attention -------------===//
//
// matmul(Q, K^T) -> [mul/div by a splat] -> softmax(last dim) -> matmul(P, V)
// becomes one tessera_schedule.flash_attention (online softmax over key/value
// blocks: the score matrix is never formed).  Part of
// --tessera-graph-to-schedule (GraphToSchedule.cpp runs it first, so that the
// two matmuls are not grouped into tiles of their own).
//
//===----------------------------------------------------------------------===//
#include "GraphToSchedule.h"

#include <optional>

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tessera;

namespace {
/// The requested block, clamped to the sequence (the op allows a partial
/// last block, so a prime length keeps full-size blocks).
int64_t blockFor(int64_t n, int64_t want) {
  return std::max<int64_t>(1, std::min(want, n));
}

/// A splat float constant (the attention scale), or nothing.
std::optional<double> splatValue(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst) return std::nullopt;
  auto dense = cst.getValue().dyn_cast<DenseFPElementsAttr>();
  if (!dense || !dense.isSplat()) return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// matmul(Q, K^T) [-> mul/div by a splat] -> softmax(last dim) ->
/// matmul(P, V), every intermediate used once, all in one block, rank 2,
/// f32 (flash_attention keeps its blocks in f32 and does not round the
/// scores and probabilities to a narrower type as the unfused program does).
}  // namespace

void tessera::graph::matchAttention(graph::SoftmaxOp sm, int64_t attnBlockQ, int64_t attnBlockKV) {
  auto st = sm.getInput().getType().cast<RankedTensorType>();
  if (st.getRank() != 2 || sm.getDim() != 1 || !st.getElementType().isF32()) return;
  if (!sm.getResult().hasOneUse()) return;
  auto pv = dyn_cast<graph::MatmulOp>(*sm.getResult().getUsers().begin());
  if (!pv || pv.getLhs() != sm.getResult() || pv.getRhs() == sm.getResult()) return;
  Block *block = sm->getBlock();
  double scale = 1.0;
  Operation *scaleOp = nullptr;
  Value s = sm.getInput();
  if (auto *def = s.getDefiningOp(); def && isa<graph::MulOp, graph::DivOp>(def)) {
    // scores * c, scores / c, or c * scores with a same-shape splat c.
    unsigned scoreIdx = 0;
    std::optional<double> c = splatValue(def->getOperand(1));
    if (!c && isa<graph::MulOp>(def)) {
      c = splatValue(def->getOperand(0));
      scoreIdx = 1;
    }
    if (!c || def->getOperand(0) == def->getOperand(1) || !s.hasOneUse()) return;
    if (isa<graph::DivOp>(def) && *c == 0.0) return;
    scale = isa<graph::MulOp>(def) ? *c : 1.0 / *c;
    scaleOp = def;
    s = def->getOperand(scoreIdx);
  }
  auto qk = s.getDefiningOp<graph::MatmulOp>();
  if (!qk || !s.hasOneUse()) return;
  for (Operation *op : {qk.getOperation(), scaleOp, pv.getOperation()})
    if (op && op->getBlock() != block) return;
  for (Value v : {qk.getLhs(), qk.getRhs(), pv.getRhs(), pv.getResult()}) {
    auto t = v.getType().cast<RankedTensorType>();
    if (t.getRank() != 2 || t.getElementType() != st.getElementType()) return;
  }
  // The result is stored row-major by the consumers of `pv`.
  if (auto l = graph::getLayout(pv.getType()); l && !l.isRowMajor()) return;
  // K^T = convert_layout(col_major K^T): the col_major tensor's storage is
  // K row-major, so hand that tensor to the kernel and skip the copy.
  Value kt = qk.getRhs();
  graph::ConvertLayoutOp kconv = kt.getDefiningOp<graph::ConvertLayoutOp>();
  if (kconv) {
    auto in = graph::getLayout(kconv.getInput().getType());
    if (in && in.getKind() == graph::LayoutKind::ColMajor) kt = kconv.getInput();
    else kconv = nullptr;
  }
  // The new op is created at `pv`: the key must be defined before it.
  auto q = qk.getLhs().getType().cast<RankedTensorType>();
  int64_t sq = q.getDimSize(0);
  int64_t skv = kt.getType().cast<RankedTensorType>().getDimSize(1);
  OpBuilder b(pv);
  auto fa = b.create<schedule::FlashAttentionOp>(
      pv.getLoc(), pv.getType(), qk.getLhs(), kt, pv.getRhs(),
      b.getF32FloatAttr(static_cast<float>(scale)),
      b.getI64IntegerAttr(blockFor(sq, attnBlockQ)),
      b.getI64IntegerAttr(blockFor(skv, attnBlockKV)));
  pv.getResult().replaceAllUsesWith(fa.getResult());
  pv->erase();
  sm->erase();
  if (scaleOp) {
    SmallVector<Value, 2> ins(scaleOp->getOperands());
    scaleOp->erase();
    for (Value c : ins)
      if (auto cst = c.getDefiningOp<arith::ConstantOp>(); cst && cst->use_empty()) cst->erase();
  }
  qk->erase();
  if (kconv && kconv->use_empty()) kconv->erase();
}
