//===- Tma.cpp - tile_load_async as TMA copies with an mbarrier pipeline --===//
#include "Tma.h"

#include "MmaSync.h"
#include "tensor_map.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::cuda {
namespace {

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }

Value i32(OpBuilder &b, Location l, Value index) { return b.create<arith::IndexCastOp>(l, b.getI32Type(), index); }

void inlinePtx(OpBuilder &b, Location l, ValueRange operands, const std::string &text, const std::string &constraints) {
  b.create<LLVM::InlineAsmOp>(l, TypeRange{}, operands, text, constraints, /*has_side_effects=*/true,
                              /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
}

/// while (!mbarrier.try_wait.parity(bar, parity)) {}
void waitParity(OpBuilder &b, Location l, Value bar, Value parity) {
  auto loop = b.create<scf::WhileOp>(l, TypeRange{}, ValueRange{});
  Block *before = b.createBlock(&loop.getBefore());
  OpBuilder wb = OpBuilder::atBlockBegin(before);
  auto asmOp = wb.create<LLVM::InlineAsmOp>(
      l, wb.getI32Type(), ValueRange{bar, parity},
      "{\n.reg .pred done;\nmbarrier.try_wait.parity.shared::cta.b64 done, [$1], $2;\nselp.b32 $0, 1, 0, done;\n}",
      "=r,r,r", /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
  Value zero = wb.create<arith::ConstantIntOp>(l, 0, 32);
  Value pending = wb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, asmOp.getResult(0), zero);
  wb.create<scf::ConditionOp>(l, pending, ValueRange{});
  Block *after = b.createBlock(&loop.getAfter());
  OpBuilder ab = OpBuilder::atBlockBegin(after);
  ab.create<scf::YieldOp>(l);
  b.setInsertionPointAfter(loop);
}

/// Registers each lane has at launch when `lanes` share the SM's 64K
/// (allocated per warp in steps of 8 per lane, at most 255).
int64_t launchRegisters(int64_t lanes) {
  const int64_t warps = (lanes + 31) / 32;
  return std::min<int64_t>(255, 65536 / (warps * 32) / 8 * 8);
}

/// Builds `body` under `if (lane == 0)`.
void onLaneZero(OpBuilder &b, Location l, Value lane, function_ref<void(OpBuilder &)> body) {
  auto ifOp = b.create<scf::IfOp>(l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, lane, cIdx(b, l, 0)),
                                  false);
  OpBuilder ib = ifOp.getThenBodyBuilder();
  body(ib);
}

}  // namespace

LogicalResult lowerTileLoadsToTma(func::FuncOp f, std::vector<std::string> *maps) {
  SmallVector<int64_t> group = t::getGroupSize(f);
  int64_t lanes = 1;
  for (int64_t g : group) lanes *= g;
  // Register budgets: setmaxnreg, .inc above what a lane has at launch.
  SmallVector<t::SetMaxRegistersOp> budgets;
  f.walk([&](t::SetMaxRegistersOp op) { budgets.push_back(op); });
  // setmaxnreg is executed by whole warpgroups.
  if (!budgets.empty() && lanes % 128)
    return budgets.front()->emitOpError() << "needs groups of whole 128-lane warpgroups (setmaxnreg); this kernel's "
                                             "group has "
                                          << lanes << " lanes";
  for (t::SetMaxRegistersOp op : budgets) {
    const int64_t have = launchRegisters(lanes), want = op.getRegisters();
    if (want != have) {
      OpBuilder b(op);
      inlinePtx(b, op.getLoc(), {},
                std::string("setmaxnreg.") + (want > have ? "inc" : "dec") + ".sync.aligned.u32 " +
                    std::to_string(want) + ";",
                "");
    }
    op->erase();
  }

  SmallVector<Operation *> ops;
  int64_t stages = 0, releasers = 0;
  Operation *acquireOp = nullptr, *firstAcquire = nullptr, *firstRelease = nullptr;
  f.walk([&](Operation *op) {
    if (auto a = dyn_cast<t::TileLoadAsyncOp>(op)) stages = std::max<int64_t>(stages, a.getStages());
    if (auto c = dyn_cast<t::TileLoadCommitOp>(op)) stages = std::max<int64_t>(stages, c.getStages());
    if (auto w = dyn_cast<t::TileLoadWaitOp>(op)) stages = std::max<int64_t>(stages, w.getStages());
    if (auto r = dyn_cast<t::TileLoadReleaseOp>(op)) {
      stages = std::max<int64_t>(stages, r.getStages());
      if (!firstRelease) firstRelease = op;
    }
    if (auto a = dyn_cast<t::TileLoadAcquireOp>(op)) {
      if (!firstAcquire) firstAcquire = op;
      stages = std::max<int64_t>(stages, a.getStages());
      const auto r = static_cast<int64_t>(a.getReleasers());
      if (releasers && releasers != r) acquireOp = op;
      releasers = r;
    }
    if (isa<t::TileLoadAsyncOp, t::TileLoadCommitOp, t::TileLoadWaitOp, t::TileLoadReleaseOp, t::TileLoadAcquireOp>(
            op))
      ops.push_back(op);
  });
  if (ops.empty()) return success();
  if (acquireOp)
    return acquireOp->emitOpError() << "names " << cast<t::TileLoadAcquireOp>(acquireOp).getReleasers()
                                    << " releasers, another acquire of the kernel a different number: a stage's "
                                       "barrier counts one number of arrivals";
  // Half a pipeline would hang on the device: an acquire that no release
  // completes, or releases that no barrier was made for.
  if (firstAcquire && !firstRelease)
    return firstAcquire->emitOpError() << "waits for releases of its stage, and the kernel has no "
                                          "tessera_tile.tile_load_release: it would wait forever";
  if (firstRelease && !firstAcquire)
    return firstRelease->emitOpError() << "releases a stage, and the kernel has no tessera_tile.tile_load_acquire "
                                          "to say how many lanes release it (releasers)";
  Location fl = f.getLoc();
  // A warp-specialized pipeline: readers release stages, the producer
  // acquires them before refilling.
  const bool specialized = releasers != 0;

  // One mbarrier (8 bytes) per stage that the copies complete ("full"),
  // and with releases one per stage that each releasing subgroup arrives
  // at ("empty"), initialized by lane 0 before any use.
  OpBuilder eb = OpBuilder::atBlockBegin(&f.front());
  const int64_t numBars = specialized ? 2 * stages : stages;
  auto barType = MemRefType::get({numBars}, eb.getI64Type(), AffineMap(), eb.getI64IntegerAttr(t::kSharedMemorySpace));
  Value bars = eb.create<t::SharedAllocOp>(fl, barType, uint64_t{0}, uint64_t{8});
  Value entryLane = gpu_lowering::linearLaneId(eb, fl, group);
  onLaneZero(eb, fl, entryLane, [&](OpBuilder &ib) {
    for (int64_t s = 0; s < numBars; ++s) {
      const int64_t count = s < stages ? 1 : releasers / 32;
      inlinePtx(ib, fl, {sharedAddress(ib, fl, bars, cIdx(ib, fl, s), 8)},
                "mbarrier.init.shared::cta.b64 [$0], " + std::to_string(count) + ";", "r");
    }
    // The initialization, visible to the async proxy (the TMA unit).
    inlinePtx(ib, fl, {}, "fence.mbarrier_init.release.cluster;", "");
  });
  eb.create<t::BarrierOp>(fl);
  auto emptyBar = [&](OpBuilder &b, Location l, Value stage) {
    return sharedAddress(b, l, bars, b.create<arith::AddIOp>(l, stage, cIdx(b, l, stages)), 8);
  };

  // Tensor-map parameters: one per (source argument, view, box).
  std::map<std::tuple<unsigned, int64_t, int64_t, int64_t, int64_t>, unsigned> params;
  const std::string kernel = f.getName().str();
  const unsigned numArgs = f.getNumArguments();
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location l = op->getLoc();
    if (auto tl = dyn_cast<t::TileLoadAsyncOp>(op)) {
      auto arg = tl.getSource().dyn_cast<BlockArgument>();
      if (!arg || arg.getOwner() != &f.front())
        return op->emitOpError("copies from a kernel argument on cuda sm_90a (its TMA tensor map is made from the "
                               "buffer the launch passes)");
      auto key = std::make_tuple(arg.getArgNumber(), tl.getSourceRows(), tl.getLd(), tl.getRows(), tl.getCols());
      auto [it, added] = params.try_emplace(key, static_cast<unsigned>(params.size()));
      if (added) {
        TensorMapSpec spec;
        spec.arg = arg.getArgNumber();
        spec.element_bytes = 2;
        spec.rows = tl.getSourceRows();
        spec.ld = tl.getLd();
        spec.box_rows = tl.getRows();
        spec.box_cols = tl.getCols();
        spec.swizzle = 128;
        maps->push_back(FormatTensorMapSpec(spec));
      }
      const std::string param = kernel + "_param_" + std::to_string(numArgs + it->second);
      const int64_t bytes = tl.getRows() * tl.getCols() * 2;
      // A group copy is issued by lane 0; a single-lane one by its lane.
      auto issue = [&](function_ref<void(OpBuilder &)> body) {
        if (tl.getSingleLane()) return body(b);
        onLaneZero(b, l, gpu_lowering::linearLaneId(b, l, group), body);
      };
      issue([&](OpBuilder &ib) {
        Value bar = sharedAddress(ib, l, bars, tl.getStage(), 8);
        Value dst = sharedAddress(ib, l, tl.getTarget(), tl.getIndex(), 2);
        // Coordinates innermost first: the column, then the row.
        inlinePtx(ib, l, {bar, dst, i32(ib, l, tl.getCol()), i32(ib, l, tl.getRow())},
                  "{\n.reg .b64 tmap;\nmov.b64 tmap, " + param + ";\ncvta.param.u64 tmap, tmap;\n"
                  "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], " + std::to_string(bytes) + ";\n"
                  "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                  "[$1], [tmap, {$2, $3}], [$0];\n}",
                  "r,r,r,r");
      });
    } else if (auto c = dyn_cast<t::TileLoadCommitOp>(op)) {
      auto arrive = [&](OpBuilder &ib) {
        inlinePtx(ib, l, {sharedAddress(ib, l, bars, c.getStage(), 8)},
                  "{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [$0];\n}", "r");
      };
      if (c.getSingleLane()) arrive(b);
      else onLaneZero(b, l, gpu_lowering::linearLaneId(b, l, group), arrive);
    } else if (auto w = dyn_cast<t::TileLoadWaitOp>(op)) {
      waitParity(b, l, sharedAddress(b, l, bars, w.getStage(), 8), i32(b, l, w.getPhase()));
    } else if (auto a = dyn_cast<t::TileLoadAcquireOp>(op)) {
      waitParity(b, l, emptyBar(b, l, a.getStage()), i32(b, l, a.getPhase()));
    } else {
      // A release: the subgroup's lanes are done (bar.warp.sync: lanes of a
      // warp may diverge), then its first lane arrives for all 32.
      auto r = cast<t::TileLoadReleaseOp>(op);
      inlinePtx(b, l, {}, "bar.warp.sync -1;", "");
      Value lane = gpu_lowering::linearLaneId(b, l, group);
      Value first = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                            b.create<arith::RemUIOp>(l, lane, cIdx(b, l, 32)), cIdx(b, l, 0));
      auto ifOp = b.create<scf::IfOp>(l, first, false);
      OpBuilder ib = ifOp.getThenBodyBuilder();
      inlinePtx(ib, l, {emptyBar(ib, l, r.getStage())},
                "{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [$0];\n}", "r");
    }
    op->erase();
  }
  return success();
}

}  // namespace tessera::cuda
