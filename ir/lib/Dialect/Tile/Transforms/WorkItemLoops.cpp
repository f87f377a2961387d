//===- WorkItemLoops.cpp - lanes of a tile group as loops -----------------===//
//
// PoCL's "work-item loops" for Tile IR kernels on backends without SIMT
// hardware (the cpu plugin runs one tile group per call, on one thread):
//
//  1. subgroup ops are rewritten for a subgroup of one lane (shuffle and
//     subgroup_reduce return their operand, subgroup_size is 1);
//  2. `scf.for` loops that contain a barrier and carry values (iter_args)
//     get them demoted to per-lane arrays, so every value that crosses a
//     barrier goes through memory;
//  3. every block that contains barriers (the kernel body, and the bodies of
//     `scf.for` / `scf.if` that contain barriers: "group-level" code) is cut
//     at each barrier into regions; each region becomes one `scf.for` over
//     the group's lanes (a "lane loop"). Ops whose value is the same for all
//     lanes (constants, group ids, shared_alloc, pure ops of those) stay at
//     group level, before the lane loop;
//  4. `tessera_tile.lane_id` becomes the lane loop's index (split into x, y,
//     z for 2-D and 3-D groups);
//  5. a lane-private value defined in one lane loop and used in another
//     (i.e. across a barrier) is kept in a per-lane array
//     (`memref.alloca` of the group size at the kernel's entry): stored by
//     its lane after it is computed, loaded by the same lane where it is
//     used. Pure values whose type cannot live in memory (memref views) are
//     recomputed instead. A lane-private value used by group-level code
//     (a loop bound, an `scf.if` condition: must be uniform) is read from
//     lane 0.
//  6. barriers are erased: the end of a lane loop is the barrier.
//
// Barriers may sit (nested) in `scf.for` and `scf.if` with uniform bounds
// and conditions, as on GPUs; anywhere else is an error.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace tessera::tile {
#define GEN_PASS_DEF_WORKITEMLOOPS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
}  // namespace tessera::tile

using namespace mlir;
using namespace tessera::tile;

namespace {

struct WorkItemLoopsPass
    : tessera::tile::impl::WorkItemLoopsBase<WorkItemLoopsPass> {
  using WorkItemLoopsBase::WorkItemLoopsBase;

  func::FuncOp fn;
  SmallVector<int64_t, 3> size;  // lanes per group in x, y, z
  int64_t lanes = 1;
  DenseSet<Operation *> hasBarrier;  // ops containing a barrier
  DenseSet<Value> uniform;           // values equal in every lane
  SmallVector<scf::ForOp> laneLoops;
  DenseSet<Operation *> laneLoopSet;
  DenseSet<Operation *> groupLevel;  // per-lane arrays made by this pass

  static bool storable(Type t) {
    return t.isa<VectorType>() || (MemRefType::isValidElementType(t) && !t.isa<ShapedType>());
  }

  void runOnOperation() override {
    fn = getOperation();
    if (fn.isExternal()) return;
    bool tileKernel = fn->hasAttr(kGroupSizeAttr);
    fn.walk([&](Operation *op) {
      if (isa<LaneIdOp, BarrierOp, ShuffleOp, SubgroupReduceOp, SubgroupSizeOp>(op))
        tileKernel = true;
    });
    if (!tileKernel) return;
    size = getGroupSize(fn);
    lanes = size[0] * size[1] * size[2];
    if (fn.getNumResults() != 0) {
      fn.emitError("tessera-tile-work-item-loops: a Tile IR kernel returns nothing");
      return signalPassFailure();
    }
    rewriteSubgroupOps();
    if (failed(checkBarriers()) || failed(demoteLoopCarried())) return signalPassFailure();
    for (BlockArgument a : fn.getArguments()) uniform.insert(a);
    if (failed(processBlock(fn.front()))) return signalPassFailure();
    if (failed(replaceLaneIds()) || failed(keepAcrossBarriers())) return signalPassFailure();
    fn.walk([](BarrierOp b) { b.erase(); });
  }

  //===--- 1. subgroups of one lane ---------------------------------------===//
  void rewriteSubgroupOps() {
    fn.walk([&](Operation *op) {
      if (auto s = dyn_cast<ShuffleOp>(op)) {
        // Every other lane is outside a one-lane subgroup: own value.
        s.replaceAllUsesWith(s.getValue());
        s.erase();
      } else if (auto r = dyn_cast<SubgroupReduceOp>(op)) {
        r.replaceAllUsesWith(r.getValue());
        r.erase();
      } else if (auto z = dyn_cast<SubgroupSizeOp>(op)) {
        OpBuilder b(z);
        z.replaceAllUsesWith(b.create<arith::ConstantIndexOp>(z.getLoc(), 1).getResult());
        z.erase();
      }
    });
  }

  //===--- where barriers may be ------------------------------------------===//
  LogicalResult checkBarriers() {
    WalkResult r = fn.walk([&](BarrierOp b) {
      for (Operation *p = b->getParentOp(); p && p != fn; p = p->getParentOp()) {
        if (!isa<scf::ForOp, scf::IfOp>(p)) {
          b.emitOpError() << "inside '" << p->getName()
                          << "' cannot be run as work-item loops: barriers may only be "
                             "nested in scf.for and scf.if (uniform control flow)";
          return WalkResult::interrupt();
        }
        if (auto i = dyn_cast<scf::IfOp>(p); i && i.getNumResults()) {
          b.emitOpError("inside an scf.if with results is not supported: pass the values "
                        "through memory");
          return WalkResult::interrupt();
        }
        hasBarrier.insert(p);
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// Linear lane index built from lane_id ops (rewritten in step 4).
  Value linearLane(OpBuilder &b, Location loc) {
    Value lin = b.create<arith::ConstantIndexOp>(loc, 0);
    int64_t stride = 1;
    for (int d = 0; d < 3; ++d) {
      if (size[d] == 1) continue;
      Value id = b.create<LaneIdOp>(loc, static_cast<int64_t>(d));
      if (stride != 1)
        id = b.create<arith::MulIOp>(loc, id, b.create<arith::ConstantIndexOp>(loc, stride));
      lin = b.create<arith::AddIOp>(loc, lin, id);
      stride *= size[d];
    }
    return lin;
  }

  Value laneArray(Type t, Location loc) {
    OpBuilder b(fn.getContext());
    b.setInsertionPointToStart(&fn.front());
    // A byte buffer viewed as the array: MLIR 16 lowers memref.alloca of N
    // elements to an LLVM alloca of N * sizeof(T) *elements* (oversized by
    // sizeof(T), megabytes for vector tiles); for i8 both agree.
    // Per-lane stride as LLVM lays the type out (power-of-two vectors).
    int64_t bytes;
    if (auto vt = t.dyn_cast<VectorType>()) {
      bytes = llvm::PowerOf2Ceil(vt.getShape().back() *
                                 std::max<int64_t>(1, vt.getElementTypeBitWidth() / 8));
      for (int64_t d : vt.getShape().drop_back()) bytes *= d;
    } else {
      bytes = llvm::PowerOf2Ceil(t.isIndex() ? 8 : llvm::divideCeil(t.getIntOrFloatBitWidth(), 8));
    }
    auto raw = b.create<memref::AllocaOp>(loc, MemRefType::get({lanes * bytes}, b.getI8Type()),
                                          b.getI64IntegerAttr(64));
    Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
    auto view = b.create<memref::ViewOp>(loc, MemRefType::get({lanes}, t), raw, c0, ValueRange{});
    for (Operation *op : {raw.getOperation(), c0.getDefiningOp(), view.getOperation()})
      groupLevel.insert(op);
    return view;
  }

  //===--- 2. loop-carried values across barriers -> per-lane arrays -------===//
  LogicalResult demoteLoopCarried() {
    SmallVector<scf::ForOp> loops;
    fn.walk([&](scf::ForOp f) {
      if (hasBarrier.contains(f) && f.getNumIterOperands()) loops.push_back(f);
    });
    for (scf::ForOp f : loops) {
      Location loc = f.getLoc();
      SmallVector<Value> arrays;
      for (Value v : f.getInitArgs()) {
        if (!storable(v.getType()))
          return f.emitOpError() << "carries a " << v.getType()
                                 << " across a barrier; it cannot be kept per lane";
        arrays.push_back(laneArray(v.getType(), loc));
      }
      OpBuilder b(f);
      Value lane = linearLane(b, loc);
      for (auto [v, arr] : llvm::zip(f.getInitArgs(), arrays))
        b.create<memref::StoreOp>(loc, v, arr, lane);
      auto nf = b.create<scf::ForOp>(loc, f.getLowerBound(), f.getUpperBound(), f.getStep());
      Block *nb = nf.getBody();
      nb->getTerminator()->erase();
      Block *ob = f.getBody();
      nb->getOperations().splice(nb->end(), ob->getOperations());
      ob->getArgument(0).replaceAllUsesWith(nf.getInductionVar());
      OpBuilder ib = OpBuilder::atBlockBegin(nb);
      Value l0 = linearLane(ib, loc);
      for (auto [arg, arr] : llvm::zip(ob->getArguments().drop_front(), arrays))
        arg.replaceAllUsesWith(ib.create<memref::LoadOp>(loc, arr, l0).getResult());
      auto yield = cast<scf::YieldOp>(nb->getTerminator());
      ib.setInsertionPoint(yield);
      Value l1 = linearLane(ib, loc);
      for (auto [v, arr] : llvm::zip(yield.getOperands(), arrays))
        ib.create<memref::StoreOp>(loc, v, arr, l1);
      ib.create<scf::YieldOp>(loc);
      yield.erase();
      b.setInsertionPointAfter(nf);
      Value l2 = linearLane(b, loc);
      for (auto [r, arr] : llvm::zip(f.getResults(), arrays))
        r.replaceAllUsesWith(b.create<memref::LoadOp>(loc, arr, l2).getResult());
      hasBarrier.insert(nf);
      hasBarrier.erase(f);
      f.erase();
    }
    return success();
  }

  //===--- 3. regions between barriers -> lane loops -----------------------===//
  bool isUniformOp(Operation *op) {
    if (isa<LaneIdOp>(op)) return false;
    if (groupLevel.contains(op)) return true;
    if (isa<GroupIdOp, GroupCountOp, LaneCountOp, TileIdOp, SharedAllocOp>(op)) return true;
    if (op->getNumRegions() || !isMemoryEffectFree(op)) return false;
    return llvm::all_of(op->getOperands(), [&](Value v) { return uniform.contains(v); });
  }

  void flush(SmallVectorImpl<Operation *> &seg) {
    SmallVector<Operation *> laneOps;
    for (Operation *op : seg) {
      if (isUniformOp(op)) {
        for (Value r : op->getResults()) uniform.insert(r);
      } else {
        laneOps.push_back(op);
      }
    }
    if (!laneOps.empty()) {
      Operation *last = seg.back();
      OpBuilder b(last->getContext());
      b.setInsertionPointAfter(last);
      Location loc = laneOps.front()->getLoc();
      Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
      Value n = b.create<arith::ConstantIndexOp>(loc, lanes);
      Value c1 = b.create<arith::ConstantIndexOp>(loc, 1);
      for (Value v : {c0, n, c1}) uniform.insert(v);
      auto loop = b.create<scf::ForOp>(loc, c0, n, c1);
      loop->setAttr("tessera.lane_loop", b.getUnitAttr());
      Operation *yield = loop.getBody()->getTerminator();
      for (Operation *op : laneOps) op->moveBefore(yield);
      laneLoops.push_back(loop);
      laneLoopSet.insert(loop);
    }
    seg.clear();
  }

  LogicalResult processBlock(Block &block) {
    SmallVector<Operation *> seg;
    for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
      if (isa<BarrierOp>(op)) {
        flush(seg);
        continue;
      }
      if (hasBarrier.contains(&op)) {
        flush(seg);
        if (auto f = dyn_cast<scf::ForOp>(op)) {
          uniform.insert(f.getInductionVar());
          if (failed(processBlock(*f.getBody()))) return failure();
        } else if (auto i = dyn_cast<scf::IfOp>(op)) {
          if (failed(processBlock(i.getThenRegion().front()))) return failure();
          if (!i.getElseRegion().empty() && failed(processBlock(i.getElseRegion().front())))
            return failure();
        }
        continue;
      }
      seg.push_back(&op);
    }
    flush(seg);
    return success();
  }

  scf::ForOp enclosingLaneLoop(Operation *op) {
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
      if (laneLoopSet.contains(p)) return cast<scf::ForOp>(p);
    return nullptr;
  }

  //===--- 4. lane ids ------------------------------------------------------===//
  LogicalResult replaceLaneIds() {
    DenseMap<Operation *, SmallVector<Value, 3>> ids;
    auto idsOf = [&](scf::ForOp loop) -> ArrayRef<Value> {
      auto &v = ids[loop];
      if (!v.empty()) return v;
      OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
      Location loc = loop.getLoc();
      Value l = loop.getInductionVar();
      int64_t stride = 1;
      for (int d = 0; d < 3; ++d) {
        Value id = l;
        if (size[d] == 1) {
          id = b.create<arith::ConstantIndexOp>(loc, 0);
        } else {
          if (stride != 1)
            id = b.create<arith::DivUIOp>(loc, id, b.create<arith::ConstantIndexOp>(loc, stride));
          if (stride * size[d] != lanes)
            id = b.create<arith::RemUIOp>(loc, id, b.create<arith::ConstantIndexOp>(loc, size[d]));
        }
        v.push_back(id);
        stride *= size[d];
      }
      return v;
    };
    SmallVector<LaneIdOp> laneIds;
    fn.walk([&](LaneIdOp l) { laneIds.push_back(l); });
    for (LaneIdOp l : laneIds) {
      for (OpOperand &use : llvm::make_early_inc_range(l->getUses())) {
        scf::ForOp loop = enclosingLaneLoop(use.getOwner());
        if (!loop)
          return use.getOwner()->emitOpError(
              "uses the lane id in group-level (uniform) code, e.g. as a bound of a loop "
              "that contains a barrier");
        use.set(idsOf(loop)[l.getDim()]);
      }
      l.erase();
    }
    return success();
  }

  //===--- 5. lane-private values that cross a barrier ---------------------===//
  LogicalResult keepAcrossBarriers() {
    DenseMap<Value, Value> arrays;
    bool changed = true;
    while (changed) {
      changed = false;
      for (scf::ForOp loop : laneLoops) {
        for (Operation &op : loop.getBody()->without_terminator()) {
          for (Value r : op.getResults()) {
            SmallVector<OpOperand *> outside;
            for (OpOperand &use : r.getUses())
              if (!loop->isProperAncestor(use.getOwner())) outside.push_back(&use);
            if (outside.empty()) continue;
            changed = true;
            if (!storable(r.getType())) {
              if (!isMemoryEffectFree(&op) || op.getNumRegions())
                return op.emitOpError() << "result of type " << r.getType()
                                        << " is used across a barrier and cannot be kept per lane";
              // Recompute it where it is used (its operands follow in the
              // next round).
              for (OpOperand *use : outside) {
                OpBuilder b(use->getOwner());
                Operation *c = b.clone(op);
                use->set(c->getResult(r.cast<OpResult>().getResultNumber()));
                if (scf::ForOp other = enclosingLaneLoop(c); !other) {
                  return op.emitOpError()
                         << "lane-private " << r.getType() << " is used by group-level code";
                }
              }
              continue;
            }
            Value &arr = arrays[r];
            if (!arr) {
              arr = laneArray(r.getType(), op.getLoc());
              OpBuilder b(&op);
              b.setInsertionPointAfter(&op);
              b.create<memref::StoreOp>(op.getLoc(), r, arr, loop.getInductionVar());
            }
            for (OpOperand *use : outside) {
              OpBuilder b(use->getOwner());
              Value idx;
              if (scf::ForOp other = enclosingLaneLoop(use->getOwner()))
                idx = other.getInductionVar();
              else  // group-level code: the value must be uniform; lane 0's
                idx = b.create<arith::ConstantIndexOp>(op.getLoc(), 0);
              use->set(b.create<memref::LoadOp>(op.getLoc(), arr, idx).getResult());
            }
          }
        }
      }
    }
    return success();
  }
};

}  // namespace
