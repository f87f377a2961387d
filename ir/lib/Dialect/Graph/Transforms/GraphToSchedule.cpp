//===- GraphToSchedule.cpp - tile matmuls, fuse elementwise epilogues -----===//
#include "tessera/Dialect/Graph/Transforms/Passes.h"

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
    SmallVector<graph::MatmulOp> matmuls;
    getOperation().walk([&](graph::MatmulOp mm) {
      if (!mm->getParentOfType<schedule::TileOp>()) matmuls.push_back(mm);
    });
    for (graph::MatmulOp mm : matmuls) fuse(mm);
  }

  void fuse(graph::MatmulOp mm) {
    // The epilogue: single-use elementwise consumers, each fed by the last.
    SmallVector<Operation *> chain{mm};
    Value cur = mm.getResult();
    while (cur.hasOneUse()) {
      Operation *user = *cur.getUsers().begin();
      if (!graph::isElementwise(user) || isa<graph::CastOp>(user) ||
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
