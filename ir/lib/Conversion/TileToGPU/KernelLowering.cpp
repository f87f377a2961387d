//===- KernelLowering.cpp - Tile IR kernel bodies -> gpu/memref ops --------===//
//
// See tessera/Conversion/TileToGPU/KernelLowering.h.  The scalarization of
// vectors and most ops are shared; the SPIR-V / NVVM specific forms of the
// subgroup ops and atomics are chosen by KernelLoweringOptions::target.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/TileToGPU/KernelLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;
using tessera::gpu_lowering::GpuTarget;
using tessera::gpu_lowering::kFloatCasAttr;

namespace {

/// bf16 and the fp8 types: no SPIR-V type in MLIR 16 (no SPV_KHR_bfloat16).
bool noSPIRVType(Type t) {
  return t.isBF16() || t.isFloat8E5M2() || t.isFloat8E4M3FN();
}

/// Vectors the lowering scalarizes: 1-D values and 2-D mma fragments, with
/// elements in row-major order.
bool isVec(Type ty) {
  auto v = ty.dyn_cast<VectorType>();
  return v && (v.getRank() == 1 || v.getRank() == 2) && v.hasStaticShape();
}

/// Row-major offset of a (leading-dims) position in a vector of `shape`, and
/// the number of elements the position selects.
std::pair<int64_t, int64_t> positionOf(ArrayRef<int64_t> shape, ArrayAttr pos) {
  int64_t off = 0, count = 1;
  for (int64_t d : shape) count *= d;
  for (auto [i, a] : llvm::enumerate(pos)) {
    count /= shape[i];
    off += a.cast<IntegerAttr>().getInt() * count;
  }
  return {off, count};
}

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }

/// Tile IR -> gpu/memref/spirv ops with scalarized vectors, for one kernel.
struct KernelLowering {
  func::FuncOp f;
  SmallVector<int64_t, 3> group;
  bool casFloatAdd = false;  // f32 atomic add as a compare-exchange loop too
  bool nvvm = false;         // GpuTarget::NVVM or ROCDL: gpu.shuffle forms (else SPIR-V)
  bool rocdl = false;        // GpuTarget::ROCDL
  int64_t warp = 32;         // the hardware subgroup's lanes
  std::function<FailureOr<SmallVector<Value>>(OpBuilder &, t::SubgroupMmaOp, ArrayRef<Value>, Value)>
      subgroupMma;           // the target's subgroup_mma, or null (per-lane FMAs)
  std::function<FailureOr<SmallVector<Value>>(OpBuilder &, t::WarpgroupMmaOp, ArrayRef<Value>, Value)>
      warpgroupMma;          // the target's warpgroup_mma, or null (per-lane FMAs)
  DenseMap<Value, SmallVector<Value>> scal;  // 1-D vector -> its elements

  /// NVVM: lanes a subgroup (warp) holds here: 32, or the whole group when
  /// it is smaller (a partial warp; shuffles then stay inside it).
  int64_t warpLanes() const { return std::min<int64_t>(warp, group[0] * group[1] * group[2]); }

  /// NVVM / ROCDL: a shuffle of 32-bit words (gpu.shuffle takes i32 / f32;
  /// index and narrower integers travel as i32, f16 / bf16 as their 16
  /// bits, 64-bit values as two words shuffled alike).  A lane whose source
  /// lane is outside the warp keeps its own value (PTX's rule, made
  /// explicit by `valid`).
  Value nvShuffle(OpBuilder &b, Location l, Value v, Value off, gpu::ShuffleMode mode) {
    Type ty = v.getType();
    if (ty.isF16() || ty.isBF16()) {
      Value bits = b.create<arith::BitcastOp>(l, b.getI16Type(), v);
      return b.create<arith::BitcastOp>(l, ty, nvShuffle(b, l, bits, off, mode));
    }
    if (ty.isF64() || ty.isInteger(64)) {
      auto i32 = b.getI32Type(), i64 = b.getI64Type();
      Value bits = ty.isF64() ? b.create<arith::BitcastOp>(l, i64, v).getResult() : v;
      Value lo = b.create<arith::TruncIOp>(l, i32, bits);
      Value hi = b.create<arith::TruncIOp>(
          l, i32, b.create<arith::ShRUIOp>(l, bits, b.create<arith::ConstantIntOp>(l, 32, 64)));
      Value lo2 = nvShuffle(b, l, lo, off, mode), hi2 = nvShuffle(b, l, hi, off, mode);
      Value r = b.create<arith::OrIOp>(
          l, b.create<arith::ExtUIOp>(l, i64, lo2),
          b.create<arith::ShLIOp>(l, b.create<arith::ExtUIOp>(l, i64, hi2), b.create<arith::ConstantIntOp>(l, 32, 64)));
      return ty.isF64() ? b.create<arith::BitcastOp>(l, ty, r).getResult() : r;
    }
    Value x = v;
    if (ty.isIndex()) x = b.create<arith::IndexCastOp>(l, b.getI32Type(), v);
    else if (ty.isInteger(8) || ty.isInteger(16)) x = b.create<arith::ExtSIOp>(l, b.getI32Type(), v);
    Value o = off.getType().isIndex() ? b.create<arith::IndexCastOp>(l, b.getI32Type(), off).getResult()
                                      : off;
    Value w = b.create<arith::ConstantIntOp>(l, warpLanes(), 32);
    auto sh = b.create<gpu::ShuffleOp>(l, x, o, w, mode);
    Value r = b.create<arith::SelectOp>(l, sh.getValid(), sh.getShuffleResult(), x);
    if (ty.isIndex()) return b.create<arith::IndexCastOp>(l, ty, r);
    if (ty != r.getType()) return b.create<arith::TruncIOp>(l, ty, r);
    return r;
  }

  /// NVVM / ROCDL shuffles and reductions move scalars of 8 to 64 bits
  /// (nvShuffle).
  LogicalResult checkNvShuffleType(Operation *op, Type ty) {
    if (ty.isIndex() || ty.isF16() || ty.isBF16() || ty.isF32() || ty.isF64() || ty.isInteger(8) ||
        ty.isInteger(16) || ty.isInteger(32) || ty.isInteger(64))
      return success();
    return op->emitOpError(rocdl ? "the ROCDL lowering" : "the NVVM lowering")
           << " shuffles scalars of 8 to 64 bits (f16, bf16, f32, f64, i8 to i64, index), not "
           << ty;
  }

  FailureOr<SmallVector<Value>> elems(Value v, Operation *user) {
    if (auto it = scal.find(v); it != scal.end()) return it->second;
    DenseElementsAttr d;
    if (matchPattern(v, m_Constant(&d))) {
      OpBuilder cb(v.getDefiningOp());
      cb.setInsertionPointAfter(v.getDefiningOp());
      SmallVector<Value> r;
      for (Attribute a : d.getValues<Attribute>())
        r.push_back(cb.create<arith::ConstantOp>(v.getLoc(), a.cast<TypedAttr>()));
      return scal[v] = r;
    }
    user->emitOpError("has a vector operand the GPU lowering cannot scalarize (")
        << v.getType() << ")";
    return failure();
  }

  static Value mathOp(OpBuilder &b, Location l, t::MathFn fn, ValueRange x) {
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

  /// Indices with `k` added to the last one.
  static SmallVector<Value> shifted(OpBuilder &b, Location l, ValueRange idx, int64_t k) {
    SmallVector<Value> r(idx.begin(), idx.end());
    if (k) r.back() = b.create<arith::AddIOp>(l, r.back(), cIdx(b, l, k));
    return r;
  }

  /// Runs `build` on an i32 view of an index value (SPIR-V ops take i32).
  template <typename Fn>
  static Value onI32(OpBuilder &b, Location l, Value v, Fn build) {
    if (!v.getType().isIndex()) return build(v);
    Value x = b.create<arith::IndexCastOp>(l, b.getI32Type(), v);
    return b.create<arith::IndexCastOp>(l, b.getIndexType(), build(x));
  }

  /// Float atomic max/min have no SPIR-V op that MLIR 16 can emit
  /// (OpAtomicFMaxEXT/FMinEXT of SPV_EXT_shader_atomic_float_min_max are
  /// not in its SPIR-V dialect), and Vulkan's compare-exchange only takes
  /// integers while logical addressing forbids a float* -> int* cast.  So a
  /// buffer (kernel argument or shared_alloc) that such an atomic targets
  /// is retyped to integers of the same width: its loads and stores bitcast,
  /// and every atomic on it works on the bits (float ones carry
  /// kFloatCasAttr and become a compare-exchange loop in AtomicPattern).
  /// The bytes in memory are unchanged, so the host's view of the buffer is
  /// too.
  LogicalResult retypeFloatAtomics() {
    llvm::SetVector<Value> bufs;
    f.walk([&](t::AtomicRMWOp o) {
      if (o.getType().isa<FloatType>() &&
          (o.getKind() == t::AtomicKind::max || o.getKind() == t::AtomicKind::min ||
           (casFloatAdd && o.getKind() == t::AtomicKind::add)))
        bufs.insert(o.getMemref());
    });
    if (bufs.empty()) return success();
    MLIRContext *ctx = f.getContext();
    for (Value v : bufs) {
      auto mt = v.getType().cast<MemRefType>();
      auto ft = mt.getElementType().cast<FloatType>();
      auto it = IntegerType::get(ctx, ft.getWidth());
      auto nt = MemRefType::get(mt.getShape(), it, mt.getLayout(), mt.getMemorySpace());
      Value nv;
      auto ba = v.dyn_cast<BlockArgument>();
      if (ba && ba.getOwner() == &f.front()) {
        ba.setType(nt);
        nv = ba;
      } else if (auto al = v.getDefiningOp<memref::AllocOp>()) {
        OpBuilder ab(al);
        nv = ab.create<memref::AllocOp>(al.getLoc(), nt, al.getAlignmentAttr());
      } else {
        return mlir::emitError(v.getLoc(), "float atomic max/min on a buffer that is neither a "
                                           "kernel argument nor a shared_alloc: the SPIR-V "
                                           "lowering cannot retype it to integers");
      }
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *u = use.getOwner();
        OpBuilder ub(u);
        Location l = u->getLoc();
        if (auto ld = dyn_cast<memref::LoadOp>(u)) {
          Value x = ub.create<memref::LoadOp>(l, nv, ld.getIndices());
          ld.replaceAllUsesWith(ub.create<arith::BitcastOp>(l, ft, x).getResult());
          ld.erase();
        } else if (auto st = dyn_cast<memref::StoreOp>(u)) {
          if (use.getOperandNumber() != 1)
            return u->emitOpError("stores a buffer that float atomics retype to integers");
          Value x = ub.create<arith::BitcastOp>(l, it, st.getValue());
          ub.create<memref::StoreOp>(l, x, nv, st.getIndices());
          st.erase();
        } else if (auto at = dyn_cast<t::AtomicRMWOp>(u)) {
          Value x = ub.create<arith::BitcastOp>(l, it, at.getValue());
          auto na = ub.create<t::AtomicRMWOp>(l, it, at.getKind(), x, nv, at.getIndices(),
                                              at.getScope());
          if (at.getKind() != t::AtomicKind::xchg)  // exchange moves bits as they are
            na->setAttr(kFloatCasAttr, TypeAttr::get(ft));
          at.replaceAllUsesWith(ub.create<arith::BitcastOp>(l, ft, na.getResult()).getResult());
          at.erase();
        } else {
          return u->emitOpError("uses a buffer that float atomic max/min retype to integers; "
                                "the SPIR-V lowering handles only loads, stores and atomics there");
        }
      }
      if (!ba) v.getDefiningOp()->erase();
    }
    f.setType(FunctionType::get(ctx, f.front().getArgumentTypes(), {}));
    return success();
  }

  /// A 16-bit operand of subgroup_mma as f32. The buffer holds the
  /// operand's type or its bits (i16); as the GPU kernels store them
  /// (bf16 in i16, f16 as f16) they widen like any stored element.
  static Value operandToF32(OpBuilder &b, Location l, Value x, Type operandType) {
    Type stored = operandType.isBF16() ? Type(b.getI16Type()) : operandType;
    if (x.getType() != stored) x = b.create<arith::BitcastOp>(l, stored, x);
    return tessera::elements::widen(b, l, x, operandType,
                                    {/*hardwareF16=*/true, /*bf16AsI16=*/true, /*selectDivisionByZero=*/false});
  }

  /// The lane's linear index in its group modulo `width` (its index in its
  /// subgroup or warpgroup).
  Value laneModulo(OpBuilder &b, Location l, int64_t width) {
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
  SmallVector<Value> subgroupMmaByLane(OpBuilder &b, Location l, t::SubgroupMmaOp o, ArrayRef<Value> acc,
                                       Value q) {
    const int64_t m = o.getM(), n = o.getN(), lda = o.getLda(), ldb = o.getLdb();
    const int64_t tilesN = n / 8;
    Type ot = o.getOperandType();
    Value q4 = b.create<arith::DivUIOp>(l, q, cIdx(b, l, 4));
    Value qm = b.create<arith::MulIOp>(l, b.create<arith::RemUIOp>(l, q, cIdx(b, l, 4)), cIdx(b, l, 2));
    Value aRow0 = b.create<arith::AddIOp>(l, o.getAIndex(), b.create<arith::MulIOp>(l, q4, cIdx(b, l, lda)));
    Value bCol0 = b.create<arith::AddIOp>(l, o.getBIndex(), qm);
    SmallVector<Value> r(acc.begin(), acc.end());
    for (int64_t k = 0; k < 16; ++k) {
      // Rows 16*tm + q/4 + 8*h of A, columns 8*tn + 2*(q%4) + c of B.
      SmallVector<Value> av, bv;
      for (int64_t row = 0; row < m / 8; ++row) {
        Value i = b.create<arith::AddIOp>(l, aRow0, cIdx(b, l, (row / 2 * 16 + row % 2 * 8) * lda + k));
        av.push_back(operandToF32(b, l, b.create<memref::LoadOp>(l, o.getA(), i), ot));
      }
      for (int64_t col = 0; col < n / 4; ++col) {
        Value i = b.create<arith::AddIOp>(l, bCol0, cIdx(b, l, k * ldb + col / 2 * 8 + col % 2));
        bv.push_back(operandToF32(b, l, b.create<memref::LoadOp>(l, o.getB(), i), ot));
      }
      for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v) {
        int64_t t = v / 4, e = v % 4, tm = t / tilesN, tn = t % tilesN;
        r[v] = b.create<math::FmaOp>(l, av[tm * 2 + e / 2], bv[tn * 2 + e % 2], r[v]);
      }
    }
    return r;
  }

  /// warpgroup_mma without matrix units: lane p of the warpgroup computes
  /// its own elements (the op's layout) from the swizzled operands: its two
  /// rows of A and n/4 columns of B once per k, then fused multiply-adds in
  /// order k.
  SmallVector<Value> warpgroupMmaByLane(OpBuilder &b, Location l, t::WarpgroupMmaOp o, ArrayRef<Value> acc,
                                        Value p) {
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
    Value aRow0 = add(o.getAIndex(), b.create<arith::MulIOp>(l, row0, c(64)));
    Value col0 = b.create<arith::MulIOp>(l, b.create<arith::RemUIOp>(l, q, c(4)), c(2));  // < 8: j / 64 is static
    SmallVector<Value> r(acc.begin(), acc.end());
    for (int64_t k = 0; k < static_cast<int64_t>(o.getK()); ++k) {
      Value a0 = operandToF32(b, l, b.create<memref::LoadOp>(l, o.getA(), sw(add(aRow0, c(k)))), ot);
      Value a1 = operandToF32(b, l, b.create<memref::LoadOp>(l, o.getA(), sw(add(aRow0, c(8 * 64 + k)))), ot);
      SmallVector<Value> bv;  // columns 8*t + col0 + e, t < n/8, e < 2
      for (int64_t t = 0; t < n / 8; ++t)
        for (int64_t e = 0; e < 2; ++e) {
          const int64_t j = 8 * t + e;  // plus col0 (< 8, same 64-column block)
          Value at = add(o.getBIndex(), add(col0, c(stride * (j / 64) + 64 * k + j % 64)));
          bv.push_back(operandToF32(b, l, b.create<memref::LoadOp>(l, o.getB(), sw(at)), ot));
        }
      for (int64_t v = 0; v < static_cast<int64_t>(r.size()); ++v)
        r[v] = b.create<math::FmaOp>(l, (v % 4) / 2 ? a1 : a0, bv[2 * (v / 4) + v % 2], r[v]);
    }
    return r;
  }

  LogicalResult run() {
    MLIRContext *ctx = f.getContext();
    SmallVector<Operation *> ops;
    // Pre-order: a loop is rewritten (its vector iter_args scalarized)
    // before the ops of its body, which read them.
    f.walk<WalkOrder::PreOrder>([&](Operation *op) { ops.push_back(op); });
    SmallVector<Operation *> done;  // replaced; erased at the end
    OpBuilder b(ctx);
    Value tileId;
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      Location l = op->getLoc();
      auto dimOf = [](uint64_t d) { return static_cast<gpu::Dimension>(d); };
      auto replace = [&](Value v) {
        op->getResult(0).replaceAllUsesWith(v);
        done.push_back(op);
      };
      auto replaceVec = [&](SmallVector<Value> v) {
        scal[op->getResult(0)] = std::move(v);
        done.push_back(op);
      };
      if (auto o = dyn_cast<t::GroupIdOp>(op)) {
        replace(b.create<gpu::BlockIdOp>(l, dimOf(o.getDim())));
      } else if (auto o = dyn_cast<t::GroupCountOp>(op)) {
        replace(b.create<gpu::GridDimOp>(l, dimOf(o.getDim())));
      } else if (auto o = dyn_cast<t::LaneIdOp>(op)) {
        replace(b.create<gpu::ThreadIdOp>(l, dimOf(o.getDim())));
      } else if (auto o = dyn_cast<t::LaneCountOp>(op)) {
        replace(cIdx(b, l, group[o.getDim()]));
      } else if (isa<t::TileIdOp>(op)) {
        if (!tileId) {
          OpBuilder eb = OpBuilder::atBlockBegin(&f.front());
          Value x = eb.create<gpu::BlockIdOp>(l, gpu::Dimension::x);
          Value y = eb.create<gpu::BlockIdOp>(l, gpu::Dimension::y);
          Value z = eb.create<gpu::BlockIdOp>(l, gpu::Dimension::z);
          Value gx = eb.create<gpu::GridDimOp>(l, gpu::Dimension::x);
          Value gy = eb.create<gpu::GridDimOp>(l, gpu::Dimension::y);
          Value yz = eb.create<arith::AddIOp>(l, y, eb.create<arith::MulIOp>(l, z, gy));
          tileId = eb.create<arith::AddIOp>(l, x, eb.create<arith::MulIOp>(l, yz, gx));
        }
        replace(tileId);
      } else if (isa<t::SubgroupSizeOp>(op) && nvvm) {
        replace(cIdx(b, l, warpLanes()));
      } else if (isa<t::SubgroupSizeOp>(op)) {
        // A subgroup never holds more lanes than the group: the builtin
        // reports the device width (e.g. 32/64), which overstates it for
        // small groups, and code like `lane < subgroup_size` would then
        // address lanes that do not exist.  Clamp to the group's lanes.
        int64_t lanes = group[0] * group[1] * group[2];
        Value hw = b.create<gpu::SubgroupSizeOp>(l, b.getIndexType());
        replace(b.create<arith::MinUIOp>(l, hw, cIdx(b, l, lanes)));
      } else if (isa<t::BarrierOp>(op)) {
        b.create<gpu::BarrierOp>(l);
        done.push_back(op);
      } else if (isa<t::CpAsyncCommitOp, t::CpAsyncWaitOp>(op)) {
        done.push_back(op);
      } else if (auto o = dyn_cast<t::SharedAllocOp>(op)) {
        IntegerAttr align = o.getAlignment() ? b.getI64IntegerAttr(o.getAlignment()) : IntegerAttr();
        replace(b.create<memref::AllocOp>(l, o.getType().cast<MemRefType>(), align));
      } else if (auto o = dyn_cast<t::CpAsyncOp>(op)) {
        for (int64_t k = 0; k < static_cast<int64_t>(o.getElements()); ++k) {
          Value v = b.create<memref::LoadOp>(l, o.getSource(), shifted(b, l, o.getSrcIndices(), k));
          b.create<memref::StoreOp>(l, v, o.getTarget(), shifted(b, l, o.getDstIndices(), k));
        }
        done.push_back(op);
      } else if (auto o = dyn_cast<t::LoadOp>(op)) {
        SmallVector<Value> r;
        for (int64_t k = 0; k < o.getType().getNumElements(); ++k)
          r.push_back(b.create<memref::LoadOp>(l, o.getMemref(), shifted(b, l, o.getIndices(), k)));
        replaceVec(r);
      } else if (auto o = dyn_cast<t::StoreOp>(op)) {
        auto v = elems(o.getValue(), op);
        if (failed(v)) return failure();
        for (auto [k, x] : llvm::enumerate(*v))
          b.create<memref::StoreOp>(l, x, o.getMemref(), shifted(b, l, o.getIndices(), k));
        done.push_back(op);
      } else if (auto o = dyn_cast<t::MathOp>(op)) {
        if (!isVec(o.getType())) {
          replace(mathOp(b, l, o.getFn(), o.getOperands()));
          continue;
        }
        SmallVector<SmallVector<Value>> xs;
        for (Value x : o.getOperands()) {
          auto e = elems(x, op);
          if (failed(e)) return failure();
          xs.push_back(*e);
        }
        SmallVector<Value> r;
        for (int64_t k = 0; k < o.getType().cast<VectorType>().getNumElements(); ++k) {
          SmallVector<Value> args;
          for (auto &x : xs) args.push_back(x[k]);
          r.push_back(mathOp(b, l, o.getFn(), args));
        }
        replaceVec(r);
      } else if (auto o = dyn_cast<t::DotOp>(op)) {
        auto a = elems(o.getA(), op), bb = elems(o.getB(), op);
        if (failed(a) || failed(bb)) return failure();
        Type ae = o.getAcc().getType();
        bool fl = ae.isa<FloatType>();
        auto widen = [&](Value v) -> Value {
          if (v.getType() == ae) return v;
          return fl ? b.create<arith::ExtFOp>(l, ae, v).getResult()
                    : b.create<arith::ExtSIOp>(l, ae, v).getResult();
        };
        Value acc = o.getAcc();
        for (auto [x, y] : llvm::zip(*a, *bb)) {
          Value p = fl ? b.create<arith::MulFOp>(l, widen(x), widen(y)).getResult()
                       : b.create<arith::MulIOp>(l, widen(x), widen(y)).getResult();
          acc = fl ? b.create<arith::AddFOp>(l, acc, p).getResult()
                   : b.create<arith::AddIOp>(l, acc, p).getResult();
        }
        replace(acc);
      } else if (auto o = dyn_cast<t::SubgroupReduceOp>(op); o && nvvm) {
        // An xor butterfly over the warp: every lane ends with the same
        // value, combined in the same order on every lane.
        Value v = o.getValue();
        if (failed(checkNvShuffleType(op, v.getType()))) return failure();
        int64_t w = warpLanes();
        if (w & (w - 1))
          return op->emitOpError(rocdl ? "the ROCDL lowering" : "the NVVM lowering")
                 << " reduces over a power-of-two number of lanes; this group has " << w;
        bool fl = v.getType().isa<FloatType>();
        for (int64_t k = w / 2; k >= 1; k /= 2) {
          Value other = nvShuffle(b, l, v, b.create<arith::ConstantIntOp>(l, k, 32),
                                  gpu::ShuffleMode::XOR);
          switch (o.getKind()) {
          case t::ReduceKind::add:
            v = fl ? b.create<arith::AddFOp>(l, v, other).getResult()
                   : b.create<arith::AddIOp>(l, v, other).getResult();
            break;
          case t::ReduceKind::max:
            v = fl ? b.create<arith::MaxFOp>(l, v, other).getResult()
                   : b.create<arith::MaxSIOp>(l, v, other).getResult();
            break;
          case t::ReduceKind::min:
            v = fl ? b.create<arith::MinFOp>(l, v, other).getResult()
                   : b.create<arith::MinSIOp>(l, v, other).getResult();
            break;
          }
        }
        replace(v);
      } else if (auto o = dyn_cast<t::SubgroupReduceOp>(op)) {
        Value v = o.getValue();
        bool fl = v.getType().isa<FloatType>();
        auto sc = spirv::Scope::Subgroup;
        auto red = spirv::GroupOperation::Reduce;
        replace(onI32(b, l, v, [&](Value x) -> Value {
          Type ty = x.getType();
          switch (o.getKind()) {
          case t::ReduceKind::add:
            return fl ? b.create<spirv::GroupNonUniformFAddOp>(l, ty, sc, red, x, Value()).getResult()
                      : b.create<spirv::GroupNonUniformIAddOp>(l, ty, sc, red, x, Value()).getResult();
          case t::ReduceKind::max:
            return fl ? b.create<spirv::GroupNonUniformFMaxOp>(l, ty, sc, red, x, Value()).getResult()
                      : b.create<spirv::GroupNonUniformSMaxOp>(l, ty, sc, red, x, Value()).getResult();
          case t::ReduceKind::min:
            return fl ? b.create<spirv::GroupNonUniformFMinOp>(l, ty, sc, red, x, Value()).getResult()
                      : b.create<spirv::GroupNonUniformSMinOp>(l, ty, sc, red, x, Value()).getResult();
          }
          return x;
        }));
      } else if (auto o = dyn_cast<t::ShuffleOp>(op); o && nvvm) {
        if (failed(checkNvShuffleType(op, o.getValue().getType()))) return failure();
        gpu::ShuffleMode mode = gpu::ShuffleMode::IDX;
        switch (o.getMode()) {
        case t::ShuffleMode::Xor: mode = gpu::ShuffleMode::XOR; break;
        case t::ShuffleMode::down: mode = gpu::ShuffleMode::DOWN; break;
        case t::ShuffleMode::up: mode = gpu::ShuffleMode::UP; break;
        case t::ShuffleMode::idx: mode = gpu::ShuffleMode::IDX; break;
        }
        replace(nvShuffle(b, l, o.getValue(), o.getOffset(), mode));
      } else if (auto o = dyn_cast<t::ShuffleOp>(op)) {
        // up/down need the subgroup-local lane id and size for their
        // out-of-range rule: lowered by ShuffleRelativePattern during the
        // conversion, where the builtins can be declared.  Record the
        // group's lane count for it.
        if (o.getMode() == t::ShuffleMode::up || o.getMode() == t::ShuffleMode::down) {
          op->setAttr("tessera.group_lanes", b.getI32IntegerAttr(group[0] * group[1] * group[2]));
          continue;
        }
        Value off = b.create<arith::IndexCastOp>(l, b.getI32Type(), o.getOffset());
        bool isXor = o.getMode() == t::ShuffleMode::Xor;
        replace(onI32(b, l, o.getValue(), [&](Value x) -> Value {
          if (isXor)
            return b.create<spirv::GroupNonUniformShuffleXorOp>(l, x.getType(), spirv::Scope::Subgroup, x, off);
          return b.create<spirv::GroupNonUniformShuffleOp>(l, x.getType(), spirv::Scope::Subgroup, x, off);
        }));
      } else if (auto o = dyn_cast<t::AtomicRMWOp>(op); o && nvvm) {
        // PTX atom without a scope qualifier is .gpu: right for tile, group
        // and device scopes.  Mesh (the host and peer devices) needs
        // atom.sys, which this generic tier does not emit yet.
        // (ROCDL: an atomicrmw's default syncscope is the system's, which
        // the AMDGPU back end honours, so mesh needs nothing more there.)
        if (o.getScope() == t::AtomicScope::mesh && !rocdl)
          return op->emitOpError("has scope 'mesh', which the cuda compiler does not lower yet "
                                 "(it would need atom.sys); use scope = device and combine "
                                 "across devices with a collective");
        Type ty = o.getType();
        bool fl = ty.isa<FloatType>();
        arith::AtomicRMWKind kind = arith::AtomicRMWKind::assign;
        switch (o.getKind()) {
        case t::AtomicKind::add: kind = fl ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi; break;
        case t::AtomicKind::max: kind = fl ? arith::AtomicRMWKind::maxf : arith::AtomicRMWKind::maxs; break;
        case t::AtomicKind::min: kind = fl ? arith::AtomicRMWKind::minf : arith::AtomicRMWKind::mins; break;
        case t::AtomicKind::xchg: kind = arith::AtomicRMWKind::assign; break;
        }
        replace(b.create<memref::AtomicRMWOp>(l, kind, o.getValue(), o.getMemref(), o.getIndices()));
      } else if (auto o = dyn_cast<t::AtomicRMWOp>(op)) {
        Type ty = o.getType();
        unsigned w = ty.isIndex() ? 32 : ty.getIntOrFloatBitWidth();
        bool fl = ty.isa<FloatType>();
        // Vulkan atomics are on 32-bit integers and floats, and on 64-bit
        // integers with Int64Atomics; float atomics are 32-bit here (MLIR
        // 16 has no 16/64-bit float atomic ops we could emit portably).
        if (!(w == 32 || (w == 64 && !fl)))
          return op->emitOpError("SPIR-V atomics take 32-bit values (or 64-bit integers), not ") << ty;
        // Vulkan's memory model has no system scope, and the Level Zero
        // kernels do not claim CrossDevice: a mesh atomic lowered to Device
        // scope would silently stop being atomic with respect to the host
        // and peer devices (neither plugin reports atomic_scopes.mesh).
        if (o.getScope() == t::AtomicScope::mesh)
          return op->emitOpError(
              "has scope 'mesh' (the host and peer devices), which the SPIR-V kernels cannot "
              "express: their widest atomic scope is one device (the vulkan and level_zero "
              "plugins report no atomic_scopes.mesh). Use scope = device and combine across "
              "devices with a collective, or read the result on the host after the kernel "
              "completes; or run the kernel on a backend with atomic_scopes.mesh (cpu, cuda)");
        // lowered by the conversion (tessera-gpu-to-spirv); float max/min
        // first move onto the buffer's integer bits (retypeFloatAtomics).
      } else if (auto o = dyn_cast<t::MmaOp>(op)) {
        // Each lane owns its whole fragments (Tile IR vectors are per-lane
        // register values, as on the cpu path): c[i][j] += a[i][k] * b[k][j]
        // for k = 0..K-1 in order, as fused multiply-adds (the cpu's
        // vector.outerproduct also becomes one FMA per k).  No cooperative
        // matrices: MLIR 16 only has the NV flavour and lavapipe has none.
        auto at = o.getA().getType().cast<VectorType>();
        auto ct = o.getAcc().getType().cast<VectorType>();
        if (noSPIRVType(at.getElementType()))
          return op->emitOpError() << "has " << at.getElementType()
                                   << " fragments, which have no SPIR-V type for Vulkan in MLIR 16";
        int64_t M = at.getDimSize(0), K = at.getDimSize(1), N = ct.getDimSize(1);
        auto a = elems(o.getA(), op), bb = elems(o.getB(), op), c = elems(o.getAcc(), op);
        if (failed(a) || failed(bb) || failed(c)) return failure();
        Type ce = ct.getElementType();
        bool fl = ce.isa<FloatType>();
        auto widen = [&](Value v) -> Value {
          if (v.getType() == ce) return v;
          return fl ? b.create<arith::ExtFOp>(l, ce, v).getResult()
                    : b.create<arith::ExtSIOp>(l, ce, v).getResult();
        };
        SmallVector<Value> av, bv;
        for (Value x : *a) av.push_back(widen(x));
        for (Value x : *bb) bv.push_back(widen(x));
        SmallVector<Value> r(c->begin(), c->end());
        for (int64_t k = 0; k < K; ++k)
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              Value x = av[i * K + k], y = bv[k * N + j], &acc = r[i * N + j];
              acc = fl ? b.create<math::FmaOp>(l, x, y, acc).getResult()
                       : b.create<arith::AddIOp>(l, acc, b.create<arith::MulIOp>(l, x, y)).getResult();
            }
        replaceVec(r);
      } else if (auto o = dyn_cast<t::SubgroupMmaOp>(op)) {
        auto c = elems(o.getAcc(), op);
        if (failed(c)) return failure();
        int64_t lanes = group[0] * group[1] * group[2];
        if (lanes % 32)
          return op->emitOpError() << "needs groups of whole 32-lane subgroups; this kernel's group has "
                                   << lanes << " lanes";
        Value q = laneModulo(b, l, 32);  // the lane's index in its subgroup
        if (subgroupMma) {
          auto r = subgroupMma(b, o, *c, q);
          if (failed(r)) return failure();
          replaceVec(std::move(*r));
        } else {
          replaceVec(subgroupMmaByLane(b, l, o, *c, q));
        }
      } else if (auto o = dyn_cast<t::WarpgroupMmaOp>(op)) {
        auto c = elems(o.getAcc(), op);
        if (failed(c)) return failure();
        int64_t lanes = group[0] * group[1] * group[2];
        if (lanes % 128)
          return op->emitOpError() << "needs groups of whole 128-lane warpgroups; this kernel's group has "
                                   << lanes << " lanes";
        Value p = laneModulo(b, l, 128);  // the lane's index in its warpgroup
        if (warpgroupMma) {
          auto r = warpgroupMma(b, o, *c, p);
          if (failed(r)) return failure();
          replaceVec(std::move(*r));
        } else {
          replaceVec(warpgroupMmaByLane(b, l, o, *c, p));
        }
      } else if (auto o = dyn_cast<vector::InsertOp>(op)) {
        auto dt = o.getDestVectorType();
        if (!isVec(dt)) return op->emitOpError("only 1-D / 2-D vectors lower to SPIR-V");
        auto d = elems(o.getDest(), op);
        if (failed(d)) return failure();
        auto [off, count] = positionOf(dt.getShape(), o.getPosition());
        SmallVector<Value> r(d->begin(), d->end());
        if (isVec(o.getSourceType())) {
          auto src = elems(o.getSource(), op);
          if (failed(src)) return failure();
          for (int64_t k = 0; k < count; ++k) r[off + k] = (*src)[k];
        } else {
          r[off] = o.getSource();
        }
        replaceVec(r);
      } else if (auto o = dyn_cast<vector::ExtractOp>(op)) {
        auto vt = o.getVectorType();
        if (!isVec(vt)) return op->emitOpError("only 1-D / 2-D vectors lower to SPIR-V");
        auto v = elems(o.getVector(), op);
        if (failed(v)) return failure();
        auto [off, count] = positionOf(vt.getShape(), o.getPosition());
        if (isVec(o.getType()))
          replaceVec(SmallVector<Value>(v->begin() + off, v->begin() + off + count));
        else
          replace((*v)[off]);
      } else if (auto o = dyn_cast<scf::ForOp>(op)) {
        // Loop-carried vectors (an mma accumulator) become one scalar
        // iter_arg per element; the body moves into the new loop as is and
        // its uses of the vector argument read the scalars.
        if (llvm::none_of(o.getInitArgs(), [](Value v) { return isVec(v.getType()); })) continue;
        SmallVector<Value> inits;
        SmallVector<std::pair<int64_t, int64_t>> slots;  // (first, count) per old iter_arg
        for (Value v : o.getInitArgs()) {
          if (!isVec(v.getType())) {
            slots.push_back({(int64_t)inits.size(), 0});
            inits.push_back(v);
            continue;
          }
          auto e = elems(v, op);
          if (failed(e)) return failure();
          slots.push_back({(int64_t)inits.size(), (int64_t)e->size()});
          inits.append(e->begin(), e->end());
        }
        auto nf = b.create<scf::ForOp>(l, o.getLowerBound(), o.getUpperBound(), o.getStep(), inits);
        Block *nb = nf.getBody(), *ob = o.getBody();
        if (!nb->empty()) nb->getTerminator()->erase();
        nb->getOperations().splice(nb->end(), ob->getOperations());
        o.getInductionVar().replaceAllUsesWith(nf.getInductionVar());
        for (auto [i, arg] : llvm::enumerate(o.getRegionIterArgs())) {
          auto [first, count] = slots[i];
          ValueRange na = nf.getRegionIterArgs(), nr = nf.getResults();
          if (!count) {
            arg.replaceAllUsesWith(na[first]);
            o.getResult(i).replaceAllUsesWith(nr[first]);
            continue;
          }
          scal[arg] = SmallVector<Value>(na.begin() + first, na.begin() + first + count);
          scal[o.getResult(i)] = SmallVector<Value>(nr.begin() + first, nr.begin() + first + count);
        }
        done.push_back(op);
      } else if (auto o = dyn_cast<scf::YieldOp>(op)) {
        if (llvm::none_of(o.getOperands(), [](Value v) { return isVec(v.getType()); })) continue;
        if (!isa<scf::ForOp>(op->getParentOp()))
          return op->emitOpError("yields a vector from an op other than scf.for, which the GPU "
                                 "lowering cannot scalarize");
        SmallVector<Value> outs;
        for (Value v : o.getOperands()) {
          if (!isVec(v.getType())) { outs.push_back(v); continue; }
          auto e = elems(v, op);
          if (failed(e)) return failure();
          outs.append(e->begin(), e->end());
        }
        b.create<scf::YieldOp>(l, outs);
        op->erase();  // the terminator is replaced now: the block keeps one
      } else if (auto o = dyn_cast<vector::BroadcastOp>(op)) {
        if (!isVec(o.getType()) || o.getSource().getType().isa<VectorType>())
          return op->emitOpError("only scalar -> 1-D vector broadcasts lower to SPIR-V");
        replaceVec(SmallVector<Value>(o.getType().cast<VectorType>().getNumElements(), o.getSource()));
      } else if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
                 isVec(op->getResult(0).getType())) {
        SmallVector<SmallVector<Value>> xs;
        for (Value x : op->getOperands()) {
          if (!isVec(x.getType())) { xs.push_back({}); continue; }
          auto e = elems(x, op);
          if (failed(e)) return failure();
          xs.push_back(*e);
        }
        Type et = op->getResult(0).getType().cast<VectorType>().getElementType();
        SmallVector<Value> r;
        for (int64_t k = 0; k < op->getResult(0).getType().cast<VectorType>().getNumElements(); ++k) {
          OperationState st(l, op->getName());
          for (auto [i, x] : llvm::enumerate(op->getOperands())) st.addOperands(xs[i].empty() ? x : xs[i][k]);
          st.addTypes(et);
          st.addAttributes(op->getAttrs());
          r.push_back(b.create(st)->getResult(0));
        }
        replaceVec(r);
      } else if (isa_and_nonnull<t::TileDialect>(op->getDialect())) {
        return op->emitOpError("has no SPIR-V lowering");
      }
    }
    for (Operation *op : llvm::reverse(done)) {
      if (!op->use_empty())
        return op->emitOpError("its vector result is used by an op the GPU lowering cannot scalarize");
      op->erase();
    }
    if (nvvm) return success();  // the rest works around SPIR-V limits
    // MLIR 16's arith -> SPIR-V rejects unsigned compares of index (its
    // bitwidth emulation check); index is i32 in SPIR-V, so compare i32.
    SmallVector<arith::CmpIOp> cmps;
    f.walk([&](arith::CmpIOp c) {
      if (c.getLhs().getType().isIndex() && c.getPredicate() >= arith::CmpIPredicate::ult)
        cmps.push_back(c);
    });
    for (arith::CmpIOp c : cmps) {
      OpBuilder cb(c);
      Value x = cb.create<arith::IndexCastOp>(c.getLoc(), cb.getI32Type(), c.getLhs());
      Value y = cb.create<arith::IndexCastOp>(c.getLoc(), cb.getI32Type(), c.getRhs());
      c.replaceAllUsesWith(cb.create<arith::CmpIOp>(c.getLoc(), c.getPredicate(), x, y).getResult());
      c.erase();
    }
    // A select of buffers (double buffering) would be an OpSelect of
    // pointers, which needs VariablePointers: select the loaded values and
    // branch around stores instead.
    SmallVector<arith::SelectOp> sels;
    f.walk([&](arith::SelectOp s) { if (s.getType().isa<MemRefType>()) sels.push_back(s); });
    for (arith::SelectOp s : sels) {
      for (Operation *u : llvm::make_early_inc_range(s->getUsers())) {
        OpBuilder ub(u);
        Location l = u->getLoc();
        if (auto ld = dyn_cast<memref::LoadOp>(u)) {
          Value a = ub.create<memref::LoadOp>(l, s.getTrueValue(), ld.getIndices());
          Value c = ub.create<memref::LoadOp>(l, s.getFalseValue(), ld.getIndices());
          ld.replaceAllUsesWith(ub.create<arith::SelectOp>(l, s.getCondition(), a, c).getResult());
          ld.erase();
        } else if (auto st = dyn_cast<memref::StoreOp>(u)) {
          auto ifOp = ub.create<scf::IfOp>(l, s.getCondition(), /*withElse=*/true);
          OpBuilder tb = ifOp.getThenBodyBuilder();
          tb.create<memref::StoreOp>(l, st.getValue(), s.getTrueValue(), st.getIndices());
          OpBuilder eb = ifOp.getElseBodyBuilder();
          eb.create<memref::StoreOp>(l, st.getValue(), s.getFalseValue(), st.getIndices());
          st.erase();
        } else {
          return u->emitOpError("uses a select of buffers, which SPIR-V (without VariablePointers) "
                                "cannot express here");
        }
      }
      s.erase();
    }
    if (failed(retypeFloatAtomics())) return failure();
    // Unused vector constants would not convert.
    SmallVector<Operation *> dead;
    f.walk([&](arith::ConstantOp c) { if (c.use_empty() && isVec(c.getType())) dead.push_back(c); });
    for (Operation *c : dead) c->erase();
    return success();
  }
};


}  // namespace

LogicalResult tessera::gpu_lowering::lowerTileKernelBody(func::FuncOp f,
                                                         const KernelLoweringOptions &options) {
  expandTileLoads(f);
  KernelLowering kl;
  kl.f = f;
  kl.group = t::getGroupSize(f);
  kl.casFloatAdd = options.casFloatAdd;
  kl.nvvm = options.target != GpuTarget::SPIRV;
  kl.rocdl = options.target == GpuTarget::ROCDL;
  kl.warp = options.subgroupSize;
  kl.subgroupMma = options.subgroupMma;
  kl.warpgroupMma = options.warpgroupMma;
  return kl.run();
}
