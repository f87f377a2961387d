//===- MmaPatterns.cpp - mma, subgroup_mma, warpgroup_mma -> FMAs or hooks -===//
//
//  mma            each lane owns its whole fragments: c[i][j] += a[i][k] *
//                 b[k][j] for k in order, as fused multiply-adds (no
//                 cooperative matrices: MLIR 16 only has the NV flavour and
//                 lavapipe has none)
//  subgroup_mma   options.subgroupMma if set (cuda sm_80+: mma.sync), else
//                 per-lane FMAs from shared memory
//  warpgroup_mma  options.warpgroupMma if set (cuda sm_90a: wgmma), else
//                 per-lane FMAs from the swizzled operands
//  wavefront_mma  options.wavefrontMma if set (hip CDNA: MFMA), else
//                 per-lane FMAs from shared memory
//  wave32_mma     options.wave32Mma if set (hip RDNA3: WMMA), else
//                 per-lane FMAs from shared memory
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::gpu_lowering {
namespace {

/// bf16 and the fp8 types: no SPIR-V type in MLIR 16 (no SPV_KHR_bfloat16).
bool noSPIRVType(Type t) { return t.isBF16() || t.isFloat8E5M2() || t.isFloat8E4M3FN(); }

/// A 16-bit operand of subgroup_mma as f32. The buffer holds the operand's
/// type or its bits (i16); as the GPU kernels store them (bf16 in i16, f16
/// as f16) they widen like any stored element.
Value operandToF32(OpBuilder &b, Location l, Value x, Type operandType) {
  Type stored = operandType.isBF16() ? Type(b.getI16Type()) : operandType;
  if (x.getType() != stored) x = b.create<arith::BitcastOp>(l, stored, x);
  return tessera::elements::widen(b, l, x, operandType,
                                  {/*hardwareF16=*/true, /*bf16AsI16=*/true, /*selectDivisionByZero=*/false});
}

/// An operand of a cooperative mma in its compute type: 16-bit floats and
/// f32 as f32, i8 sign-extended to i32.
Value operandToCompute(OpBuilder &b, Location l, Value x, Type operandType) {
  if (operandType.isInteger(8)) return b.create<arith::ExtSIOp>(l, b.getI32Type(), x);
  return operandToF32(b, l, x, operandType);
}

/// acc + x * y: a fused multiply-add, or for i32 (i8 operands) an exact
/// multiply and add wrapping at 32 bits.
Value multiplyAdd(OpBuilder &b, Location l, Value x, Value y, Value acc) {
  if (acc.getType().isInteger(32)) return b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, x, y), acc);
  return b.create<math::FmaOp>(l, x, y, acc);
}

/// The lane's linear index in its group modulo `width` (its index in its
/// subgroup or warpgroup).
Value laneModulo(OpBuilder &b, Location l, ArrayRef<int64_t> group, int64_t width) {
  Value x = b.create<gpu::ThreadIdOp>(l, gpu::Dimension::x);
  if (group[1] * group[2] > 1) {
    Value y = b.create<gpu::ThreadIdOp>(l, gpu::Dimension::y);
    Value z = b.create<gpu::ThreadIdOp>(l, gpu::Dimension::z);
    Value yz = b.create<arith::AddIOp>(l, y, b.create<arith::MulIOp>(l, z, cIdx(b, l, group[1])));
    x = b.create<arith::AddIOp>(l, x, b.create<arith::MulIOp>(l, yz, cIdx(b, l, group[0])));
  }
  return b.create<arith::RemUIOp>(l, x, cIdx(b, l, width));
}

/// subgroup_mma without matrix units: lane q of the subgroup computes its
/// own elements (the op's layout), reading the 2*(m/16) rows of A and the
/// 2*(n/8) columns of B it needs once per k; the 16 products of each
/// element in order k = 0..15, as fused multiply-adds.
SmallVector<Value> subgroupMmaByLane(OpBuilder &b, Location l, t::SubgroupMmaOp o, Value a, Value bm, Value aIndex,
                                     Value bIndex, ArrayRef<Value> acc, Value q) {
  const int64_t m = o.getM(), n = o.getN(), lda = o.getLda(), ldb = o.getLdb();
  const int64_t tilesN = n / 8;
  Type ot = o.getOperandType();
  Value q4 = b.create<arith::DivUIOp>(l, q, cIdx(b, l, 4));
  Value qm = b.create<arith::MulIOp>(l, b.create<arith::RemUIOp>(l, q, cIdx(b, l, 4)), cIdx(b, l, 2));
  Value aRow0 = b.create<arith::AddIOp>(l, aIndex, b.create<arith::MulIOp>(l, q4, cIdx(b, l, lda)));
  Value bCol0 = b.create<arith::AddIOp>(l, bIndex, qm);
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t k = 0; k < 16; ++k) {
    // Rows 16*tm + q/4 + 8*h of A, columns 8*tn + 2*(q%4) + c of B.
    SmallVector<Value> av, bv;
    for (int64_t row = 0; row < m / 8; ++row) {
      Value i = b.create<arith::AddIOp>(l, aRow0, cIdx(b, l, (row / 2 * 16 + row % 2 * 8) * lda + k));
      av.push_back(operandToCompute(b, l, b.create<memref::LoadOp>(l, a, i), ot));
    }
    for (int64_t col = 0; col < n / 4; ++col) {
      Value i = b.create<arith::AddIOp>(l, bCol0, cIdx(b, l, k * ldb + col / 2 * 8 + col % 2));
      bv.push_back(operandToCompute(b, l, b.create<memref::LoadOp>(l, bm, i), ot));
    }
    for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v) {
      int64_t t = v / 4, e = v % 4, tm = t / tilesN, tn = t % tilesN;
      r[v] = multiplyAdd(b, l, av[tm * 2 + e / 2], bv[tn * 2 + e % 2], r[v]);
    }
  }
  return r;
}

/// warpgroup_mma without matrix units: lane p of the warpgroup computes its
/// own elements (the op's layout) from the swizzled operands: its two rows
/// of A and n/4 columns of B once per k, then fused multiply-adds in order
/// k.
SmallVector<Value> warpgroupMmaByLane(OpBuilder &b, Location l, t::WarpgroupMmaOp o, Value a, Value bm, Value aIndex,
                                      Value bIndex, ArrayRef<Value> acc, Value p) {
  const int64_t n = o.getN(), stride = o.getBBlockStride();
  Type ot = o.getOperandType();
  auto c = [&](int64_t v) { return cIdx(b, l, v); };
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
  // sw(e) = e ^ ((e >> 3) & 0x38): the 128-byte swizzle, on element indices.
  auto sw = [&](Value e) -> Value {
    Value bits = b.create<arith::AndIOp>(l, b.create<arith::ShRUIOp>(l, e, c(3)), c(0x38));
    return b.create<arith::XOrIOp>(l, e, bits);
  };
  Value w = b.create<arith::DivUIOp>(l, p, c(32)), q = b.create<arith::RemUIOp>(l, p, c(32));
  Value row0 = add(b.create<arith::MulIOp>(l, w, c(16)), b.create<arith::DivUIOp>(l, q, c(4)));
  Value aRow0 = add(aIndex, b.create<arith::MulIOp>(l, row0, c(64)));
  Value col0 = b.create<arith::MulIOp>(l, b.create<arith::RemUIOp>(l, q, c(4)), c(2));  // < 8: j / 64 is static
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t k = 0; k < static_cast<int64_t>(o.getK()); ++k) {
    Value a0 = operandToF32(b, l, b.create<memref::LoadOp>(l, a, sw(add(aRow0, c(k)))), ot);
    Value a1 = operandToF32(b, l, b.create<memref::LoadOp>(l, a, sw(add(aRow0, c(8 * 64 + k)))), ot);
    SmallVector<Value> bv;  // columns 8*t + col0 + e, t < n/8, e < 2
    for (int64_t t = 0; t < n / 8; ++t)
      for (int64_t e = 0; e < 2; ++e) {
        const int64_t j = 8 * t + e;  // plus col0 (< 8, same 64-column block)
        Value at = add(bIndex, add(col0, c(stride * (j / 64) + 64 * k + j % 64)));
        bv.push_back(operandToF32(b, l, b.create<memref::LoadOp>(l, bm, sw(at)), ot));
      }
    for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v)
      r[v] = b.create<math::FmaOp>(l, (v % 4) / 2 ? a1 : a0, bv[2 * (v / 4) + v % 2], r[v]);
  }
  return r;
}

/// wave32_mma without matrix units: lane q of the wave computes its own
/// elements (the op's layout): per 16 x 16 tile, rows 2*u + q/16 (8 of
/// them) and column q%16; the 8*(m/16) rows of A and n/16 columns of B it
/// needs read once per k, then fused multiply-adds in order k = 0..15
/// (i8: integer ones in i32).
SmallVector<Value> wave32MmaByLane(OpBuilder &b, Location l, t::Wave32MmaOp o, Value a, Value bm, Value aIndex,
                                   Value bIndex, ArrayRef<Value> acc, Value q) {
  const int64_t m = o.getM(), n = o.getN(), lda = o.getLda(), ldb = o.getLdb();
  const int64_t tilesM = m / 16, tilesN = n / 16;
  Type ot = o.getOperandType();
  auto c = [&](int64_t v) { return cIdx(b, l, v); };
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
  Value half = b.create<arith::DivUIOp>(l, q, c(16));  // 0 or 1
  Value col = b.create<arith::RemUIOp>(l, q, c(16));
  Value aRow0 = add(aIndex, b.create<arith::MulIOp>(l, half, c(lda)));
  Value bCol0 = add(bIndex, col);
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t k = 0; k < 16; ++k) {
    SmallVector<Value> av, bv;  // av[tm*8 + u], bv[tn]
    for (int64_t tm = 0; tm < tilesM; ++tm)
      for (int64_t u = 0; u < 8; ++u)
        av.push_back(operandToCompute(b, l, b.create<memref::LoadOp>(l, a, add(aRow0, c((16 * tm + 2 * u) * lda + k))), ot));
    for (int64_t tn = 0; tn < tilesN; ++tn)
      bv.push_back(operandToCompute(b, l, b.create<memref::LoadOp>(l, bm, add(bCol0, c(k * ldb + 16 * tn))), ot));
    for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v) {
      const int64_t t = v / 8, u = v % 8;
      r[v] = multiplyAdd(b, l, av[(t / tilesN) * 8 + u], bv[t % tilesN], r[v]);
    }
  }
  return r;
}

struct MmaPattern : OpConversionPattern<t::MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::MmaOp o, OpAdaptor ad, ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    auto at = o.getA().getType().cast<VectorType>();
    auto ct = o.getAcc().getType().cast<VectorType>();
    int64_t M = at.getDimSize(0), K = at.getDimSize(1), N = ct.getDimSize(1);
    auto a = unpackScalars(rw, ad.getA(), o), b = unpackScalars(rw, ad.getB(), o), c = unpackScalars(rw, ad.getAcc(), o);
    if (failed(a) || failed(b) || failed(c)) return failure();
    Type ce = ct.getElementType();
    bool fl = ce.isa<FloatType>();
    auto widen = [&](Value v) -> Value {
      if (v.getType() == ce) return v;
      return fl ? rw.create<arith::ExtFOp>(l, ce, v).getResult() : rw.create<arith::ExtSIOp>(l, ce, v).getResult();
    };
    SmallVector<Value> av, bv;
    for (Value x : *a) av.push_back(widen(x));
    for (Value x : *b) bv.push_back(widen(x));
    SmallVector<Value> r(c->begin(), c->end());
    for (int64_t k = 0; k < K; ++k)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          Value x = av[i * K + k], y = bv[k * N + j], &acc = r[i * N + j];
          acc = fl ? rw.create<math::FmaOp>(l, x, y, acc).getResult()
                   : rw.create<arith::AddIOp>(l, acc, rw.create<arith::MulIOp>(l, x, y)).getResult();
        }
    rw.replaceOp(o, packScalars(rw, l, ct, r));
    return success();
  }
};

/// subgroup_mma and wave32_mma (lanes of 32), warpgroup_mma (lanes of
/// 128) and wavefront_mma (lanes of 64): the target's hook when it has
/// one, else per-lane FMAs.
template <typename Op, int64_t kWidth>
struct CooperativeMmaPattern : KernelPattern<Op> {
  using KernelPattern<Op>::KernelPattern;
  using Hook = std::function<FailureOr<SmallVector<Value>>(OpBuilder &, Op, ArrayRef<Value>, Value)>;
  using ByLane = SmallVector<Value> (*)(OpBuilder &, Location, Op, Value, Value, Value, Value, ArrayRef<Value>, Value);
  const Hook &hook() const;
  static constexpr ByLane byLane();

  LogicalResult matchAndRewrite(Op o, typename Op::Adaptor a, ConversionPatternRewriter &rw) const override {
    auto c = unpackScalars(rw, a.getAcc(), o);
    if (failed(c)) return failure();
    Value lane = laneModulo(rw, o.getLoc(), this->kernel.group, kWidth);  // the lane's index in its subgroup / warpgroup
    SmallVector<Value> r;
    if (hook()) {
      auto hooked = hook()(rw, o, *c, lane);
      if (failed(hooked)) return failure();
      r = std::move(*hooked);
    } else {
      r = byLane()(rw, o.getLoc(), o, a.getA(), a.getB(), a.getAIndex(), a.getBIndex(), *c, lane);
    }
    rw.replaceOp(o, packScalars(rw, o.getLoc(), o.getType(), r));
    return success();
  }
};

/// warpgroup_mma_wait: the target's hook (wgmma.wait_group), else the
/// accumulator itself.
struct WarpgroupMmaWaitPattern : KernelPattern<t::WarpgroupMmaWaitOp> {
  using KernelPattern::KernelPattern;
  LogicalResult matchAndRewrite(t::WarpgroupMmaWaitOp o, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    if (!kernel.options->warpgroupMmaWait) {
      rw.replaceOp(o, a.getAcc());
      return success();
    }
    auto c = unpackScalars(rw, a.getAcc(), o);
    if (failed(c)) return failure();
    auto r = kernel.options->warpgroupMmaWait(rw, o, *c);
    if (failed(r)) return failure();
    rw.replaceOp(o, packScalars(rw, o.getLoc(), o.getType(), *r));
    return success();
  }
};

using SubgroupMmaPattern = CooperativeMmaPattern<t::SubgroupMmaOp, 32>;
using WarpgroupMmaPattern = CooperativeMmaPattern<t::WarpgroupMmaOp, 128>;
using WavefrontMmaPattern = CooperativeMmaPattern<t::WavefrontMmaOp, 64>;
using Wave32MmaPattern = CooperativeMmaPattern<t::Wave32MmaOp, 32>;
template <>
const SubgroupMmaPattern::Hook &SubgroupMmaPattern::hook() const { return kernel.options->subgroupMma; }
template <>
constexpr SubgroupMmaPattern::ByLane SubgroupMmaPattern::byLane() { return subgroupMmaByLane; }
template <>
const WarpgroupMmaPattern::Hook &WarpgroupMmaPattern::hook() const { return kernel.options->warpgroupMma; }
template <>
constexpr WarpgroupMmaPattern::ByLane WarpgroupMmaPattern::byLane() { return warpgroupMmaByLane; }
template <>
const WavefrontMmaPattern::Hook &WavefrontMmaPattern::hook() const { return kernel.options->wavefrontMma; }
template <>
constexpr WavefrontMmaPattern::ByLane WavefrontMmaPattern::byLane() { return wavefrontMmaByLane; }
template <>
const Wave32MmaPattern::Hook &Wave32MmaPattern::hook() const { return kernel.options->wave32Mma; }
template <>
constexpr Wave32MmaPattern::ByLane Wave32MmaPattern::byLane() { return wave32MmaByLane; }

}  // namespace

/// wavefront_mma without matrix units: lane p of the wavefront computes its
/// own elements (the op's layout): per 32 x 32 tile, rows 8*(u/4) + 4*(p/32)
/// + u%4 (16 of them) and column p%32; the 16*(m/32) rows of A and n/32
/// columns of B it needs read once per k, then fused multiply-adds in order
/// k = 0..7 (i8: integer ones, k = 0..15).
SmallVector<Value> wavefrontMmaByLane(OpBuilder &b, Location l, t::WavefrontMmaOp o, Value a, Value bm, Value aIndex,
                                      Value bIndex, ArrayRef<Value> acc, Value p) {
  const int64_t m = o.getM(), n = o.getN(), lda = o.getLda(), ldb = o.getLdb();
  const int64_t tilesM = m / 32, tilesN = n / 32;
  Type ot = o.getOperandType();
  auto c = [&](int64_t v) { return cIdx(b, l, v); };
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
  // i8 operands: sign-extended, multiplied and added in i32 (exact, wrapping).
  auto operand = [&](Value x) { return operandToCompute(b, l, x, ot); };
  Value half = b.create<arith::MulIOp>(l, b.create<arith::DivUIOp>(l, p, c(32)), c(4));  // 0 or 4
  Value col = b.create<arith::RemUIOp>(l, p, c(32));
  Value aRow0 = add(aIndex, b.create<arith::MulIOp>(l, half, c(lda)));
  Value bCol0 = add(bIndex, col);
  SmallVector<Value> r(acc.begin(), acc.end());
  const int64_t depth = ot.isInteger(8) ? 16 : 8;  // the op is 16 deep for i8
  for (int64_t k = 0; k < depth; ++k) {
    SmallVector<Value> av, bv;  // av[tm*16 + u], bv[tn]
    for (int64_t tm = 0; tm < tilesM; ++tm)
      for (int64_t u = 0; u < 16; ++u)
        av.push_back(
            operand(b.create<memref::LoadOp>(l, a, add(aRow0, c((32 * tm + 8 * (u / 4) + u % 4) * lda + k)))));
    for (int64_t tn = 0; tn < tilesN; ++tn)
      bv.push_back(operand(b.create<memref::LoadOp>(l, bm, add(bCol0, c(k * ldb + 32 * tn)))));
    for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v) {
      const int64_t t = v / 16, u = v % 16;
      r[v] = multiplyAdd(b, l, av[(t / tilesN) * 16 + u], bv[t % tilesN], r[v]);
    }
  }
  return r;
}

void populateMmaPatterns(RewritePatternSet &patterns, KernelContext &kernel) {
  patterns.add<MmaPattern>(patterns.getContext());
  patterns.add<SubgroupMmaPattern, WarpgroupMmaPattern, WarpgroupMmaWaitPattern, WavefrontMmaPattern,
               Wave32MmaPattern>(patterns.getContext(), kernel);
}

LogicalResult checkMmaOps(func::FuncOp f, const KernelContext &k) {
  WalkResult r = f.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if (auto o = dyn_cast<t::MmaOp>(op)) {
      Type e = o.getA().getType().cast<VectorType>().getElementType();
      if (noSPIRVType(e)) {
        op->emitOpError() << "has " << e << " fragments, which have no SPIR-V type for Vulkan in MLIR 16";
        return WalkResult::interrupt();
      }
    } else if (isa<t::SubgroupMmaOp, t::Wave32MmaOp>(op) && k.lanes() % 32) {
      op->emitOpError() << "needs groups of whole 32-lane " << (isa<t::Wave32MmaOp>(op) ? "waves" : "subgroups")
                        << "; this kernel's group has " << k.lanes() << " lanes";
      return WalkResult::interrupt();
    } else if (isa<t::WavefrontMmaOp>(op) && k.lanes() % 64) {
      op->emitOpError() << "needs groups of whole 64-lane wavefronts; this kernel's group has " << k.lanes()
                        << " lanes";
      return WalkResult::interrupt();
    } else if (isa<t::WarpgroupMmaOp>(op) && k.lanes() % 128) {
      op->emitOpError() << "needs groups of whole 128-lane warpgroups; this kernel's group has " << k.lanes()
                        << " lanes";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

}  // namespace tessera::gpu_lowering
