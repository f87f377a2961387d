//===- WgmmaGemmKernel.cpp - GEMM on warpgroup matrix units ---------------===//
#include "WgmmaGemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::conversion::wgmma {
namespace {

// Elements between B's 64-column blocks: 64 rows (k) of 64.
constexpr int64_t kBlockStride = kSliceK * 64;

int64_t stageBytes(const GemmTile &t) { return (t.tm + t.tn) * kSliceK * 2; }

Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }

}  // namespace

int64_t lanes(const GemmTile &t) { return t.tm / 64 * 128; }

int64_t stages(const GemmTile &t) {
  if (t.stages) return t.stages;
  int64_t s = kDefaultStages;
  while (s > 2 && s * stageBytes(t) > kMaxSharedBytes) --s;
  return s;
}

bool eligible(graph::MatmulOp matmul, const GemmTile &t) {
  if (!t.mmaWgmma) return false;
  int64_t M, N, K;
  if (!mma::matrixUnitOperands(matmul, &M, &N, &K)) return false;
  auto ct = matmul.getType().cast<ShapedType>();
  if ((t.tm != 64 && t.tm != 128) || t.tn % 64 || t.tn > 256) return false;
  // Edges: tile loads read zeros outside their view and the epilogue
  // stores only inside C, so TM, TN and 64 need not divide M, N, K. The
  // views need 16-byte rows (8 | K, 8 | N) and room for a box; a ragged K
  // only in one batch (a view of several stacks the batches: rows past K
  // would come from the next one).
  const int64_t batch = ct.getNumElements() / (M * N);
  if (K % 8 || N % 8 || batch * M < t.tm || K < kSliceK || N < 64 || batch * K < kSliceK) return false;
  if (K % kSliceK && batch != 1) return false;
  return stages(t) * stageBytes(t) <= kMaxSharedBytes;
}

GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile) {
  if (!tile.mmaWgmma || eligible(matmul, tile)) return tile;
  return mma::firstEligibleTile(matmul, tile, {{128, 128}, {64, 128}, {128, 64}, {64, 64}}, eligible);
}

void buildKernel(func::FuncOp k, graph::MatmulOp matmul, const GemmTile &t, Value A, Value B,
                 const mma::StoreElement &store) {
  auto at = matmul.getLhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  const int64_t r = at.getRank(), M = at.getDimSize(r - 2), K = at.getDimSize(r - 1), N = ct.getShape().back();
  const int64_t TM = t.tm, TN = t.tn, BK = kSliceK;
  const int64_t aStage = TM * BK, bStage = BK * TN, S = stages(t);
  Type operand = elemOf(matmul.getLhs());
  Location l = matmul.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const mma::IndexOps ix{l};
  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gn = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gm = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
  Value gb = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{2});
  Value wg = ix.divC(b, lane, 128), p = ix.remC(b, lane, 128);
  Value m0 = ix.mulC(b, gm, TM), n0 = ix.mulC(b, gn, TN);
  // The stages hold the buffers' 16-bit elements as they are (bf16 bits
  // in i16): cp_async copies bytes.  1024-byte aligned: the swizzle is on
  // the address bits.
  Type stored = A.getType().cast<MemRefType>().getElementType();
  auto shared = [&](int64_t n) {
    return MemRefType::get({n}, stored, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
  };
  // The stages may exceed Tile IR's default budget of 64 KiB; 1 KiB more
  // for what a target adds (cuda's mbarriers) and alignment.
  k->setAttr(t::kMaxSharedAttr, b.getI64IntegerAttr(S * (aStage + bStage) * 2 + 1024));
  Value As = b.create<t::SharedAllocOp>(l, shared(S * aStage), uint64_t{0}, uint64_t{1024});  // [stage][m][k]
  Value Bs = b.create<t::SharedAllocOp>(l, shared(S * bStage), uint64_t{0}, uint64_t{1024});  // [stage][n/64][k][64]

  // Slice `k0` of A (TM x 64) and B (64 x TN) -> stage `stage` by
  // tile_load_async (a TMA copy per box on sm_90a, 16 bytes per lane
  // elsewhere), swizzled the way warpgroup_mma reads them: A one box, B
  // one 64 x 64 box per 64-column block.
  const int64_t batch = ct.getNumElements() / (M * N);
  auto load = [&](OpBuilder &ob, Value stage, Value k0) {
    Value aRow = ix.add(ob, ix.mulC(ob, gb, M), m0), bRow = ix.add(ob, ix.mulC(ob, gb, K), k0);
    ob.create<t::TileLoadAsyncOp>(l, A, aRow, k0, As, ix.mulC(ob, stage, aStage), stage, uint64_t(TM), uint64_t{64},
                                  uint64_t(K), uint64_t(batch * M), uint64_t(S));
    for (int64_t j = 0; j < TN / 64; ++j)
      ob.create<t::TileLoadAsyncOp>(l, B, bRow, ix.add(ob, n0, ix.c(ob, 64 * j)), Bs,
                                    ix.add(ob, ix.mulC(ob, stage, bStage), ix.c(ob, j * kBlockStride)), stage, uint64_t{64},
                                    uint64_t{64}, uint64_t(N), uint64_t(batch * K), uint64_t(S));
    ob.create<t::TileLoadCommitOp>(l, stage, uint64_t(S));
  };

  const int64_t slices = (K + BK - 1) / BK;
  // The first S-1 slices in flight before the loop.
  for (int64_t i = 0; i < std::min(S - 1, slices); ++i) load(b, ix.c(b, i), ix.c(b, i * BK));
  const int64_t perLane = TN / 2;
  auto accType = VectorType::get({perLane}, b.getF32Type());
  Value zero = b.create<arith::ConstantOp>(l, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  auto loop = b.create<scf::ForOp>(l, ix.c(b, 0), ix.c(b, slices), ix.c(b, 1), ValueRange{zero});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value s = loop.getInductionVar(), stage = ix.remC(lb, s, S);
    // Slice s is the (s/S)-th use of its stage: parity (s/S) % 2.
    lb.create<t::TileLoadWaitOp>(l, stage, ix.remC(lb, ix.divC(lb, s, S), 2), uint64_t(S));
    // Every warpgroup is done with slice s-1, whose stage the load of
    // slice s+S-1 reuses (warpgroup_mma returns once its products are in
    // the registers); with per-lane copies this also makes slice s visible.
    lb.create<t::BarrierOp>(l);
    Value next = ix.add(lb, s, ix.c(lb, S - 1));
    auto ifNext = lb.create<scf::IfOp>(l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, next, ix.c(lb, slices)),
                                       false);
    {
      OpBuilder ib = ifNext.getThenBodyBuilder();
      load(ib, ix.remC(ib, next, S), ix.mulC(ib, next, BK));
    }
    Value aOff = ix.add(lb, ix.mulC(lb, stage, aStage), ix.mulC(lb, wg, 64 * 64));
    Value bOff = ix.mulC(lb, stage, bStage);
    Value acc = lb.create<t::WarpgroupMmaOp>(l, accType, As, aOff, Bs, bOff, loop.getRegionIterArgs()[0],
                                             static_cast<uint64_t>(TN), static_cast<uint64_t>(BK),
                                             static_cast<uint64_t>(kBlockStride), operand);
    lb.create<scf::YieldOp>(l, acc);
  }
  // Lane p of its warpgroup (warp w = p/32, q = p%32), element v: row
  // 16*w + q/4 + 8*((v%4)/2), column 8*(v/4) + 2*(q%4) + v%2.
  Value w = ix.divC(b, p, 32), q = ix.remC(b, p, 32);
  Value rowBase = ix.add(b, m0, ix.add(b, ix.mulC(b, wg, 64), ix.add(b, ix.mulC(b, w, 16), ix.divC(b, q, 4))));
  Value colBase = ix.add(b, n0, ix.mulC(b, ix.remC(b, q, 4), 2));
  for (int64_t v = 0; v < perLane; ++v) {
    Value row = ix.add(b, rowBase, ix.c(b, 8 * ((v % 4) / 2)));
    Value col = ix.add(b, colBase, ix.c(b, 8 * (v / 4) + v % 2));
    Value x = b.create<vector::ExtractOp>(l, loop.getResult(0), ArrayRef<int64_t>{v});
    if (M % TM == 0 && N % TN == 0) {
      store(b, row, col, x);
      continue;
    }
    Value inside = b.create<arith::AndIOp>(l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, row, ix.c(b, M)),
                                           b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, col, ix.c(b, N)));
    auto guard = b.create<scf::IfOp>(l, inside, false);
    OpBuilder gb2 = guard.getThenBodyBuilder();
    store(gb2, row, col, x);
  }
}

}  // namespace tessera::conversion::wgmma
