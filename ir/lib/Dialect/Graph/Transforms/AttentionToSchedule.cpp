//===- AttentionToSchedule.cpp - attention -> flash_attention -------------===//
//
// matmul(Q, K^T) -> [mul/div by a splat] [a causal mask] -> softmax(last
// dim) -> matmul(P, V), single matrices or heads, becomes one
// tessera_schedule.flash_attention (online softmax over key/value blocks:
// the score matrix is never formed).  Part of --tessera-graph-to-schedule
// (GraphToSchedule.cpp runs it first, so that the two matmuls are not
// grouped into tiles of their own); --tessera-grad uses the same analysis
// (analyzeAttention) to give such a chain one attention_grad.
//
//===----------------------------------------------------------------------===//
#include "GraphToSchedule.h"

#include <optional>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace tessera;

namespace {
/// A splat float constant (the attention scale), or nothing.
std::optional<double> splatValue(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst) return std::nullopt;
  auto dense = cst.getValue().dyn_cast<DenseFPElementsAttr>();
  if (!dense || !dense.isSplat()) return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

}  // namespace

/// matmul(Q, K^T) -> [mul/div by a splat] and [a causal mask], in either
/// order -> softmax(last dim) -> matmul(P, V), every intermediate used
/// once, all in one block, rank 2 or 3 (a batch of heads: equal batch
/// dims), f32 (flash_attention keeps its blocks in f32 and does not round
/// the scores and probabilities to a narrower type as the unfused program
/// does), or bf16 / f16 with `sixteenBit` (the warpgroup kernel, which
/// does the same on tensor cores); Q, V and the result row-major.
std::optional<graph::AttentionChain> tessera::graph::analyzeAttention(graph::SoftmaxOp sm, bool sixteenBit) {
  auto st = sm.getInput().getType().cast<RankedTensorType>();
  const int64_t rank = st.getRank();
  Type et = st.getElementType();
  if ((rank != 2 && rank != 3) || static_cast<int64_t>(sm.getDim()) != rank - 1 ||
      !(et.isF32() || (sixteenBit && (et.isBF16() || et.isF16()))))
    return std::nullopt;
  if (!sm.getResult().hasOneUse()) return std::nullopt;
  auto pv = dyn_cast<graph::MatmulOp>(*sm.getResult().getUsers().begin());
  if (!pv || pv.getLhs() != sm.getResult() || pv.getRhs() == sm.getResult()) return std::nullopt;
  Block *block = sm->getBlock();
  AttentionChain chain;
  chain.softmax = sm;
  chain.pv = pv;
  // Peel the scale and the mask off the softmax's input, down to Q K^T.
  Operation *scaleOp = nullptr, *maskOp = nullptr;
  Value s = sm.getInput();
  while (Operation *def = s.getDefiningOp()) {
    if (!s.hasOneUse() || def->getBlock() != block) return std::nullopt;
    if (!scaleOp && isa<graph::MulOp, graph::DivOp>(def)) {
      // scores * c, scores / c, or c * scores with a splat c that does not
      // broadcast the scores to a larger shape.
      unsigned scoreIdx = 0;
      std::optional<double> c = splatValue(def->getOperand(1));
      if (!c && isa<graph::MulOp>(def)) {
        c = splatValue(def->getOperand(0));
        scoreIdx = 1;
      }
      if (!c || def->getOperand(0) == def->getOperand(1) ||
          def->getOperand(scoreIdx).getType() != def->getResult(0).getType())
        return std::nullopt;
      if (isa<graph::DivOp>(def) && *c == 0.0) return std::nullopt;
      chain.scale = isa<graph::MulOp>(def) ? *c : 1.0 / *c;
      scaleOp = def;
      chain.peeled.push_back(def);
      s = def->getOperand(scoreIdx);
      continue;
    }
    if (!maskOp && isa<graph::AddOp, graph::SelectOp>(def)) {
      // A scale applied after the mask scales the masked values too.
      Value scores = graph::matchCausalMask(def, scaleOp ? chain.scale : 1.0);
      if (!scores) return std::nullopt;
      maskOp = def;
      chain.causal = true;
      chain.peeled.push_back(def);
      s = scores;
      continue;
    }
    break;
  }
  auto qk = s.getDefiningOp<graph::MatmulOp>();
  if (!qk || !s.hasOneUse() || qk->getBlock() != block || pv->getBlock() != block) return std::nullopt;
  chain.qk = qk;
  for (Value v : {qk.getLhs(), qk.getRhs(), pv.getRhs(), pv.getResult()}) {
    auto t = v.getType().cast<RankedTensorType>();
    if (t.getRank() != rank || t.getElementType() != st.getElementType()) return std::nullopt;
    if (rank == 3 && t.getDimSize(0) != st.getDimSize(0)) return std::nullopt;  // no broadcast batch
  }
  for (Value v : {qk.getLhs(), pv.getRhs(), pv.getResult()})
    if (auto l = graph::getLayout(v.getType()); l && !l.isRowMajor()) return std::nullopt;
  return chain;
}

void tessera::graph::matchAttention(graph::SoftmaxOp sm, int64_t attnBlockQ, int64_t attnBlockKV,
                                    int64_t sharedBytes, bool f32, bool wgmma) {
  std::optional<AttentionChain> chain = analyzeAttention(sm, wgmma);
  if (!chain) return;
  const bool sixteenBit = !sm.getInput().getType().cast<RankedTensorType>().getElementType().isF32();
  if (!sixteenBit && !f32) return;
  const int64_t rank = sm.getInput().getType().cast<RankedTensorType>().getRank();
  graph::MatmulOp qk = chain->qk, pv = chain->pv;
  ArrayRef<Operation *> peeled = chain->peeled;
  // K^T = convert_layout(col_major K^T): the col_major tensor's storage is
  // K row-major, so hand that tensor to the kernel and skip the copy
  // (single matrices; a batch's K^T is handed over row-major).
  // (The warpgroup kernel's tensor copies read K^T row-major.)
  Value kt = qk.getRhs();
  graph::ConvertLayoutOp kconv = kt.getDefiningOp<graph::ConvertLayoutOp>();
  if (kconv && rank == 2 && !sixteenBit) {
    auto in = graph::getLayout(kconv.getInput().getType());
    if (in && in.getKind() == graph::LayoutKind::ColMajor) kt = kconv.getInput();
    else kconv = nullptr;
  } else {
    kconv = nullptr;
  }
  if (auto l = graph::getLayout(kt.getType()); rank == 3 && l && !l.isRowMajor()) return;
  // The new op is created at `pv`: the key must be defined before it.
  auto q = qk.getLhs().getType().cast<RankedTensorType>();
  int64_t sq = q.getDimSize(rank - 2);
  int64_t skv = kt.getType().cast<RankedTensorType>().getDimSize(rank - 1);
  const int64_t d = q.getDimSize(rank - 1), dv = pv.getType().cast<RankedTensorType>().getDimSize(rank - 1);
  // The kernel's shared memory: the K^T, V and score blocks, and m, l and
  // the rescale per query row.
  auto [bq, bkv] = attentionBlocks(sq, skv, attnBlockQ, attnBlockKV, sharedBytes, [&](int64_t bq, int64_t bkv) {
    return d * bkv + bkv * dv + bq * bkv + 3 * bq;
  });
  if (sixteenBit) {
    // The warpgroup kernel's blocks, the largest that fits; a 16-bit
    // attention it cannot take stays unfused (its matmuls still reach
    // the matrix units).
    auto qt = q, kT = kt.getType().cast<RankedTensorType>(), vt = pv.getRhs().getType().cast<RankedTensorType>();
    bool found = false;
    for (auto [wq, wkv] : {std::pair<int64_t, int64_t>{128, 128}, {128, 64}, {64, 128}, {64, 64}}) {
      if (wq > sq || wkv > skv || !schedule::wgmmaAttentionMisfit(qt, kT, vt, wq, wkv).empty()) continue;
      bq = wq, bkv = wkv, found = true;
      break;
    }
    if (!found) return;
  }
  OpBuilder b(pv);
  auto fa = b.create<schedule::FlashAttentionOp>(
      pv.getLoc(), pv.getType(), qk.getLhs(), kt, pv.getRhs(),
      b.getF32FloatAttr(static_cast<float>(chain->scale)),
      b.getI64IntegerAttr(bq), b.getI64IntegerAttr(bkv), chain->causal ? b.getUnitAttr() : UnitAttr(),
      sixteenBit ? b.getStringAttr("wgmma") : StringAttr());
  pv.getResult().replaceAllUsesWith(fa.getResult());
  pv->erase();
  sm->erase();
  // The scale and the mask, then what computed their constants and nothing
  // else reads (the mask's iota arithmetic).
  SmallVector<Operation *> dead;
  auto definers = [&](Operation *op) {
    for (Value o : op->getOperands())
      if (Operation *def = o.getDefiningOp();
          def && def != qk && !llvm::is_contained(peeled, def) && !llvm::is_contained(dead, def))
        dead.push_back(def);
  };
  for (Operation *op : peeled) definers(op);
  // Outermost first: each one's only user is gone by then.
  for (Operation *op : peeled) op->erase();
  qk->erase();
  if (kconv && kconv->use_empty()) kconv->erase();
  // Every op in `dead` is still alive: an op is erased only once nothing
  // uses it, i.e. after every op that could list it again.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < dead.size(); ++i) {
      Operation *def = dead[i];
      if (!def->use_empty() || !isMemoryEffectFree(def)) continue;
      dead.erase(dead.begin() + i);
      definers(def);
      def->erase();
      changed = true;
      break;
    }
  }
}
