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
// One conversion pattern per op, under a target where Tile IR is illegal
// (tessera/Conversion/ConversionDriver.h reports what cannot be lowered).
// The patterns of one kernel share its CpuKernel (the launch context's
// arguments, the tile id once built, the shared memory handed out so far):
// one kernel at a time, one thread.
//===----------------------------------------------------------------------===//
#include "tessera/cpu/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "tessera/Conversion/ConversionDriver.h"
#include "tessera/Conversion/ElementTypes.h"

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

/// What the patterns of one kernel share.
struct CpuKernel {
  Block *entry = nullptr;
  unsigned firstContextArg = 0;  // gid.x; then gid.y, gid.z, grid.x .. z, smem
  SmallVector<int64_t, 3> group;
  Value tileId;              // built at the entry on first use
  int64_t sharedOffset = 0;  // bytes of shared memory handed out so far

  Value arg(unsigned i) const { return entry->getArgument(firstContextArg + i); }
};

/// A pattern for Tile IR op `Op` that sees its kernel's CpuKernel.
template <typename Op>
struct CpuPattern : OpConversionPattern<Op> {
  CpuPattern(MLIRContext *ctx, CpuKernel &k) : OpConversionPattern<Op>(ctx), kernel(k) {}
  CpuKernel &kernel;
};

struct GroupIdLowering : CpuPattern<t::GroupIdOp> {
  using CpuPattern::CpuPattern;
  LogicalResult matchAndRewrite(t::GroupIdOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, kernel.arg(op.getDim()));
    return success();
  }
};

struct GroupCountLowering : CpuPattern<t::GroupCountOp> {
  using CpuPattern::CpuPattern;
  LogicalResult matchAndRewrite(t::GroupCountOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, kernel.arg(3 + op.getDim()));
    return success();
  }
};

struct TileIdLowering : CpuPattern<t::TileIdOp> {
  using CpuPattern::CpuPattern;
  LogicalResult matchAndRewrite(t::TileIdOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (!kernel.tileId) {
      // gid.x + gid.y * grid.x + gid.z * grid.x * grid.y, once per kernel.
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(kernel.entry);
      Location l = op.getLoc();
      Value y = rw.create<arith::MulIOp>(l, kernel.arg(1), kernel.arg(3));
      Value z = rw.create<arith::MulIOp>(l, kernel.arg(2), rw.create<arith::MulIOp>(l, kernel.arg(3), kernel.arg(4)));
      kernel.tileId = rw.create<arith::AddIOp>(l, kernel.arg(0), rw.create<arith::AddIOp>(l, y, z));
    }
    rw.replaceOp(op, kernel.tileId);
    return success();
  }
};

struct LaneCountLowering : CpuPattern<t::LaneCountOp> {
  using CpuPattern::CpuPattern;
  LogicalResult matchAndRewrite(t::LaneCountOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, cIdx(rw, op.getLoc(), kernel.group[op.getDim()]));
    return success();
  }
};

/// An op with a constant value on the cpu: subgroup_size 1 (one-lane
/// subgroups), lane_id 0 (one lane: tessera-tile-work-item-loops made the
/// lanes loops first).
template <typename Op, int64_t kValue>
struct ConstantLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, cIdx(rw, op.getLoc(), kValue));
    return success();
  }
};

/// barrier (one lane), cp_async_commit / cp_async_wait (the copies are
/// synchronous): nothing to do.
template <typename Op>
struct EraseLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.eraseOp(op);
    return success();
  }
};

/// shuffle, subgroup_reduce: a one-lane subgroup's value is its own.
template <typename Op>
struct OwnValueLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, a.getValue());
    return success();
  }
};

struct SharedAllocLowering : CpuPattern<t::SharedAllocOp> {
  using CpuPattern::CpuPattern;
  LogicalResult matchAndRewrite(t::SharedAllocOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto ty = op.getType().cast<MemRefType>();
    int64_t bytes = ty.getNumElements() * std::max<int64_t>(1, ty.getElementTypeBitWidth() / 8);
    if (kernel.sharedOffset + bytes > t::kDefaultMaxSharedMemory)
      return op.emitOpError() << "needs shared memory up to byte " << kernel.sharedOffset + bytes
                              << ", more than the cpu plugin's " << t::kDefaultMaxSharedMemory << " bytes per group";
    Location l = op.getLoc();
    rw.replaceOpWithNewOp<memref::ViewOp>(op, MemRefType::get(ty.getShape(), ty.getElementType()), kernel.arg(6),
                                          cIdx(rw, l, kernel.sharedOffset), ValueRange{});
    kernel.sharedOffset = (kernel.sharedOffset + bytes + 63) / 64 * 64;
    return success();
  }
};

struct CpAsyncLowering : OpConversionPattern<t::CpAsyncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::CpAsyncOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto src = a.getSource().getType().cast<MemRefType>();
    auto vt = VectorType::get({static_cast<int64_t>(op.getElements())}, src.getElementType());
    Value v = rw.create<vector::LoadOp>(op.getLoc(), vt, a.getSource(), a.getSrcIndices());
    rw.create<vector::StoreOp>(op.getLoc(), v, a.getTarget(), a.getDstIndices());
    rw.eraseOp(op);
    return success();
  }
};

struct LoadLowering : OpConversionPattern<t::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::LoadOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<vector::LoadOp>(op, op.getType(), a.getMemref(), a.getIndices());
    return success();
  }
};

struct StoreLowering : OpConversionPattern<t::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::StoreOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    rw.create<vector::StoreOp>(op.getLoc(), a.getValue(), a.getMemref(), a.getIndices());
    rw.eraseOp(op);
    return success();
  }
};

/// mma: a vector.outerproduct per k on rows of the register tile.
struct MmaLowering : OpConversionPattern<t::MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::MmaOp op, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto ct = op.getAcc().getType().cast<VectorType>();
    Type ce = ct.getElementType();
    Value a = widen(rw, l, ad.getA(), ce), b = widen(rw, l, ad.getB(), ce);
    int64_t k = a.getType().cast<VectorType>().getDimSize(1);
    Value at = rw.create<vector::TransposeOp>(l, a, ArrayRef<int64_t>{1, 0});
    Value acc = ad.getAcc();
    for (int64_t i = 0; i < k; ++i) {
      Value col = rw.create<vector::ExtractOp>(l, at, ArrayRef<int64_t>{i});
      Value row = rw.create<vector::ExtractOp>(l, b, ArrayRef<int64_t>{i});
      acc = rw.create<vector::OuterProductOp>(l, ct, col, row, ValueRange{acc}, vector::CombiningKind::ADD);
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

/// dot: a vector multiply and a vector.reduction add into the accumulator.
struct DotLowering : OpConversionPattern<t::DotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::DotOp op, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    Type ae = op.getAcc().getType();
    Value a = widen(rw, l, ad.getA(), ae), b = widen(rw, l, ad.getB(), ae);
    Value p = ae.isa<FloatType>() ? rw.create<arith::MulFOp>(l, a, b).getResult()
                                  : rw.create<arith::MulIOp>(l, a, b).getResult();
    rw.replaceOpWithNewOp<vector::ReductionOp>(op, vector::CombiningKind::ADD, p, ad.getAcc());
    return success();
  }
};

struct AtomicLowering : OpConversionPattern<t::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::AtomicRMWOp o, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    Value v = ad.getValue();
    bool isFloat = v.getType().isa<FloatType>();
    auto combine = [&](OpBuilder &bb, Value old) -> Value {
      switch (o.getKind()) {
      case t::AtomicKind::add:
        return isFloat ? bb.create<arith::AddFOp>(l, old, v).getResult() : bb.create<arith::AddIOp>(l, old, v).getResult();
      case t::AtomicKind::max:
        return isFloat ? bb.create<arith::MaxFOp>(l, old, v).getResult() : bb.create<arith::MaxSIOp>(l, old, v).getResult();
      case t::AtomicKind::min:
        return isFloat ? bb.create<arith::MinFOp>(l, old, v).getResult() : bb.create<arith::MinSIOp>(l, old, v).getResult();
      case t::AtomicKind::xchg:
        return v;
      }
      return v;
    };
    if (o.getScope() == t::AtomicScope::tile || o.getScope() == t::AtomicScope::group) {
      Value old = rw.create<memref::LoadOp>(l, ad.getMemref(), ad.getIndices());
      rw.create<memref::StoreOp>(l, combine(rw, old), ad.getMemref(), ad.getIndices());
      rw.replaceOp(o, old);
      return success();
    }
    using K = arith::AtomicRMWKind;
    std::optional<K> kind;
    switch (o.getKind()) {
    case t::AtomicKind::add: kind = isFloat ? K::addf : K::addi; break;
    case t::AtomicKind::max: if (!isFloat) kind = K::maxs; break;
    case t::AtomicKind::min: if (!isFloat) kind = K::mins; break;
    case t::AtomicKind::xchg: kind = K::assign; break;
    }
    if (kind) {
      rw.replaceOpWithNewOp<memref::AtomicRMWOp>(o, *kind, v, ad.getMemref(), ad.getIndices());
      return success();
    }
    auto g = rw.create<memref::GenericAtomicRMWOp>(l, ad.getMemref(), ad.getIndices());
    OpBuilder gb = OpBuilder::atBlockEnd(g.getBody());
    gb.create<memref::AtomicYieldOp>(l, combine(gb, g.getCurrentValue()));
    rw.replaceOp(o, g.getResult());
    return success();
  }
};

struct MathLowering : OpConversionPattern<t::MathOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::MathOp op, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    ValueRange x = ad.getOperands();
    Value r;
    switch (op.getFn()) {
    case t::MathFn::exp: r = rw.create<math::ExpOp>(l, x[0]); break;
    case t::MathFn::log: r = rw.create<math::LogOp>(l, x[0]); break;
    case t::MathFn::sqrt: r = rw.create<math::SqrtOp>(l, x[0]); break;
    case t::MathFn::rsqrt: r = rw.create<math::RsqrtOp>(l, x[0]); break;
    case t::MathFn::tanh: r = rw.create<math::TanhOp>(l, x[0]); break;
    case t::MathFn::max: r = rw.create<arith::MaxFOp>(l, x[0], x[1]); break;
    case t::MathFn::min: r = rw.create<arith::MinFOp>(l, x[0], x[1]); break;
    case t::MathFn::fma: r = rw.create<math::FmaOp>(l, x[0], x[1], x[2]); break;
    }
    rw.replaceOp(op, r);
    return success();
  }
};

void populateTileToCpuPatterns(RewritePatternSet &patterns, CpuKernel &kernel) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<GroupIdLowering, GroupCountLowering, TileIdLowering, LaneCountLowering, SharedAllocLowering>(ctx,
                                                                                                          kernel);
  patterns.add<ConstantLowering<t::SubgroupSizeOp, 1>, ConstantLowering<t::LaneIdOp, 0>,
               EraseLowering<t::BarrierOp>, EraseLowering<t::CpAsyncCommitOp>, EraseLowering<t::CpAsyncWaitOp>,
               OwnValueLowering<t::ShuffleOp>, OwnValueLowering<t::SubgroupReduceOp>, CpAsyncLowering, LoadLowering,
               StoreLowering, MmaLowering, DotLowering, AtomicLowering, MathLowering>(ctx);
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
    // Shared memory is plain memory on the cpu: drop memory space 3 from
    // every memref type in the kernel (shared_allocs, their views, selects,
    // subviews), first: the views that replace the shared_allocs then
    // have their types.
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

    // round_to_bf16 (the GPU pipeline's bf16 stores) as the integer code
    // the SPIR-V and HIP targets use: the same bits on every backend.
    SmallVector<t::RoundToBF16Op> roundings;
    f.walk([&](t::RoundToBF16Op op) { roundings.push_back(op); });
    for (t::RoundToBF16Op op : roundings) {
      OpBuilder rb(op);
      op.replaceAllUsesWith(tessera::elements::roundToBF16Bits(rb, op.getLoc(), op.getValue()));
      op.erase();
    }

    CpuKernel kernel;
    kernel.entry = &entry;
    kernel.firstContextArg = nUser;
    kernel.group = group;
    RewritePatternSet patterns(ctx);
    populateTileToCpuPatterns(patterns, kernel);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<t::TileDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(tessera::conversion::applyTilePatterns(f, target, std::move(patterns), "has no cpu lowering")))
      return failure();
    const int64_t sharedOffset = kernel.sharedOffset;

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
};

}  // namespace
