//===- TileToCPU.cpp - Tile IR kernels -> scf/memref/vector for the cpu ---===//
//
// Runs after tessera-tile-work-item-loops (lanes are loops, barriers gone).
// Each kernel (a func.func with tessera_tile.group_size) gets the cpu
// kernel signature that tessera-cpu-kernel-abi exports:
//
//   @k(user args..., gid.x, gid.y, gid.z, grid.x, grid.y, grid.z : index,
//      smem : memref<65536xi8>)      // TsCpuLaunchContext::shared_memory
//
// and the `tessera.cpu_kernel` launch description. Lowering of each op:
//
//  group_id / group_count / tile_id   the launch context's ids and grid
//  lane_count, subgroup_size          constants (subgroup size 1 on cpu)
//  shared_alloc                       memref.view into ctx->shared_memory
//                                     (64-byte aligned offsets; swizzle is a
//                                     bank-conflict hint, ignored)
//  cp_async                           a synchronous vector load + store: the
//  cp_async_commit / cp_async_wait    copy is complete when the op returns,
//                                     so commit and wait have nothing left
//                                     to do and are erased
//  mma                                vector.outerproduct per k (FMAs on
//                                     rows of the register tile); f16/bf16/
//                                     fp8 widen to f32, i8 to i32 first
//  dot                                vector multiply + vector.reduction add
//  shuffle, subgroup_reduce           the value itself (one-lane subgroups)
//  load / store                       vector.load / vector.store
//  atomic_rmw scope=device|mesh       memref.atomic_rmw (llvm.atomicrmw
//                                     acq_rel, system scope); max/min on
//                                     floats: memref.generic_atomic_rmw
//                                     (cmpxchg loop, acq_rel)
//  atomic_rmw scope=tile|group        a plain read-modify-write: all lanes of
//                                     a group run on one thread, one after
//                                     the other, so it is atomic for them
//  math                               math.* / arith.maxf / arith.minf
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_TILETOCPU
#include "tessera/cpu/Passes.h.inc"
}  // namespace tessera::cpu

using namespace mlir;
namespace t = tessera::tile;

namespace {

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// Widens a fragment to the accumulator's element type.
Value widen(OpBuilder &b, Location loc, Value v, Type accElem) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (elem == accElem) return v;
  Type to = accElem;
  if (auto vt = v.getType().dyn_cast<VectorType>()) to = VectorType::get(vt.getShape(), accElem);
  if (accElem.isa<FloatType>()) return b.create<arith::ExtFOp>(loc, to, v);
  return b.create<arith::ExtSIOp>(loc, to, v);
}

struct TileToCPUPass : tessera::cpu::impl::TileToCPUBase<TileToCPUPass> {
  using TileToCPUBase::TileToCPUBase;

  void runOnOperation() override {
    ModuleOp m = getOperation();
    SmallVector<func::FuncOp> kernels;
    m.walk([&](func::FuncOp f) {
      if (!f.isExternal() && f->hasAttr(t::kGroupSizeAttr)) kernels.push_back(f);
    });
    for (func::FuncOp f : kernels)
      if (failed(lower(f))) return signalPassFailure();
    WalkResult r = m.walk([&](Operation *op) {
      if (isa_and_nonnull<t::TileDialect>(op->getDialect())) {
        op->emitOpError("is outside a Tile IR kernel (a func.func with tessera_tile.group_size)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted()) signalPassFailure();
  }

  LogicalResult lower(func::FuncOp f) {
    MLIRContext *ctx = f.getContext();
    Location loc = f.getLoc();
    if (f.getNumResults()) return f.emitError("a Tile IR kernel returns nothing");
    SmallVector<int64_t, 3> group = t::getGroupSize(f);
    int64_t lanes = group[0] * group[1] * group[2];
    SmallVector<int64_t, 3> grid{1, 1, 1};
    if (auto a = f->getAttrOfType<DenseI64ArrayAttr>(t::kGridAttr))
      for (auto [i, v] : llvm::enumerate(a.asArrayRef())) grid[i] = v;

    // Lanes must have become loops.
    bool laneOps = false;
    f.walk([&](Operation *op) { laneOps |= isa<t::LaneIdOp, t::BarrierOp>(op); });
    if (laneOps && lanes > 1)
      return f.emitError("tessera-tile-to-cpu: the kernel still has lane ids or barriers; run "
                         "--tessera-tile-work-item-loops first");

    // A buffer of any length (memref<?xT>): the bare-pointer convention
    // wants static shapes and the kernel uses nothing but the base address,
    // so the argument becomes memref<kDynamicExtent x T>; the launch's
    // buffer decides the length (collectKernels reports it as dynamic).
    for (BlockArgument a : f.front().getArguments()) {
      auto mt = a.getType().dyn_cast<MemRefType>();
      if (mt && mt.getRank() == 1 && mt.isDynamicDim(0) && mt.getLayout().isIdentity() &&
          !t::isSharedMemory(mt))
        a.setType(MemRefType::get({tessera::cpu::kDynamicExtent}, mt.getElementType(), nullptr,
                                  mt.getMemorySpace()));
    }
    f.setType(FunctionType::get(ctx, f.front().getArgumentTypes(), f.getResultTypes()));
    for (auto [i, ty] : llvm::enumerate(f.getArgumentTypes())) {
      auto mt = ty.dyn_cast<MemRefType>();
      bool ok = mt ? mt.hasStaticShape() && mt.getLayout().isIdentity() && !t::isSharedMemory(mt)
                   : ty.isIntOrIndexOrFloat();
      if (!ok)
        return f.emitError() << "cpu kernel argument " << i << " has type " << ty
                             << ": expected a statically shaped global memref, a 1-D memref of "
                                "any length (memref<?xT>) or a scalar";
    }
    // Signature: user args, group id x3, grid x3, shared memory.
    unsigned nUser = f.getNumArguments();
    OpBuilder b(ctx);
    SmallVector<Type> extra(6, b.getIndexType());
    extra.push_back(MemRefType::get({t::kDefaultMaxSharedMemory}, b.getI8Type()));
    SmallVector<unsigned> at(extra.size(), nUser);
    SmallVector<DictionaryAttr> attrs(extra.size(), DictionaryAttr::get(ctx));
    SmallVector<Location> locs(extra.size(), loc);
    f.insertArguments(at, extra, attrs, locs);
    Block &entry = f.front();
    auto arg = [&](unsigned i) -> Value { return entry.getArgument(nUser + i); };
    Value smem = arg(6);

    b.setInsertionPointToStart(&entry);
    Value tileId = nullptr;  // built on first use
    int64_t sharedOffset = 0;
    SmallVector<Operation *> ops;
    f.walk([&](Operation *op) {
      if (isa_and_nonnull<t::TileDialect>(op->getDialect())) ops.push_back(op);
    });
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      Location l = op->getLoc();
      Value repl;
      if (auto o = dyn_cast<t::GroupIdOp>(op)) {
        repl = arg(o.getDim());
      } else if (auto o = dyn_cast<t::GroupCountOp>(op)) {
        repl = arg(3 + o.getDim());
      } else if (isa<t::TileIdOp>(op)) {
        if (!tileId) {
          OpBuilder eb = OpBuilder::atBlockBegin(&entry);
          Value y = eb.create<arith::MulIOp>(loc, arg(1), arg(3));
          Value z = eb.create<arith::MulIOp>(loc, arg(2), eb.create<arith::MulIOp>(loc, arg(3), arg(4)));
          tileId = eb.create<arith::AddIOp>(loc, arg(0), eb.create<arith::AddIOp>(loc, y, z));
        }
        repl = tileId;
      } else if (auto o = dyn_cast<t::LaneCountOp>(op)) {
        repl = cIdx(b, l, group[o.getDim()]);
      } else if (isa<t::SubgroupSizeOp>(op)) {
        repl = cIdx(b, l, 1);
      } else if (auto o = dyn_cast<t::LaneIdOp>(op)) {
        repl = cIdx(b, l, 0);  // one lane
      } else if (isa<t::BarrierOp, t::CpAsyncCommitOp, t::CpAsyncWaitOp>(op)) {
        // one lane / synchronous copies: nothing to wait for
      } else if (auto o = dyn_cast<t::ShuffleOp>(op)) {
        repl = o.getValue();
      } else if (auto o = dyn_cast<t::SubgroupReduceOp>(op)) {
        repl = o.getValue();
      } else if (auto o = dyn_cast<t::SharedAllocOp>(op)) {
        auto ty = o.getType().cast<MemRefType>();
        int64_t bytes = ty.getNumElements() * std::max<int64_t>(1, ty.getElementTypeBitWidth() / 8);
        if (sharedOffset + bytes > t::kDefaultMaxSharedMemory)
          return o.emitOpError() << "needs shared memory up to byte " << sharedOffset + bytes
                                 << ", more than the cpu plugin's "
                                 << t::kDefaultMaxSharedMemory << " bytes per group";
        repl = b.create<memref::ViewOp>(l, MemRefType::get(ty.getShape(), ty.getElementType()),
                                        smem, cIdx(b, l, sharedOffset), ValueRange{});
        sharedOffset = (sharedOffset + bytes + 63) / 64 * 64;
      } else if (auto o = dyn_cast<t::CpAsyncOp>(op)) {
        auto src = o.getSource().getType().cast<MemRefType>();
        auto vt = VectorType::get({static_cast<int64_t>(o.getElements())}, src.getElementType());
        Value v = b.create<vector::LoadOp>(l, vt, o.getSource(), o.getSrcIndices());
        b.create<vector::StoreOp>(l, v, o.getTarget(), o.getDstIndices());
      } else if (auto o = dyn_cast<t::LoadOp>(op)) {
        repl = b.create<vector::LoadOp>(l, o.getType(), o.getMemref(), o.getIndices());
      } else if (auto o = dyn_cast<t::StoreOp>(op)) {
        b.create<vector::StoreOp>(l, o.getValue(), o.getMemref(), o.getIndices());
      } else if (auto o = dyn_cast<t::MmaOp>(op)) {
        auto ct = o.getAcc().getType().cast<VectorType>();
        Type ce = ct.getElementType();
        Value a = widen(b, l, o.getA(), ce), bb = widen(b, l, o.getB(), ce);
        int64_t k = a.getType().cast<VectorType>().getDimSize(1);
        Value at = b.create<vector::TransposeOp>(l, a, ArrayRef<int64_t>{1, 0});
        Value acc = o.getAcc();
        for (int64_t i = 0; i < k; ++i) {
          Value col = b.create<vector::ExtractOp>(l, at, ArrayRef<int64_t>{i});
          Value row = b.create<vector::ExtractOp>(l, bb, ArrayRef<int64_t>{i});
          acc = b.create<vector::OuterProductOp>(l, ct, col, row, ValueRange{acc},
                                                 vector::CombiningKind::ADD);
        }
        repl = acc;
      } else if (auto o = dyn_cast<t::DotOp>(op)) {
        Type ae = o.getAcc().getType();
        Value a = widen(b, l, o.getA(), ae), bb = widen(b, l, o.getB(), ae);
        Value p = ae.isa<FloatType>() ? b.create<arith::MulFOp>(l, a, bb).getResult()
                                      : b.create<arith::MulIOp>(l, a, bb).getResult();
        repl = b.create<vector::ReductionOp>(l, vector::CombiningKind::ADD, p, o.getAcc());
      } else if (auto o = dyn_cast<t::AtomicRMWOp>(op)) {
        repl = lowerAtomic(b, o);
      } else if (auto o = dyn_cast<t::MathOp>(op)) {
        ValueRange x = o.getOperands();
        switch (o.getFn()) {
        case t::MathFn::exp: repl = b.create<math::ExpOp>(l, x[0]); break;
        case t::MathFn::log: repl = b.create<math::LogOp>(l, x[0]); break;
        case t::MathFn::sqrt: repl = b.create<math::SqrtOp>(l, x[0]); break;
        case t::MathFn::rsqrt: repl = b.create<math::RsqrtOp>(l, x[0]); break;
        case t::MathFn::tanh: repl = b.create<math::TanhOp>(l, x[0]); break;
        case t::MathFn::max: repl = b.create<arith::MaxFOp>(l, x[0], x[1]); break;
        case t::MathFn::min: repl = b.create<arith::MinFOp>(l, x[0], x[1]); break;
        case t::MathFn::fma: repl = b.create<math::FmaOp>(l, x[0], x[1], x[2]); break;
        }
      } else {
        return op->emitOpError("has no cpu lowering");
      }
      if (op->getNumResults()) op->getResult(0).replaceAllUsesWith(repl);
      op->erase();
    }

    // Shared memory is plain memory on the cpu: drop memory space 3 from
    // every memref type left in the kernel (views, selects, subviews).
    auto strip = [](Value v) {
      auto mt = v.getType().dyn_cast<MemRefType>();
      if (mt && t::isSharedMemory(mt))
        v.setType(MemRefType::get(mt.getShape(), mt.getElementType(), mt.getLayout()));
    };
    f.walk([&](Operation *op) {
      for (Value r : op->getResults()) strip(r);
      for (Region &reg : op->getRegions())
        for (Block &blk : reg)
          for (BlockArgument a : blk.getArguments()) strip(a);
    });

    f->setAttr(tessera::cpu::kKernelAttr,
               b.getDictionaryAttr({
                   b.getNamedAttr("inputs", b.getI64IntegerAttr(nUser)),
                   b.getNamedAttr("outputs", b.getI64IntegerAttr(0)),
                   b.getNamedAttr("grid", b.getDenseI64ArrayAttr(grid)),
                   b.getNamedAttr("group_size", b.getDenseI64ArrayAttr(group)),
                   b.getNamedAttr("shared_memory", b.getI64IntegerAttr(sharedOffset))}));
    for (StringRef n : {t::kGroupSizeAttr, t::kGridAttr, t::kMaxSharedAttr}) f->removeAttr(n);
    return success();
  }

  Value lowerAtomic(OpBuilder &b, t::AtomicRMWOp o) {
    Location l = o.getLoc();
    Value v = o.getValue();
    Type ty = v.getType();
    bool isFloat = ty.isa<FloatType>();
    auto combine = [&](OpBuilder &bb, Value old) -> Value {
      switch (o.getKind()) {
      case t::AtomicKind::add:
        return isFloat ? bb.create<arith::AddFOp>(l, old, v).getResult()
                       : bb.create<arith::AddIOp>(l, old, v).getResult();
      case t::AtomicKind::max:
        return isFloat ? bb.create<arith::MaxFOp>(l, old, v).getResult()
                       : bb.create<arith::MaxSIOp>(l, old, v).getResult();
      case t::AtomicKind::min:
        return isFloat ? bb.create<arith::MinFOp>(l, old, v).getResult()
                       : bb.create<arith::MinSIOp>(l, old, v).getResult();
      case t::AtomicKind::xchg:
        return v;
      }
      return v;
    };
    if (o.getScope() == t::AtomicScope::tile || o.getScope() == t::AtomicScope::group) {
      Value old = b.create<memref::LoadOp>(l, o.getMemref(), o.getIndices());
      b.create<memref::StoreOp>(l, combine(b, old), o.getMemref(), o.getIndices());
      return old;
    }
    using K = arith::AtomicRMWKind;
    std::optional<K> kind;
    switch (o.getKind()) {
    case t::AtomicKind::add: kind = isFloat ? K::addf : K::addi; break;
    case t::AtomicKind::max: if (!isFloat) kind = K::maxs; break;
    case t::AtomicKind::min: if (!isFloat) kind = K::mins; break;
    case t::AtomicKind::xchg: kind = K::assign; break;
    }
    if (kind)
      return b.create<memref::AtomicRMWOp>(l, *kind, v, o.getMemref(), o.getIndices());
    auto g = b.create<memref::GenericAtomicRMWOp>(l, o.getMemref(), o.getIndices());
    OpBuilder gb = OpBuilder::atBlockEnd(g.getBody());
    gb.create<memref::AtomicYieldOp>(l, combine(gb, g.getCurrentValue()));
    return g.getResult();
  }
};

}  // namespace
