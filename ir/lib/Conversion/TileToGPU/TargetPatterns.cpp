//===- TargetPatterns.cpp - subgroup ops and atomics in the target's form -===//
//
//                      SPIRV (vulkan)                 NVVM (cuda), ROCDL (hip)
//  subgroup_size       SubgroupSize builtin, clamped  min(warp, lanes)
//  subgroup_reduce     GroupNonUniform*Reduce         xor butterfly of
//                                                     gpu.shuffle
//  shuffle             GroupNonUniformShuffle(Xor);   gpu.shuffle
//                      up/down: marked with the
//                      group's lanes for the SPIR-V
//                      conversion (ShuffleRelative)
//  atomic_rmw          left for the SPIR-V patterns   memref.atomic_rmw
//
// checkTargetOps refuses first what a target cannot express (a mesh-scope
// atomic on SPIR-V, a 128-bit shuffle on NVVM, ...), naming the op.
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::gpu_lowering {
namespace {

/// The lanes a group holds, recorded on a SPIR-V shuffle up/down for the
/// SPIR-V conversion's out-of-range rule.
constexpr const char kGroupLanesAttr[] = "tessera.group_lanes";

const char *nvName(const KernelContext &k) { return k.rocdl() ? "the ROCDL lowering" : "the NVVM lowering"; }

/// NVVM / ROCDL shuffles and reductions move scalars of 8 to 64 bits.
LogicalResult checkNvShuffleType(Operation *op, Type ty, const KernelContext &k) {
  if (ty.isIndex() || ty.isF16() || ty.isBF16() || ty.isF32() || ty.isF64() || ty.isInteger(8) || ty.isInteger(16) ||
      ty.isInteger(32) || ty.isInteger(64))
    return success();
  return op->emitOpError(nvName(k)) << " shuffles scalars of 8 to 64 bits (f16, bf16, f32, f64, i8 to i64, index), not "
                                    << ty;
}

/// NVVM / ROCDL: a shuffle of 32-bit words (gpu.shuffle takes i32 / f32;
/// index and narrower integers travel as i32, f16 / bf16 as their 16 bits,
/// 64-bit values as two words shuffled alike). A lane whose source lane is
/// outside the warp keeps its own value (PTX's rule, made explicit by
/// `valid`).
Value nvShuffle(OpBuilder &b, Location l, Value v, Value off, gpu::ShuffleMode mode, int64_t width) {
  Type ty = v.getType();
  if (ty.isF16() || ty.isBF16()) {
    Value bits = b.create<arith::BitcastOp>(l, b.getI16Type(), v);
    return b.create<arith::BitcastOp>(l, ty, nvShuffle(b, l, bits, off, mode, width));
  }
  if (ty.isF64() || ty.isInteger(64)) {
    auto i32 = b.getI32Type(), i64 = b.getI64Type();
    Value bits = ty.isF64() ? b.create<arith::BitcastOp>(l, i64, v).getResult() : v;
    Value lo = b.create<arith::TruncIOp>(l, i32, bits);
    Value hi = b.create<arith::TruncIOp>(l, i32, b.create<arith::ShRUIOp>(l, bits, b.create<arith::ConstantIntOp>(l, 32, 64)));
    Value lo2 = nvShuffle(b, l, lo, off, mode, width), hi2 = nvShuffle(b, l, hi, off, mode, width);
    Value r = b.create<arith::OrIOp>(l, b.create<arith::ExtUIOp>(l, i64, lo2),
                                     b.create<arith::ShLIOp>(l, b.create<arith::ExtUIOp>(l, i64, hi2),
                                                             b.create<arith::ConstantIntOp>(l, 32, 64)));
    return ty.isF64() ? b.create<arith::BitcastOp>(l, ty, r).getResult() : r;
  }
  Value x = v;
  if (ty.isIndex()) x = b.create<arith::IndexCastOp>(l, b.getI32Type(), v);
  else if (ty.isInteger(8) || ty.isInteger(16)) x = b.create<arith::ExtSIOp>(l, b.getI32Type(), v);
  Value o = off.getType().isIndex() ? b.create<arith::IndexCastOp>(l, b.getI32Type(), off).getResult() : off;
  Value w = b.create<arith::ConstantIntOp>(l, width, 32);
  auto sh = b.create<gpu::ShuffleOp>(l, x, o, w, mode);
  Value r = b.create<arith::SelectOp>(l, sh.getValid(), sh.getShuffleResult(), x);
  if (ty.isIndex()) return b.create<arith::IndexCastOp>(l, ty, r);
  if (ty != r.getType()) return b.create<arith::TruncIOp>(l, ty, r);
  return r;
}

/// Runs `build` on an i32 view of an index value (SPIR-V ops take i32).
template <typename Fn>
Value onI32(OpBuilder &b, Location l, Value v, Fn build) {
  if (!v.getType().isIndex()) return build(v);
  Value x = b.create<arith::IndexCastOp>(l, b.getI32Type(), v);
  return b.create<arith::IndexCastOp>(l, b.getIndexType(), build(x));
}

struct SubgroupSizePattern : KernelPattern<t::SubgroupSizeOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::SubgroupSizeOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    if (kernel.nvvm()) {
      rw.replaceOp(op, cIdx(rw, l, kernel.warpLanes()));
      return success();
    }
    // A subgroup never holds more lanes than the group: the builtin reports
    // the device width (e.g. 32/64), which overstates it for small groups,
    // and code like `lane < subgroup_size` would then address lanes that do
    // not exist. Clamp to the group's lanes.
    Value hw = rw.create<gpu::SubgroupSizeOp>(l, rw.getIndexType());
    rw.replaceOpWithNewOp<arith::MinUIOp>(op, hw, cIdx(rw, l, kernel.lanes()));
    return success();
  }
};

/// NVVM / ROCDL: an xor butterfly over the warp: every lane ends with the
/// same value, combined in the same order on every lane.
/// SPIR-V: GroupNonUniform*Reduce over the subgroup.
struct SubgroupReducePattern : KernelPattern<t::SubgroupReduceOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::SubgroupReduceOp o, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    Value v = a.getValue();
    bool fl = v.getType().isa<FloatType>();
    if (kernel.nvvm()) {
      for (int64_t k = kernel.warpLanes() / 2; k >= 1; k /= 2) {
        Value other = nvShuffle(rw, l, v, rw.create<arith::ConstantIntOp>(l, k, 32), gpu::ShuffleMode::XOR,
                                kernel.warpLanes());
        switch (o.getKind()) {
        case t::ReduceKind::add:
          v = fl ? rw.create<arith::AddFOp>(l, v, other).getResult() : rw.create<arith::AddIOp>(l, v, other).getResult();
          break;
        case t::ReduceKind::max:
          v = fl ? rw.create<arith::MaxFOp>(l, v, other).getResult() : rw.create<arith::MaxSIOp>(l, v, other).getResult();
          break;
        case t::ReduceKind::min:
          v = fl ? rw.create<arith::MinFOp>(l, v, other).getResult() : rw.create<arith::MinSIOp>(l, v, other).getResult();
          break;
        }
      }
      rw.replaceOp(o, v);
      return success();
    }
    auto sc = spirv::Scope::Subgroup;
    auto red = spirv::GroupOperation::Reduce;
    rw.replaceOp(o, onI32(rw, l, v, [&](Value x) -> Value {
      Type ty = x.getType();
      switch (o.getKind()) {
      case t::ReduceKind::add:
        return fl ? rw.create<spirv::GroupNonUniformFAddOp>(l, ty, sc, red, x, Value()).getResult()
                  : rw.create<spirv::GroupNonUniformIAddOp>(l, ty, sc, red, x, Value()).getResult();
      case t::ReduceKind::max:
        return fl ? rw.create<spirv::GroupNonUniformFMaxOp>(l, ty, sc, red, x, Value()).getResult()
                  : rw.create<spirv::GroupNonUniformSMaxOp>(l, ty, sc, red, x, Value()).getResult();
      case t::ReduceKind::min:
        return fl ? rw.create<spirv::GroupNonUniformFMinOp>(l, ty, sc, red, x, Value()).getResult()
                  : rw.create<spirv::GroupNonUniformSMinOp>(l, ty, sc, red, x, Value()).getResult();
      }
      return x;
    }));
    return success();
  }
};

struct ShufflePattern : KernelPattern<t::ShuffleOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::ShuffleOp o, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    if (kernel.nvvm()) {
      gpu::ShuffleMode mode = gpu::ShuffleMode::IDX;
      switch (o.getMode()) {
      case t::ShuffleMode::Xor: mode = gpu::ShuffleMode::XOR; break;
      case t::ShuffleMode::down: mode = gpu::ShuffleMode::DOWN; break;
      case t::ShuffleMode::up: mode = gpu::ShuffleMode::UP; break;
      case t::ShuffleMode::idx: mode = gpu::ShuffleMode::IDX; break;
      }
      rw.replaceOp(o, nvShuffle(rw, l, a.getValue(), a.getOffset(), mode, kernel.warpLanes()));
      return success();
    }
    // up/down need the subgroup-local lane id and size for their
    // out-of-range rule: lowered by ShuffleRelativePattern during the SPIR-V
    // conversion, where the builtins can be declared. Record the group's
    // lane count for it (the op is legal then).
    if (o.getMode() == t::ShuffleMode::up || o.getMode() == t::ShuffleMode::down) {
      rw.updateRootInPlace(o, [&] { o->setAttr(kGroupLanesAttr, rw.getI32IntegerAttr(kernel.lanes())); });
      return success();
    }
    Value off = rw.create<arith::IndexCastOp>(l, rw.getI32Type(), a.getOffset());
    bool isXor = o.getMode() == t::ShuffleMode::Xor;
    rw.replaceOp(o, onI32(rw, l, a.getValue(), [&](Value x) -> Value {
      if (isXor) return rw.create<spirv::GroupNonUniformShuffleXorOp>(l, x.getType(), spirv::Scope::Subgroup, x, off);
      return rw.create<spirv::GroupNonUniformShuffleOp>(l, x.getType(), spirv::Scope::Subgroup, x, off);
    }));
    return success();
  }
};

/// NVVM / ROCDL: memref.atomic_rmw. PTX atom without a scope qualifier is
/// .gpu: right for tile, group and device scopes (cuda lowers mesh scope
/// before this, as atom.sys). ROCDL: an atomicrmw's default syncscope is
/// the system's, which the AMDGPU back end honours.
struct NvAtomicPattern : OpConversionPattern<t::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::AtomicRMWOp o, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    bool fl = o.getType().isa<FloatType>();
    arith::AtomicRMWKind kind = arith::AtomicRMWKind::assign;
    switch (o.getKind()) {
    case t::AtomicKind::add: kind = fl ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi; break;
    case t::AtomicKind::max: kind = fl ? arith::AtomicRMWKind::maxf : arith::AtomicRMWKind::maxs; break;
    case t::AtomicKind::min: kind = fl ? arith::AtomicRMWKind::minf : arith::AtomicRMWKind::mins; break;
    case t::AtomicKind::xchg: kind = arith::AtomicRMWKind::assign; break;
    }
    rw.replaceOpWithNewOp<memref::AtomicRMWOp>(o, kind, a.getValue(), a.getMemref(), a.getIndices());
    return success();
  }
};

}  // namespace

void populateTargetPatterns(RewritePatternSet &patterns, KernelContext &kernel) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SubgroupSizePattern, SubgroupReducePattern, ShufflePattern>(ctx, kernel);
  if (kernel.nvvm()) patterns.add<NvAtomicPattern>(ctx);
}

void addTargetLegality(ConversionTarget &target, const KernelContext &kernel) {
  if (kernel.nvvm()) return;
  // The SPIR-V conversion (TileToSPIRV.cpp) lowers these.
  target.addLegalOp<t::AtomicRMWOp>();
  target.addDynamicallyLegalOp<t::ShuffleOp>([](t::ShuffleOp o) {
    return (o.getMode() == t::ShuffleMode::up || o.getMode() == t::ShuffleMode::down) && o->hasAttr(kGroupLanesAttr);
  });
}

LogicalResult checkTargetOps(func::FuncOp f, const KernelContext &k) {
  WalkResult r = f.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if (auto o = dyn_cast<t::SubgroupReduceOp>(op); o && k.nvvm()) {
      if (failed(checkNvShuffleType(op, o.getValue().getType(), k))) return WalkResult::interrupt();
      int64_t w = k.warpLanes();
      if (w & (w - 1)) {
        op->emitOpError(nvName(k)) << " reduces over a power-of-two number of lanes; this group has " << w;
        return WalkResult::interrupt();
      }
    } else if (auto o = dyn_cast<t::ShuffleOp>(op); o && k.nvvm()) {
      if (failed(checkNvShuffleType(op, o.getValue().getType(), k))) return WalkResult::interrupt();
    } else if (auto o = dyn_cast<t::AtomicRMWOp>(op); o && k.nvvm()) {
      if (o.getScope() == t::AtomicScope::mesh && !k.rocdl()) {
        op->emitOpError("has scope 'mesh', which the cuda compiler does not lower yet (it would need atom.sys); "
                        "use scope = device and combine across devices with a collective");
        return WalkResult::interrupt();
      }
    } else if (auto o = dyn_cast<t::AtomicRMWOp>(op)) {
      Type ty = o.getType();
      unsigned w = ty.isIndex() ? 32 : ty.getIntOrFloatBitWidth();
      bool fl = ty.isa<FloatType>();
      // Vulkan atomics are on 32-bit integers and floats, and on 64-bit
      // integers with Int64Atomics; float atomics are 32-bit here (MLIR 16
      // has no 16/64-bit float atomic ops we could emit portably).
      if (!(w == 32 || (w == 64 && !fl))) {
        op->emitOpError("SPIR-V atomics take 32-bit values (or 64-bit integers), not ") << ty;
        return WalkResult::interrupt();
      }
      // Vulkan's memory model has no system scope, and the Level Zero
      // kernels do not claim CrossDevice: a mesh atomic lowered to Device
      // scope would silently stop being atomic with respect to the host and
      // peer devices (neither plugin reports atomic_scopes.mesh).
      if (o.getScope() == t::AtomicScope::mesh) {
        op->emitOpError("has scope 'mesh' (the host and peer devices), which the SPIR-V kernels cannot "
                        "express: their widest atomic scope is one device (the vulkan and level_zero "
                        "plugins report no atomic_scopes.mesh). Use scope = device and combine across "
                        "devices with a collective, or read the result on the host after the kernel "
                        "completes; or run the kernel on a backend with atomic_scopes.mesh (cpu, cuda)");
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

}  // namespace tessera::gpu_lowering
