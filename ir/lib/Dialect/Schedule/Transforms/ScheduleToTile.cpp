//===- ScheduleToTile.cpp - pipelines and prefetches -> Tile IR -----------===//
//
// `tessera_schedule.pipeline %k = lb to ub step s stages = S { body }` whose
// `prefetch`es have `double_buffer` becomes, with B = max(2, S) shared
// buffers per prefetch (B = 1 without double_buffer):
//
//   bufs = B x tessera_tile.shared_alloc
//   for j in [0, B-1): if lb + j*s < ub: issue(tile(lb + j*s) -> bufs[j])
//                      cp_async_commit
//   scf.for %k = lb to ub step s {
//     i = (k - lb) / s
//     if k + (B-1)*s < ub: issue(tile(k + (B-1)*s) -> bufs[(i + B-1) % B])
//     cp_async_commit
//     cp_async_wait B-1        // this iteration's tile has landed
//     tessera_tile.barrier     // ... for every lane
//     body, with the prefetch's value = bufs[i % B]
//     tessera_tile.barrier     // nobody reads bufs[i % B] any more
//   }
//   cp_async_wait 0
//
// `issue` is a cooperative copy: the lanes of the group split the tile into
// chunks of 16 (or 8, 4) bytes and each lane issues `cp_async` for its
// chunks. The prefetch's indices are tile indices computed from %k: they are
// re-evaluated for the tile a later iteration needs. A prefetch outside a
// pipeline is a synchronous copy into one buffer followed by a barrier.
// `tessera_schedule.copy` becomes a cooperative element copy and
// `tessera_schedule.barrier` a `tessera_tile.barrier`.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Schedule/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::schedule {
#define GEN_PASS_DEF_SCHEDULETOTILE
#include "tessera/Dialect/Schedule/Transforms/Passes.h.inc"
}  // namespace tessera::schedule

using namespace mlir;
namespace s = tessera::schedule;
namespace t = tessera::tile;

namespace {

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// Linear lane id and lane count of the group (folded later).
std::pair<Value, Value> laneAndCount(OpBuilder &b, Location loc) {
  Value lin = cIdx(b, loc, 0), n = cIdx(b, loc, 1);
  for (int d = 0; d < 3; ++d) {
    Value id = b.create<t::LaneIdOp>(loc, static_cast<int64_t>(d));
    Value c = b.create<t::LaneCountOp>(loc, static_cast<int64_t>(d));
    lin = b.create<arith::AddIOp>(loc, lin, b.create<arith::MulIOp>(loc, id, n));
    n = b.create<arith::MulIOp>(loc, n, c);
  }
  return {lin, n};
}

/// Row-major multi-index of linear element `e` in `shape`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value e, ArrayRef<int64_t> shape) {
  SmallVector<Value> idx(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    idx[d] = d == 0 ? e : b.create<arith::RemUIOp>(loc, e, cIdx(b, loc, shape[d])).getResult();
    if (d) e = b.create<arith::DivUIOp>(loc, e, cIdx(b, loc, shape[d]));
  }
  return idx;
}

/// for (c = lane; c < n; c += lanes) body(c)
template <typename Fn>
void laneStrided(OpBuilder &b, Location loc, int64_t n, Fn body) {
  auto [lane, lanes] = laneAndCount(b, loc);
  auto loop = b.create<scf::ForOp>(loc, lane, cIdx(b, loc, n), lanes);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

/// Every lane copies its chunks of tile `tileIdx` of `src` into `dst`.
void issue(OpBuilder &b, Location loc, Value src, ValueRange tileIdx, Value dst) {
  auto st = dst.getType().cast<MemRefType>();
  ArrayRef<int64_t> shape = st.getShape();
  int64_t eb = std::max<int64_t>(1, st.getElementTypeBitWidth() / 8);
  int64_t v = 1;
  for (int64_t bytes : {16, 8, 4})
    if (bytes % eb == 0 && shape.back() % (bytes / eb) == 0) { v = bytes / eb; break; }
  laneStrided(b, loc, st.getNumElements() / v, [&](Value c) {
    Value e = b.create<arith::MulIOp>(loc, c, cIdx(b, loc, v));
    SmallVector<Value> d = delinearize(b, loc, e, shape), sidx;
    for (auto [i, ti] : llvm::enumerate(tileIdx))
      sidx.push_back(b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, ti, cIdx(b, loc, shape[i])), d[i]));
    b.create<t::CpAsyncOp>(loc, src, sidx, dst, d, b.getI64IntegerAttr(v));
  });
}

/// Picks bufs[slot] (slot a dynamic index).
Value selectBuffer(OpBuilder &b, Location loc, Value slot, ArrayRef<Value> bufs) {
  Value r = bufs[0];
  for (size_t j = 1; j < bufs.size(); ++j) {
    Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, slot, cIdx(b, loc, j));
    r = b.create<arith::SelectOp>(loc, eq, bufs[j], r);
  }
  return r;
}

struct ScheduleToTilePass : s::impl::ScheduleToTileBase<ScheduleToTilePass> {
  using ScheduleToTileBase::ScheduleToTileBase;

  void runOnOperation() override {
    ModuleOp m = getOperation();
    SmallVector<s::PipelineOp> pipes;
    m.walk([&](s::PipelineOp p) { pipes.push_back(p); });
    // Innermost first is not needed: nested pipelines are rejected.
    for (s::PipelineOp p : pipes)
      if (failed(lowerPipeline(p))) return signalPassFailure();
    SmallVector<Operation *> rest;
    m.walk([&](Operation *op) {
      if (isa<s::PrefetchOp, s::CopyOp, s::BarrierOp>(op)) rest.push_back(op);
    });
    for (Operation *op : rest)
      if (failed(lowerLoose(op))) return signalPassFailure();
  }

  /// Re-evaluates `v` (computed in the pipeline body from the induction
  /// variable) for another iteration: `map` sends the iv to its new value.
  FailureOr<Value> remap(OpBuilder &b, Value v, Block *body, IRMapping &map) {
    if (map.contains(v)) return map.lookup(v);
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body) {
      if (v.getParentBlock() == body || (def && body->getParentOp()->isProperAncestor(def)))
        return failure();
      return v;  // defined outside the pipeline
    }
    if (!isMemoryEffectFree(def) || def->getNumRegions()) return failure();
    for (Value o : def->getOperands())
      if (failed(remap(b, o, body, map))) return failure();
    Operation *c = b.clone(*def, map);
    return c->getResult(v.cast<OpResult>().getResultNumber());
  }

  LogicalResult lowerPipeline(s::PipelineOp p) {
    if (p->getParentOfType<s::PipelineOp>())
      return p.emitOpError("nested pipelines are not supported by tessera-schedule-to-tile");
    Location loc = p.getLoc();
    Block *body = &p.getBody().front();
    Value iv = p.getInductionVar();
    SmallVector<s::PrefetchOp> pre;
    for (Operation &op : *body)
      if (auto f = dyn_cast<s::PrefetchOp>(op)) pre.push_back(f);
    bool db = llvm::any_of(pre, [](s::PrefetchOp f) { return f.getDoubleBuffer(); });
    for (s::PrefetchOp f : pre) {
      if (f.getScope() != "shared")
        return f.emitOpError("scope 'local' is not lowered yet; use scope = \"shared\"");
      if (!t::isSharedMemory(f.getType().cast<MemRefType>()))
        return f.emitOpError("a shared-scope tile must be a memref in memory space 3");
      if (f.getDoubleBuffer() != db)
        return f.emitOpError("all prefetches of a pipeline must agree on double_buffer");
    }
    int64_t nbuf = db ? std::max<int64_t>(2, p.getStages()) : 1;

    OpBuilder b(p);
    SmallVector<SmallVector<Value>> bufs(pre.size());
    for (auto [i, f] : llvm::enumerate(pre))
      for (int64_t j = 0; j < nbuf; ++j)
        bufs[i].push_back(b.create<t::SharedAllocOp>(loc, f.getType(), uint64_t{0}));

    Value lb = p.getLb(), ub = p.getUb(), step = p.getStep();
    // Issues the tiles of iteration `k` into slot `slot` of each prefetch,
    // when k < ub.
    auto issueAll = [&](OpBuilder &ob, Value k, Value slot) -> LogicalResult {
      Value inRange = ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, k, ub);
      auto guard = ob.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
      OpBuilder gb = guard.getThenBodyBuilder();
      IRMapping map;
      map.map(iv, k);
      for (auto [i, f] : llvm::enumerate(pre)) {
        SmallVector<Value> idx;
        for (Value v : f.getIndices()) {
          FailureOr<Value> r = remap(gb, v, body, map);
          if (failed(r))
            return f.emitOpError("tile indices must be pure functions of the induction "
                                 "variable and values defined outside the pipeline");
          idx.push_back(*r);
        }
        issue(gb, loc, f.getSource(), idx, selectBuffer(gb, loc, slot, bufs[i]));
      }
      return success();
    };

    // Prologue: the first B-1 tiles.
    for (int64_t j = 0; j + 1 < nbuf; ++j) {
      Value k = b.create<arith::AddIOp>(loc, lb, b.create<arith::MulIOp>(loc, step, cIdx(b, loc, j)));
      if (failed(issueAll(b, k, cIdx(b, loc, j)))) return failure();
      b.create<t::CpAsyncCommitOp>(loc);
    }
    auto loop = b.create<scf::ForOp>(loc, lb, ub, step);
    OpBuilder lbld = OpBuilder::atBlockBegin(loop.getBody());
    Value k = loop.getInductionVar();
    Value i = lbld.create<arith::DivUIOp>(loc, lbld.create<arith::SubIOp>(loc, k, lb), step);
    Value ahead = lbld.create<arith::AddIOp>(
        loc, k, lbld.create<arith::MulIOp>(loc, step, cIdx(lbld, loc, nbuf - 1)));
    Value nslot = lbld.create<arith::RemUIOp>(
        loc, lbld.create<arith::AddIOp>(loc, i, cIdx(lbld, loc, nbuf - 1)), cIdx(lbld, loc, nbuf));
    if (failed(issueAll(lbld, ahead, nslot))) return failure();
    lbld.create<t::CpAsyncCommitOp>(loc);
    lbld.create<t::CpAsyncWaitOp>(loc, lbld.getI64IntegerAttr(nbuf - 1));
    lbld.create<t::BarrierOp>(loc);
    Value cur = lbld.create<arith::RemUIOp>(loc, i, cIdx(lbld, loc, nbuf));
    for (auto [j, f] : llvm::enumerate(pre))
      f.getResult().replaceAllUsesWith(selectBuffer(lbld, loc, cur, bufs[j]));
    for (s::PrefetchOp f : pre) f.erase();
    // Move the body (minus its yield) into the loop.
    Operation *yield = loop.getBody()->getTerminator();
    body->getTerminator()->erase();
    iv.replaceAllUsesWith(k);
    loop.getBody()->getOperations().splice(Block::iterator(yield), body->getOperations());
    OpBuilder eb(yield);
    eb.create<t::BarrierOp>(loc);
    b.setInsertionPointAfter(loop);
    b.create<t::CpAsyncWaitOp>(loc, b.getI64IntegerAttr(0));
    p.erase();
    return success();
  }

  LogicalResult lowerLoose(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (isa<s::BarrierOp>(op)) {
      b.create<t::BarrierOp>(loc);
    } else if (auto c = dyn_cast<s::CopyOp>(op)) {
      auto st = c.getSource().getType().cast<MemRefType>();
      laneStrided(b, loc, st.getNumElements(), [&](Value e) {
        SmallVector<Value> idx = delinearize(b, loc, e, st.getShape());
        Value v = b.create<memref::LoadOp>(loc, c.getSource(), idx);
        b.create<memref::StoreOp>(loc, v, c.getTarget(), idx);
      });
    } else if (auto f = dyn_cast<s::PrefetchOp>(op)) {
      if (f.getScope() != "shared" || !t::isSharedMemory(f.getType().cast<MemRefType>()))
        return f.emitOpError("only shared-scope prefetches into memory space 3 are lowered");
      Value buf = b.create<t::SharedAllocOp>(loc, f.getType(), uint64_t{0});
      issue(b, loc, f.getSource(), f.getIndices(), buf);
      b.create<t::CpAsyncCommitOp>(loc);
      b.create<t::CpAsyncWaitOp>(loc, b.getI64IntegerAttr(0));
      b.create<t::BarrierOp>(loc);
      f.getResult().replaceAllUsesWith(buf);
    }
    op->erase();
    return success();
  }
};

}  // namespace
