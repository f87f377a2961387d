//===- AttentionGrad.cpp - attention_grad -> schedule or composed ops -----===//
//
// Part of --tessera-graph-to-schedule. A tessera_graph.attention_grad (the
// VJP --tessera-grad writes for an attention chain) becomes
//  - tessera_schedule.flash_attention_grad, the blockwise backward that
//    recomputes the scores from Q and K and never stores the Sq x Skv
//    matrix, when the target has a kernel for it (options `attention` and
//    `attention-backward`); or
//  - the composed backward: the scores and probabilities recomputed whole,
//    then matmuls, a row sum and elementwise ops (every backend lowers
//    those), which is what the GPU pipelines use today.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "GradBuilder.h"
#include "GraphToSchedule.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;

namespace tessera::graph {
namespace {

void expand(AttentionGradOp op) {
  OpBuilder b(op);
  grad::GradBuilder gb(b);
  gb.setLoc(op.getLoc());
  Location loc = op.getLoc();
  Value q = op.getQuery(), kt = op.getKeyT(), v = op.getValue(), o = op.getOut(), dout = op.getDout();
  const double scale = op.getScale().convertToDouble();
  const int64_t rank = q.getType().cast<RankedTensorType>().getRank();
  Value s = gb.matmul(q, kt);
  if (scale != 1.0) s = gb.scale(s, scale);
  if (op.getCausal()) {
    // keys j <= query i kept, the others -inf (as the forward's mask).
    ArrayRef<int64_t> shape = grad::GradBuilder::shapeOf(s);
    auto idx = RankedTensorType::get(shape.take_back(2), b.getI32Type());
    Value qi = b.create<IotaOp>(loc, idx, b.getI64IntegerAttr(0));
    Value ki = b.create<IotaOp>(loc, idx, b.getI64IntegerAttr(1));
    Value keep = gb.compare(ComparePredicate::le, ki, qi);
    s = gb.select(keep, s, gb.splat({}, -INFINITY));
  }
  Value p = b.create<SoftmaxOp>(loc, s.getType(), s, b.getI64IntegerAttr(rank - 1));
  Value dv = gb.matmul(gb.transposeLast2(p), dout);
  Value dp = gb.matmul(dout, gb.transposeLast2(v));
  Value rowDot = gb.reduce(ReduceKind::sum, gb.mul(dout, o), {rank - 1}, /*keep=*/true);
  Value ds = gb.mul(p, gb.sub(dp, rowDot));
  Value dq = gb.matmul(ds, gb.transposeLast2(kt));
  Value dkt = gb.matmul(gb.transposeLast2(q), ds);
  if (scale != 1.0) {
    dq = gb.scale(dq, scale);
    dkt = gb.scale(dkt, scale);
  }
  op.getDquery().replaceAllUsesWith(dq);
  op.getDkeyT().replaceAllUsesWith(dkt);
  op.getDvalue().replaceAllUsesWith(dv);
  op->erase();
}

}  // namespace

void lowerAttentionGrad(AttentionGradOp op, bool blockwise, int64_t attnBlockQ, int64_t attnBlockKV,
                        int64_t sharedBytes) {
  if (!blockwise) return expand(op);
  auto q = op.getQuery().getType().cast<RankedTensorType>();
  auto kt = op.getKeyT().getType().cast<RankedTensorType>();
  auto v = op.getValue().getType().cast<RankedTensorType>();
  const int64_t rank = q.getRank();
  const int64_t d = q.getDimSize(rank - 1), dv = v.getDimSize(rank - 1);
  // The dK^T / dV kernel's shared memory, the largest of the three: the
  // K^T and V blocks, and P and dS of a (query, key) block.
  auto [bq, bkv] = attentionBlocks(q.getDimSize(rank - 2), kt.getDimSize(rank - 1), attnBlockQ, attnBlockKV,
                                   sharedBytes, [&](int64_t bq, int64_t bkv) { return d * bkv + bkv * dv + 2 * bq * bkv; });
  OpBuilder b(op);
  auto fa = b.create<schedule::FlashAttentionGradOp>(
      op.getLoc(), op->getResultTypes(), op.getQuery(), op.getKeyT(), op.getValue(), op.getOut(), op.getDout(),
      op.getScaleAttr(), b.getI64IntegerAttr(bq), b.getI64IntegerAttr(bkv), op.getCausalAttr());
  op->replaceAllUsesWith(fa->getResults());
  op->erase();
}

}  // namespace tessera::graph
