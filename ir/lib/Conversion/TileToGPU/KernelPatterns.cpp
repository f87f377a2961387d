//===- KernelPatterns.cpp - target-neutral Tile IR ops -> gpu/memref ------===//
//
// The ops every GPU target lowers alike: ids and counts (gpu builtins), the
// barrier, shared memory (memref.alloc in workgroup memory), cp_async (a
// synchronous copy here; cuda lowers it first where it has cp.async),
// load / store (one scalar access per element), math and dot.
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::gpu_lowering {
namespace {

gpu::Dimension dimOf(uint64_t d) { return static_cast<gpu::Dimension>(d); }

/// Indices with `k` added to the last one.
SmallVector<Value> shifted(OpBuilder &b, Location l, ValueRange idx, int64_t k) {
  SmallVector<Value> r(idx.begin(), idx.end());
  if (k) r.back() = b.create<arith::AddIOp>(l, r.back(), cIdx(b, l, k));
  return r;
}

/// An op that is one gpu builtin of the same dimension.
template <typename Op, typename Builtin>
struct BuiltinPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<Builtin>(op, dimOf(static_cast<uint64_t>(op.getDim())));
    return success();
  }
};

struct LaneCountPattern : KernelPattern<t::LaneCountOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::LaneCountOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, cIdx(rw, op.getLoc(), kernel.group[op.getDim()]));
    return success();
  }
};

/// The group's linear index in the grid, built once at the kernel's entry.
struct TileIdPattern : KernelPattern<t::TileIdOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::TileIdOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (!kernel.tileId) {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(&kernel.f.front());
      Location l = op.getLoc();
      Value x = rw.create<gpu::BlockIdOp>(l, gpu::Dimension::x);
      Value y = rw.create<gpu::BlockIdOp>(l, gpu::Dimension::y);
      Value z = rw.create<gpu::BlockIdOp>(l, gpu::Dimension::z);
      Value gx = rw.create<gpu::GridDimOp>(l, gpu::Dimension::x);
      Value gy = rw.create<gpu::GridDimOp>(l, gpu::Dimension::y);
      Value yz = rw.create<arith::AddIOp>(l, y, rw.create<arith::MulIOp>(l, z, gy));
      kernel.tileId = rw.create<arith::AddIOp>(l, x, rw.create<arith::MulIOp>(l, yz, gx));
    }
    rw.replaceOp(op, kernel.tileId);
    return success();
  }
};

struct BarrierPattern : OpConversionPattern<t::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::BarrierOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

/// cp_async_commit / cp_async_wait: the copies here are synchronous.
template <typename Op>
struct ErasePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.eraseOp(op);
    return success();
  }
};

struct SharedAllocPattern : OpConversionPattern<t::SharedAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::SharedAllocOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    IntegerAttr align = op.getAlignment() ? rw.getI64IntegerAttr(op.getAlignment()) : IntegerAttr();
    rw.replaceOpWithNewOp<memref::AllocOp>(op, op.getType().cast<MemRefType>(), align);
    return success();
  }
};

/// cp_async as loads and stores, element by element.
struct CpAsyncPattern : OpConversionPattern<t::CpAsyncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::CpAsyncOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    for (int64_t k = 0; k < static_cast<int64_t>(op.getElements()); ++k) {
      Value v = rw.create<memref::LoadOp>(l, a.getSource(), shifted(rw, l, a.getSrcIndices(), k));
      rw.create<memref::StoreOp>(l, v, a.getTarget(), shifted(rw, l, a.getDstIndices(), k));
    }
    rw.eraseOp(op);
    return success();
  }
};

struct LoadPattern : OpConversionPattern<t::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::LoadOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    SmallVector<Value> r;
    for (int64_t k = 0; k < op.getType().getNumElements(); ++k)
      r.push_back(rw.create<memref::LoadOp>(l, a.getMemref(), shifted(rw, l, a.getIndices(), k)));
    rw.replaceOp(op, packScalars(rw, l, op.getType(), r));
    return success();
  }
};

struct StorePattern : OpConversionPattern<t::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::StoreOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto v = unpackScalars(rw, a.getValue(), op);
    if (failed(v)) return failure();
    Location l = op.getLoc();
    for (auto [k, x] : llvm::enumerate(*v))
      rw.create<memref::StoreOp>(l, x, a.getMemref(), shifted(rw, l, a.getIndices(), k));
    rw.eraseOp(op);
    return success();
  }
};

Value mathOp(OpBuilder &b, Location l, t::MathFn fn, ValueRange x) {
  switch (fn) {
  case t::MathFn::exp: return b.create<math::ExpOp>(l, x[0]);
  case t::MathFn::log: return b.create<math::LogOp>(l, x[0]);
  case t::MathFn::sqrt: return b.create<math::SqrtOp>(l, x[0]);
  case t::MathFn::rsqrt: return b.create<math::RsqrtOp>(l, x[0]);
  case t::MathFn::tanh: return b.create<math::TanhOp>(l, x[0]);
  case t::MathFn::max: return b.create<arith::MaxFOp>(l, x[0], x[1]);
  case t::MathFn::min: return b.create<arith::MinFOp>(l, x[0], x[1]);
  case t::MathFn::fma: return b.create<math::FmaOp>(l, x[0], x[1], x[2]);
  }
  return {};
}

/// math on a scalar, or per element.
struct MathPattern : OpConversionPattern<t::MathOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::MathOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    if (!isScalarized(op.getType())) {
      rw.replaceOp(op, mathOp(rw, l, op.getFn(), a.getOperands()));
      return success();
    }
    SmallVector<SmallVector<Value>> xs;
    for (Value x : a.getOperands()) {
      auto e = unpackScalars(rw, x, op);
      if (failed(e)) return failure();
      xs.push_back(*e);
    }
    SmallVector<Value> r;
    for (int64_t k = 0; k < op.getType().cast<VectorType>().getNumElements(); ++k) {
      SmallVector<Value> args;
      for (auto &x : xs) args.push_back(x[k]);
      r.push_back(mathOp(rw, l, op.getFn(), args));
    }
    rw.replaceOp(op, packScalars(rw, l, op.getType(), r));
    return success();
  }
};

/// dot: products widened to the accumulator's type, added in order.
struct DotPattern : OpConversionPattern<t::DotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::DotOp op, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    auto a = unpackScalars(rw, ad.getA(), op), b = unpackScalars(rw, ad.getB(), op);
    if (failed(a) || failed(b)) return failure();
    Location l = op.getLoc();
    Type ae = op.getAcc().getType();
    bool fl = ae.isa<FloatType>();
    auto widen = [&](Value v) -> Value {
      if (v.getType() == ae) return v;
      return fl ? rw.create<arith::ExtFOp>(l, ae, v).getResult() : rw.create<arith::ExtSIOp>(l, ae, v).getResult();
    };
    Value acc = ad.getAcc();
    for (auto [x, y] : llvm::zip(*a, *b)) {
      Value p = fl ? rw.create<arith::MulFOp>(l, widen(x), widen(y)).getResult()
                   : rw.create<arith::MulIOp>(l, widen(x), widen(y)).getResult();
      acc = fl ? rw.create<arith::AddFOp>(l, acc, p).getResult() : rw.create<arith::AddIOp>(l, acc, p).getResult();
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

}  // namespace

void populateKernelPatterns(RewritePatternSet &patterns, KernelContext &kernel) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<BuiltinPattern<t::GroupIdOp, gpu::BlockIdOp>, BuiltinPattern<t::GroupCountOp, gpu::GridDimOp>,
               BuiltinPattern<t::LaneIdOp, gpu::ThreadIdOp>, BarrierPattern, ErasePattern<t::CpAsyncCommitOp>,
               ErasePattern<t::CpAsyncWaitOp>, SharedAllocPattern, CpAsyncPattern, LoadPattern, StorePattern,
               MathPattern, DotPattern>(ctx);
  patterns.add<LaneCountPattern, TileIdPattern>(ctx, kernel);
}

}  // namespace tessera::gpu_lowering
