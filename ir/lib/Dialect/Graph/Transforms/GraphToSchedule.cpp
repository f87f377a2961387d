//===- GraphToSchedule.cpp - tile matmuls, fuse elementwise epilogues -----===//
//
// Attention chains become tessera_schedule.flash_attention; every other
// matmul becomes a tessera_schedule.tile with its elementwise epilogue.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/Passes.h"

#include <optional>

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::graph {
#define GEN_PASS_DEF_GRAPHTOSCHEDULE
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera;

namespace {

struct GraphToSchedulePass
    : graph::impl::GraphToScheduleBase<GraphToSchedulePass> {
  using GraphToScheduleBase::GraphToScheduleBase;

  void runOnOperation() override {
    // Attention first: its two matmuls must not be wrapped into tiles.
    SmallVector<graph::SoftmaxOp> softmaxes;
    getOperation().walk([&](graph::SoftmaxOp sm) {
      if (!sm->getParentOfType<schedule::TileOp>()) softmaxes.push_back(sm);
    });
    for (graph::SoftmaxOp sm : softmaxes) matchAttention(sm);
    SmallVector<graph::MatmulOp> matmuls;
    getOperation().walk([&](graph::MatmulOp mm) {
      if (!mm->getParentOfType<schedule::TileOp>()) matmuls.push_back(mm);
    });
    for (graph::MatmulOp mm : matmuls) fuse(mm);
  }

  /// The requested block, clamped to the sequence (the op allows a partial
  /// last block, so a prime length keeps full-size blocks).
  static int64_t blockFor(int64_t n, int64_t want) {
    return std::max<int64_t>(1, std::min(want, n));
  }

  /// A splat float constant (the attention scale), or nothing.
  static std::optional<double> splatValue(Value v) {
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
  void matchAttention(graph::SoftmaxOp sm) {
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

  void fuse(graph::MatmulOp mm) {
    // The epilogue: single-use elementwise consumers, each fed by the last
    // (casts included: a bf16 layer's final cast is applied in registers).
    SmallVector<Operation *> chain{mm};
    Value cur = mm.getResult();
    while (cur.hasOneUse()) {
      Operation *user = *cur.getUsers().begin();
      if (!graph::isElementwise(user) ||
          user->getOperand(0) != cur || user->getBlock() != mm->getBlock())
        break;
      if (user->getNumOperands() == 2 && user->getOperand(1) == cur) break;
      chain.push_back(user);
      cur = user->getResult(0);
    }
    // Operands of the group: everything the chain reads from outside.
    SmallVector<Value> operands;
    for (Operation *op : chain)
      for (Value v : op->getOperands())
        if (!llvm::is_contained(chain, v.getDefiningOp()) && !llvm::is_contained(operands, v))
          operands.push_back(v);
    OpBuilder b(chain.back());
    int64_t tileM = this->tileM, tileN = this->tileN;
    // Clamp the cache tile to the problem; keep MR | MC and NR | NC.
    auto ct = cur.getType().cast<RankedTensorType>();
    int64_t M = ct.getDimSize(ct.getRank() - 2), N = ct.getDimSize(ct.getRank() - 1);
    if (M < tileM) tileM = std::max<int64_t>(microM, (M + microM - 1) / microM * microM);
    if (N < tileN) tileN = std::max<int64_t>(microN, (N + microN - 1) / microN * microN);
    auto tile = b.create<schedule::TileOp>(
        mm.getLoc(), TypeRange{cur.getType()}, operands,
        ArrayRef<int64_t>{tileM, tileN, tileK}, ArrayRef<int64_t>{microM, microN});
    Block &body = tile.getBody().front();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(operands, body.getArguments())) map.map(v, arg);
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    for (Operation *op : chain) inner.clone(*op, map);
    inner.create<schedule::YieldOp>(mm.getLoc(), ValueRange{map.lookup(cur)});
    cur.replaceAllUsesWith(tile.getResult(0));
    for (Operation *op : llvm::reverse(chain)) op->erase();
  }
};

}  // namespace
