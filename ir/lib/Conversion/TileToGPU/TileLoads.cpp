//===- TileLoads.cpp - tile_load_async as per-lane cp_async ---------------===//
//
// The form of tile_load_async / tile_load_commit / tile_load_wait on every
// target without a tensor-copy engine (all but cuda sm_90a): the group's
// lanes copy the box 16 bytes at a time, round robin, each chunk to its
// 128-byte-swizzled place; commit and wait are cp_async's (a wait waits
// for every copy in flight, which is the awaited stage's wherever the
// kernel waits for a stage before issuing the next one's copies).
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::gpu_lowering {

Value swizzle128(OpBuilder &b, Location l, Value e) {
  Value shifted = b.create<arith::ShRUIOp>(l, e, b.create<arith::ConstantIndexOp>(l, 3));
  Value bits = b.create<arith::AndIOp>(l, shifted, b.create<arith::ConstantIndexOp>(l, 0x38));
  return b.create<arith::XOrIOp>(l, e, bits);
}

Value linearLaneId(OpBuilder &b, Location l, ArrayRef<int64_t> group) {
  Value id = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  for (unsigned d = 1; d < group.size(); ++d) {
    if (group[d] <= 1) continue;
    int64_t below = 1;
    for (unsigned e = 0; e < d; ++e) below *= group[e];
    Value v = b.create<t::LaneIdOp>(l, b.getIndexType(), static_cast<uint64_t>(d));
    id = b.create<arith::AddIOp>(l, id, b.create<arith::MulIOp>(l, v, b.create<arith::ConstantIndexOp>(l, below)));
  }
  return id;
}

LogicalResult expandTileLoads(func::FuncOp f) {
  // A warp-specialized pipeline (one lane copies, readers release stages)
  // needs a copy engine that completes on a barrier other lanes wait at;
  // per-lane copies complete only for the lane that made them.
  WalkResult specialized = f.walk([&](Operation *op) {
    auto tl = dyn_cast<t::TileLoadAsyncOp>(op);
    auto tc = dyn_cast<t::TileLoadCommitOp>(op);
    if ((tl && tl.getSingleLane()) || (tc && tc.getSingleLane()) ||
        isa<t::TileLoadAcquireOp, t::TileLoadReleaseOp>(op)) {
      op->emitOpError() << "belongs to a warp-specialized pipeline, which needs a tensor-copy engine (cuda "
                           "sm_90a with TMA); this target stages tile loads lane by lane: schedule the matmul with "
                           "warp-specialize=0 (on cuda sm_90a, or keep the compile option tma=true)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (specialized.wasInterrupted()) return failure();
  // A register budget between warpgroups: nothing to do without setmaxnreg.
  SmallVector<Operation *> budgets;
  f.walk([&](t::SetMaxRegistersOp op) { budgets.push_back(op); });
  for (Operation *op : budgets) op->erase();
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) {
    if (isa<t::TileLoadAsyncOp, t::TileLoadCommitOp, t::TileLoadWaitOp>(op)) ops.push_back(op);
  });
  if (ops.empty()) return success();
  SmallVector<int64_t> group = t::getGroupSize(f);
  int64_t lanes = 1;
  for (int64_t g : group) lanes *= g;
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location l = op->getLoc();
    auto c = [&](OpBuilder &ob, int64_t v) -> Value { return ob.create<arith::ConstantIndexOp>(l, v); };
    if (isa<t::TileLoadCommitOp>(op)) {
      b.create<t::CpAsyncCommitOp>(l);
    } else if (isa<t::TileLoadWaitOp>(op)) {
      b.create<t::CpAsyncWaitOp>(l, uint64_t{0});
    } else {
      auto tl = cast<t::TileLoadAsyncOp>(op);
      const int64_t cols = tl.getCols(), rowChunks = cols / 8, n = tl.getRows() * rowChunks;
      Value lane = linearLaneId(b, l, group);
      for (int64_t round = 0; round * lanes < n; ++round) {
        Value chunk = b.create<arith::AddIOp>(l, lane, c(b, round * lanes));
        OpBuilder cb = b;
        if ((round + 1) * lanes > n) {
          auto ifOp = b.create<scf::IfOp>(
              l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, chunk, c(b, n)), false);
          cb = ifOp.getThenBodyBuilder();
        }
        Value r = cb.create<arith::DivUIOp>(l, chunk, c(cb, rowChunks));
        Value col8 = cb.create<arith::MulIOp>(l, cb.create<arith::RemUIOp>(l, chunk, c(cb, rowChunks)), c(cb, 8));
        Value srcRow = cb.create<arith::AddIOp>(l, tl.getRow(), r), srcCol = cb.create<arith::AddIOp>(l, tl.getCol(), col8);
        Value dst = swizzle128(cb, l, cb.create<arith::AddIOp>(
            l, tl.getIndex(), cb.create<arith::AddIOp>(l, cb.create<arith::MulIOp>(l, r, c(cb, cols)), col8)));
        // A chunk (8 elements; 8 | ld) lies wholly inside the matrix or
        // wholly outside it, where it is zeros.
        Value inside = cb.create<arith::AndIOp>(
            l, cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, srcRow, c(cb, tl.getSourceRows())),
            cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, srcCol, c(cb, tl.getLd())));
        auto edge = cb.create<scf::IfOp>(l, inside, /*withElse=*/true);
        OpBuilder in = edge.getThenBodyBuilder(), out = edge.getElseBodyBuilder();
        Value src = in.create<arith::AddIOp>(l, in.create<arith::MulIOp>(l, srcRow, c(in, tl.getLd())), srcCol);
        in.create<t::CpAsyncOp>(l, tl.getSource(), ValueRange{src}, tl.getTarget(), ValueRange{dst}, uint64_t{8});
        Type elem = tl.getTarget().getType().cast<MemRefType>().getElementType();
        Value zero = out.create<arith::ConstantOp>(l, out.getZeroAttr(elem));
        for (int64_t e = 0; e < 8; ++e)
          out.create<memref::StoreOp>(l, zero, tl.getTarget(), ValueRange{out.create<arith::AddIOp>(l, dst, c(out, e))});
      }
    }
    op->erase();
  }
  return success();
}

}  // namespace tessera::gpu_lowering
