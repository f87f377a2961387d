//===- MmaGemmKernel.cpp - GEMM on subgroup matrix units ------------------===//
#include "MmaGemmKernel.h"

#include "WgmmaGemmKernel.h"

#include <algorithm>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::conversion::mma {
namespace {

// Padding after each staged row: 16 bytes, so that the rows an 8x8
// matrix load reads start in different 16-byte bank groups.
constexpr int64_t kPadBytes = 16;
// cuda's static shared memory per group without an opt-in.
constexpr int64_t kMaxSharedBytes = 48 * 1024;
constexpr int64_t kStages = 2;

Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }

/// Bytes of one staged operand element: 2, 4 for f32 (mfma only), 1 for
/// i8.
int64_t operandBytes(graph::MatmulOp matmul) {
  Type e = elemOf(matmul.getLhs());
  return e.isF32() ? 4 : e.isInteger(8) ? 1 : 2;
}

int64_t sharedBytes(const GemmTile &t, int64_t bytes) {
  const int64_t bk = sliceK(t, bytes), pad = kPadBytes / bytes;
  return kStages * (t.tm * (bk + pad) + bk * (t.tn + pad)) * bytes;
}

/// What differs between the subgroup kernel (mma = "sync"), the wavefront
/// one (mma = "mfma") and the wave32 one (mma = "wmma"): the lanes of a
/// unit, its output block, the depth of one multiply, and where a lane's
/// elements are (the ops' layouts, TileOps.td).
struct Unit {
  enum Kind { Subgroup, Wavefront, Wave32 } kind;
  int64_t width, m, n, kStep;
  /// Lane q's element v of the unit's block: (row, col) = (rowOf(q) +
  /// rowAt(v), colOf(q) + colAt(v)); rowOf / colOf are built, rowAt /
  /// colAt static.
  Value rowOf(OpBuilder &b, const IndexOps &ix, Value q) const {
    switch (kind) {
    case Subgroup: return ix.divC(b, q, 4);
    case Wavefront: return ix.mulC(b, ix.divC(b, q, 32), 4);
    case Wave32: return ix.divC(b, q, 16);
    }
    return Value();
  }
  Value colOf(OpBuilder &b, const IndexOps &ix, Value q) const {
    switch (kind) {
    case Subgroup: return ix.mulC(b, ix.remC(b, q, 4), 2);
    case Wavefront: return ix.remC(b, q, 32);
    case Wave32: return ix.remC(b, q, 16);
    }
    return Value();
  }
  // subgroup_mma: t = v/4 over 16 x 8 tiles, e = v%4; wavefront_mma: t =
  // v/16 over 32 x 32 tiles, u = v%16; wave32_mma: t = v/8 over 16 x 16
  // tiles, u = v%8.
  int64_t rowAt(int64_t v) const {
    switch (kind) {
    case Subgroup: return 16 * (v / 4 / (n / 8)) + 8 * (v % 4 / 2);
    case Wavefront: return 32 * (v / 16 / (n / 32)) + 8 * (v % 16 / 4) + v % 4;
    case Wave32: return 16 * (v / 8 / (n / 16)) + 2 * (v % 8);
    }
    return 0;
  }
  int64_t colAt(int64_t v) const {
    switch (kind) {
    case Subgroup: return 8 * (v / 4 % (n / 8)) + v % 2;
    case Wavefront: return 32 * (v / 16 % (n / 32));
    case Wave32: return 16 * (v / 8 % (n / 16));
    }
    return 0;
  }
};

Unit unitOf(const GemmTile &t) {
  if (t.mmaMfma) return Unit{Unit::Wavefront, 64, kWaveM, kWaveN, 8};
  if (t.mmaWmma) return Unit{Unit::Wave32, 32, kWarpM, kWarpN, 16};
  return Unit{Unit::Subgroup, 32, kWarpM, kWarpN, 16};
}

}  // namespace

Value IndexOps::c(OpBuilder &b, int64_t v) const { return b.create<arith::ConstantIndexOp>(l, v); }
Value IndexOps::add(OpBuilder &b, Value x, Value y) const { return b.create<arith::AddIOp>(l, x, y); }
Value IndexOps::mulC(OpBuilder &b, Value x, int64_t v) const { return b.create<arith::MulIOp>(l, x, c(b, v)); }
Value IndexOps::divC(OpBuilder &b, Value x, int64_t v) const { return b.create<arith::DivUIOp>(l, x, c(b, v)); }
Value IndexOps::remC(OpBuilder &b, Value x, int64_t v) const { return b.create<arith::RemUIOp>(l, x, c(b, v)); }

int64_t sliceK(const GemmTile &t, int64_t operandBytes) {
  // f32 (4-byte) slices of 16 are as many bytes per row as 16-bit ones of 32.
  return std::max<int64_t>(operandBytes == 4 ? 16 : 32, (t.bk + 15) / 16 * 16);
}

int64_t lanes(const GemmTile &t) {
  if (t.mmaWgmma) return wgmma::lanes(t);
  const Unit u = unitOf(t);
  return (t.tm / u.m) * (t.tn / u.n) * u.width;
}

bool matrixUnitOperands(graph::MatmulOp matmul, int64_t *M, int64_t *N, int64_t *K, bool f32, bool i8) {
  Type a = elemOf(matmul.getLhs()), b = elemOf(matmul.getRhs());
  if (a != b || !(a.isBF16() || a.isF16() || (f32 && a.isF32()) || (i8 && a.isInteger(8)))) return false;
  // i8 products accumulate in i32, the others in f32.
  Type acc = elements::computeType(elemOf(matmul.getResult()));
  if (a.isInteger(8) ? !acc.isInteger(32) : !acc.isF32()) return false;
  auto at = matmul.getLhs().getType().cast<ShapedType>(), bt = matmul.getRhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  if (!at.hasStaticShape() || !bt.hasStaticShape() || at.getRank() != bt.getRank()) return false;
  const int64_t r = at.getRank();
  *M = at.getDimSize(r - 2);
  *K = at.getDimSize(r - 1);
  *N = ct.getShape().back();
  return bt.getDimSize(r - 2) == *K && bt.getDimSize(r - 1) == *N;
}

bool eligible(graph::MatmulOp matmul, const GemmTile &t) {
  if (t.mmaWgmma) return wgmma::eligible(matmul, t);
  if (!t.mmaSync && !t.mmaMfma && !t.mmaWmma) return false;
  int64_t M, N, K;
  // f32 operands on CDNA's matrix cores (v_mfma_f32_32x32x2f32); i8 ones
  // there (v_mfma_i32_32x32x8i8, gfx940: ..x16_i8), on RDNA3's
  // (v_wmma_i32_16x16x16_iu8) and on NVIDIA's tensor cores
  // (mma.sync...s32.s8.s8.s32).
  if (!matrixUnitOperands(matmul, &M, &N, &K, /*f32=*/t.mmaMfma, /*i8=*/t.mmaMfma || t.mmaSync || t.mmaWmma))
    return false;
  const Unit u = unitOf(t);
  if (t.tm % u.m || t.tn % u.n) return false;
  const int64_t bytes = operandBytes(matmul);
  if (M % t.tm || N % t.tn || K % sliceK(t, bytes)) return false;
  return lanes(t) <= 1024 && sharedBytes(t, bytes) <= kMaxSharedBytes;
}

GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile) {
  if (tile.mmaWgmma) {
    GemmTile t = wgmma::fitTile(matmul, tile);
    if (wgmma::eligible(matmul, t)) return t;
    // wgmma multiplies 16-bit floats only: an i8 matmul takes the subgroup
    // kernel (mma.sync runs on Hopper too) rather than the lanes' FMAs.
    int64_t M, N, K;
    if (!matrixUnitOperands(matmul, &M, &N, &K, /*f32=*/false, /*i8=*/true) || !elemOf(matmul.getLhs()).isInteger(8))
      return tile;
    GemmTile sync = tile;
    sync.mmaWgmma = false;
    sync.warpSpecialize = false;
    sync.stages = 0;
    sync.mmaSync = true;
    GemmTile fitted = fitTile(matmul, sync);
    return eligible(matmul, fitted) ? fitted : tile;
  }
  if ((!tile.mmaSync && !tile.mmaMfma && !tile.mmaWmma) || eligible(matmul, tile)) return tile;
  SmallVector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t tm : {tile.tm, int64_t{128}, int64_t{64}})
    for (int64_t tn : {tile.tn, int64_t{128}, int64_t{64}, int64_t{32}}) sizes.push_back({tm, tn});
  return firstEligibleTile(matmul, tile, sizes, eligible);
}

GemmTile firstEligibleTile(graph::MatmulOp matmul, const GemmTile &tile, ArrayRef<std::pair<int64_t, int64_t>> sizes,
                           function_ref<bool(graph::MatmulOp, const GemmTile &)> isEligible) {
  for (auto [tm, tn] : sizes) {
    if (tm > tile.tm || tn > tile.tn) continue;
    GemmTile t = tile;
    t.tm = tm;
    t.tn = tn;
    if (isEligible(matmul, t)) return t;
  }
  return tile;
}

void buildKernel(func::FuncOp k, graph::MatmulOp matmul, const GemmTile &t, Value A, Value B,
                 const StoreElement &store) {
  if (t.mmaWgmma) return wgmma::buildKernel(k, matmul, t, A, B, store);
  auto at = matmul.getLhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  const int64_t r = at.getRank(), M = at.getDimSize(r - 2), K = at.getDimSize(r - 1), N = ct.getShape().back();
  const Unit unit = unitOf(t);
  // Elements per 16-byte copy (and per row's padding): 8 of 16 bits, 4 f32.
  const int64_t bytes = operandBytes(matmul), per = 16 / bytes;
  const int64_t TM = t.tm, TN = t.tn, BK = sliceK(t, bytes), nLanes = lanes(t), warpsN = TN / unit.n;
  const int64_t LDA = BK + per, LDB = TN + per, aStage = TM * LDA, bStage = BK * LDB;
  Type operand = elemOf(matmul.getLhs());
  Location l = matmul.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const IndexOps ix{l};

  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gn = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gm = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
  Value gb = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{2});
  Value warp = ix.divC(b, lane, unit.width), q = ix.remC(b, lane, unit.width);
  Value wm = ix.divC(b, warp, warpsN), wn = ix.remC(b, warp, warpsN);
  Value m0 = ix.mulC(b, gm, TM), n0 = ix.mulC(b, gn, TN);
  Value aBase = ix.add(b, ix.mulC(b, gb, M * K), ix.mulC(b, m0, K)), bBase = ix.add(b, ix.mulC(b, gb, K * N), n0);
  // The stages hold the buffers' elements as they are (bf16 bits in i16,
  // kGpuElements): cp_async copies bytes.
  Type stored = A.getType().cast<MemRefType>().getElementType();
  auto shared = [&](int64_t n) {
    return MemRefType::get({n}, stored, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
  };
  Value As = b.create<t::SharedAllocOp>(l, shared(kStages * aStage), uint64_t{0});  // [stage][m][k]
  Value Bs = b.create<t::SharedAllocOp>(l, shared(kStages * bStage), uint64_t{0});  // [stage][k][n]

  // Slice `k0` of A (TM x BK) and B (BK x TN) -> stage `stage`, 16 bytes
  // (`per` elements) per cp_async; consecutive lanes copy consecutive
  // chunks of a row.
  auto load = [&](OpBuilder &ob, Value stage, Value k0) {
    auto chunks = [&](int64_t rows, int64_t rowChunks, function_ref<void(OpBuilder &, Value, Value)> copy) {
      const int64_t n = rows * rowChunks;
      for (int64_t round = 0; round * nLanes < n; ++round) {
        Value chunk = ix.add(ob, lane, ix.c(ob, round * nLanes));
        OpBuilder cb = ob;
        if ((round + 1) * nLanes > n) {
          auto ifOp = ob.create<scf::IfOp>(
              l, ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, chunk, ix.c(ob, n)), false);
          cb = ifOp.getThenBodyBuilder();
        }
        copy(cb, ix.divC(cb, chunk, rowChunks), ix.mulC(cb, ix.remC(cb, chunk, rowChunks), per));
      }
    };
    chunks(TM, BK / per, [&](OpBuilder &cb, Value row, Value col) {
      Value src = ix.add(cb, aBase, ix.add(cb, ix.mulC(cb, row, K), ix.add(cb, k0, col)));
      Value dst = ix.add(cb, ix.mulC(cb, stage, aStage), ix.add(cb, ix.mulC(cb, row, LDA), col));
      cb.create<t::CpAsyncOp>(l, A, ValueRange{src}, As, ValueRange{dst}, static_cast<uint64_t>(per));
    });
    chunks(BK, TN / per, [&](OpBuilder &cb, Value row, Value col) {
      Value src = ix.add(cb, bBase, ix.add(cb, ix.mulC(cb, ix.add(cb, k0, row), N), col));
      Value dst = ix.add(cb, ix.mulC(cb, stage, bStage), ix.add(cb, ix.mulC(cb, row, LDB), col));
      cb.create<t::CpAsyncOp>(l, B, ValueRange{src}, Bs, ValueRange{dst}, static_cast<uint64_t>(per));
    });
  };

  load(b, ix.c(b, 0), ix.c(b, 0));
  b.create<t::CpAsyncCommitOp>(l);
  const int64_t perLane = unit.m * unit.n / unit.width;
  const bool integer = operand.isInteger(8);  // i32 accumulators
  auto accType = VectorType::get({perLane}, integer ? Type(b.getI32Type()) : Type(b.getF32Type()));
  Value zero = b.create<arith::ConstantOp>(
      l, DenseElementsAttr::get(accType, integer ? Attribute(b.getI32IntegerAttr(0)) : Attribute(b.getF32FloatAttr(0.0f))));
  const int64_t slices = K / BK;
  auto loop = b.create<scf::ForOp>(l, ix.c(b, 0), ix.c(b, slices), ix.c(b, 1), ValueRange{zero});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value s = loop.getInductionVar(), stage = ix.remC(lb, s, kStages);
    lb.create<t::CpAsyncWaitOp>(l, uint64_t{0});
    lb.create<t::BarrierOp>(l);
    Value next = ix.add(lb, s, ix.c(lb, 1));
    auto ifNext = lb.create<scf::IfOp>(l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, next, ix.c(lb, slices)),
                                       false);
    {
      OpBuilder ib = ifNext.getThenBodyBuilder();
      load(ib, ix.remC(ib, next, kStages), ix.mulC(ib, next, BK));
    }
    lb.create<t::CpAsyncCommitOp>(l);
    Value acc = loop.getRegionIterArgs()[0];
    Value aOff = ix.add(lb, ix.mulC(lb, stage, aStage), ix.mulC(lb, wm, unit.m * LDA));
    Value bOff = ix.add(lb, ix.mulC(lb, stage, bStage), ix.mulC(lb, wn, unit.n));
    // wavefront_mma is 16 deep for i8, 8 for the others.
    const int64_t kStep = unit.kind == Unit::Wavefront && integer ? 16 : unit.kStep;
    for (int64_t ks = 0; ks < BK / kStep; ++ks) {
      Value ai = ix.add(lb, aOff, ix.c(lb, ks * kStep)), bi = ix.add(lb, bOff, ix.c(lb, ks * kStep * LDB));
      const auto um = static_cast<uint64_t>(unit.m), un = static_cast<uint64_t>(unit.n);
      const auto lda = static_cast<uint64_t>(LDA), ldb = static_cast<uint64_t>(LDB);
      if (unit.kind == Unit::Wavefront)
        acc = lb.create<t::WavefrontMmaOp>(l, accType, As, ai, Bs, bi, acc, um, un, lda, ldb, operand);
      else if (unit.kind == Unit::Wave32)
        acc = lb.create<t::Wave32MmaOp>(l, accType, As, ai, Bs, bi, acc, um, un, lda, ldb, operand);
      else
        acc = lb.create<t::SubgroupMmaOp>(l, accType, As, ai, Bs, bi, acc, um, un, lda, ldb, operand);
    }
    lb.create<scf::YieldOp>(l, acc);
  }
  // Lane q's element v of its unit's block (the op's layout).
  Value rowBase = ix.add(b, m0, ix.add(b, ix.mulC(b, wm, unit.m), unit.rowOf(b, ix, q)));
  Value colBase = ix.add(b, n0, ix.add(b, ix.mulC(b, wn, unit.n), unit.colOf(b, ix, q)));
  for (int64_t v = 0; v < perLane; ++v) {
    Value row = ix.add(b, rowBase, ix.c(b, unit.rowAt(v)));
    Value col = ix.add(b, colBase, ix.c(b, unit.colAt(v)));
    Value x = b.create<vector::ExtractOp>(l, loop.getResult(0), ArrayRef<int64_t>{v});
    store(b, row, col, x);
  }
}

}  // namespace tessera::conversion::mma
