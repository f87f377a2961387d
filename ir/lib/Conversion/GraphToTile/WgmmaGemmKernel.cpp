//===- WgmmaGemmKernel.cpp - GEMM on warpgroup matrix units ---------------===//
#include "WgmmaGemmKernel.h"

#include <algorithm>

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

int64_t lanes(const GemmTile &t) { return (t.tm / 64 + (t.warpSpecialize ? 1 : 0)) * 128; }

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

namespace {

/// What both forms of the kernel share: its shape, the staged buffers,
/// the slice copies and the epilogue.
struct Gemm {
  int64_t M, N, K, TM, TN, S, batch, aStage, bStage, slices;
  Value A, B, As, Bs, gb, m0, n0;
  Type operand;
  Location l;
  mma::IndexOps ix;

  /// Slice `k0` of A (TM x 64) and B (64 x TN) -> stage `stage` by
  /// tile_load_async (a TMA copy per box on sm_90a, 16 bytes per lane
  /// elsewhere), swizzled the way warpgroup_mma reads them: A one box, B
  /// one 64 x 64 box per 64-column block; `single`: issued by this lane
  /// alone (the producer of the warp-specialized form).
  void load(OpBuilder &ob, Value stage, Value k0, bool single) const {
    Value aRow = ix.add(ob, ix.mulC(ob, gb, M), m0), bRow = ix.add(ob, ix.mulC(ob, gb, K), k0);
    ob.create<t::TileLoadAsyncOp>(l, A, aRow, k0, As, ix.mulC(ob, stage, aStage), stage, uint64_t(TM), uint64_t{64},
                                  uint64_t(K), uint64_t(batch * M), uint64_t(S), single);
    for (int64_t j = 0; j < TN / 64; ++j)
      ob.create<t::TileLoadAsyncOp>(l, B, bRow, ix.add(ob, n0, ix.c(ob, 64 * j)), Bs,
                                    ix.add(ob, ix.mulC(ob, stage, bStage), ix.c(ob, j * kBlockStride)), stage,
                                    uint64_t{64}, uint64_t{64}, uint64_t(N), uint64_t(batch * K), uint64_t(S), single);
    ob.create<t::TileLoadCommitOp>(l, stage, uint64_t(S), single);
  }

  /// Warpgroup `wg`'s product of the slice in `stage` added to `acc`,
  /// returning with up to `pending` multiplies in flight.
  Value multiply(OpBuilder &lb, Value stage, Value wg, Value acc, int64_t pending = 0) const {
    Value aOff = ix.add(lb, ix.mulC(lb, stage, aStage), ix.mulC(lb, wg, 64 * 64));
    Value bOff = ix.mulC(lb, stage, bStage);
    return lb.create<t::WarpgroupMmaOp>(l, acc.getType(), As, aOff, Bs, bOff, acc, static_cast<uint64_t>(TN),
                                        static_cast<uint64_t>(kSliceK), static_cast<uint64_t>(kBlockStride), operand,
                                        static_cast<uint64_t>(pending));
  }

  /// The loop over the slices from a zero accumulator: slice s waits for
  /// its stage, the (s/S)-th use of it (parity (s/S) % 2), then `body`
  /// gives the accumulator after it.  Returns the final accumulator.
  Value sliceLoop(OpBuilder &b, function_ref<Value(OpBuilder &, Value s, Value stage, Value acc)> body) const {
    auto accType = VectorType::get({TN / 2}, b.getF32Type());
    Value zero = b.create<arith::ConstantOp>(l, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    auto loop = b.create<scf::ForOp>(l, ix.c(b, 0), ix.c(b, slices), ix.c(b, 1), ValueRange{zero});
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value s = loop.getInductionVar(), stage = ix.remC(lb, s, S);
    lb.create<t::TileLoadWaitOp>(l, stage, ix.remC(lb, ix.divC(lb, s, S), 2), uint64_t(S));
    lb.create<scf::YieldOp>(l, body(lb, s, stage, loop.getRegionIterArgs()[0]));
    return loop.getResult(0);
  }

  /// Lane p of warpgroup wg (warp w = p/32, q = p%32), element v: row
  /// 16*w + q/4 + 8*((v%4)/2), column 8*(v/4) + 2*(q%4) + v%2.
  void epilogue(OpBuilder &b, Value acc, Value wg, Value p, const mma::StoreElement &store) const {
    Value w = ix.divC(b, p, 32), q = ix.remC(b, p, 32);
    Value rowBase = ix.add(b, m0, ix.add(b, ix.mulC(b, wg, 64), ix.add(b, ix.mulC(b, w, 16), ix.divC(b, q, 4))));
    Value colBase = ix.add(b, n0, ix.mulC(b, ix.remC(b, q, 4), 2));
    for (int64_t v = 0; v < TN / 2; ++v) {
      Value row = ix.add(b, rowBase, ix.c(b, 8 * ((v % 4) / 2)));
      Value col = ix.add(b, colBase, ix.c(b, 8 * (v / 4) + v % 2));
      Value x = b.create<vector::ExtractOp>(l, acc, ArrayRef<int64_t>{v});
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
};

Value lessThan(OpBuilder &b, Location l, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, x, y);
}

/// The pipelined form: every warpgroup waits for its slice, then (after a
/// barrier: all are done with the stage it reuses) the group issues the
/// copy S-1 slices ahead and each warpgroup multiplies.
void buildPipelined(OpBuilder &b, const Gemm &g, Value lane, const mma::StoreElement &store) {
  const mma::IndexOps &ix = g.ix;
  Location l = g.l;
  const int64_t S = g.S, slices = g.slices;
  Value wg = ix.divC(b, lane, 128), p = ix.remC(b, lane, 128);
  // The first S-1 slices in flight before the loop.
  for (int64_t i = 0; i < std::min(S - 1, slices); ++i) g.load(b, ix.c(b, i), ix.c(b, i * kSliceK), false);
  Value acc = g.sliceLoop(b, [&](OpBuilder &lb, Value s, Value stage, Value acc) {
    // Every warpgroup is done with slice s-1, whose stage the load of
    // slice s+S-1 reuses (warpgroup_mma returns once its products are in
    // the registers); with per-lane copies this also makes slice s visible.
    lb.create<t::BarrierOp>(l);
    Value next = ix.add(lb, s, ix.c(lb, S - 1));
    auto ifNext = lb.create<scf::IfOp>(l, lessThan(lb, l, next, ix.c(lb, slices)), false);
    {
      OpBuilder ib = ifNext.getThenBodyBuilder();
      g.load(ib, ix.remC(ib, next, S), ix.mulC(ib, next, kSliceK), false);
    }
    return g.multiply(lb, stage, wg, acc);
  });
  g.epilogue(b, acc, wg, p, store);
}

/// The warp-specialized form: warpgroup 0 produces, the TM/64 others
/// consume.  The producer's lane 0 refills each stage once the consumers
/// have released it; consumers wait for a slice, multiply it and release
/// its stage.  With two consumers (384 lanes: 168 registers each at
/// launch on Hopper's 64K), the producer gives registers back (40) and the
/// consumers take them (232): 128 x 40 + 256 x 232 = 64,512.
void buildSpecialized(OpBuilder &b, const Gemm &g, Value lane, const mma::StoreElement &store) {
  const mma::IndexOps &ix = g.ix;
  Location l = g.l;
  const int64_t S = g.S, slices = g.slices, consumers = g.TM / 64;
  const bool budgets = consumers == 2;
  Value wg = ix.divC(b, lane, 128), p = ix.remC(b, lane, 128);
  auto roles = b.create<scf::IfOp>(l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, wg, ix.c(b, 0)),
                                   /*withElse=*/true);
  {
    OpBuilder pb = roles.getThenBodyBuilder();
    if (budgets) pb.create<t::SetMaxRegistersOp>(l, uint64_t{40});
    auto first = pb.create<scf::IfOp>(l, pb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, p, ix.c(pb, 0)), false);
    OpBuilder fb = first.getThenBodyBuilder();
    auto loop = fb.create<scf::ForOp>(l, ix.c(fb, 0), ix.c(fb, slices), ix.c(fb, 1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value s = loop.getInductionVar(), stage = ix.remC(lb, s, S);
    // Slice s >= S refills its stage for the (s/S)-th time: acquire number
    // s/S - 1 of the stage.
    auto refill = lb.create<scf::IfOp>(l, lessThan(lb, l, ix.c(lb, S - 1), s), false);
    {
      OpBuilder rb = refill.getThenBodyBuilder();
      Value phase = ix.remC(rb, rb.create<arith::SubIOp>(l, ix.divC(rb, s, S), ix.c(rb, 1)), 2);
      rb.create<t::TileLoadAcquireOp>(l, stage, phase, uint64_t(S), uint64_t(consumers * 128));
    }
    g.load(lb, stage, ix.mulC(lb, s, kSliceK), true);
  }
  {
    OpBuilder cb = roles.getElseBodyBuilder();
    if (budgets) cb.create<t::SetMaxRegistersOp>(l, uint64_t{232});
    Value c = cb.create<arith::SubIOp>(l, wg, ix.c(cb, 1));
    // Slice s's multiply stays in flight while the loop goes on to wait
    // for slice s+1; once that one is issued, s's is complete (pending 1)
    // and its stage goes back to the producer.
    Value acc = g.sliceLoop(cb, [&](OpBuilder &lb, Value s, Value stage, Value acc) {
      Value next = g.multiply(lb, stage, c, acc, /*pending=*/1);
      auto previous = lb.create<scf::IfOp>(l, lessThan(lb, l, ix.c(lb, 0), s), false);
      OpBuilder pb = previous.getThenBodyBuilder();
      Value prior = ix.remC(pb, pb.create<arith::AddIOp>(l, s, ix.c(pb, S - 1)), S);
      pb.create<t::TileLoadReleaseOp>(l, prior, uint64_t(S));
      return next;
    });
    Value done = cb.create<t::WarpgroupMmaWaitOp>(l, acc.getType(), acc, uint64_t{0});
    g.epilogue(cb, done, c, p, store);
  }
}

}  // namespace

void buildKernel(func::FuncOp k, graph::MatmulOp matmul, const GemmTile &t, Value A, Value B,
                 const mma::StoreElement &store) {
  auto at = matmul.getLhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  const int64_t r = at.getRank(), M = at.getDimSize(r - 2), K = at.getDimSize(r - 1), N = ct.getShape().back();
  Location l = matmul.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const mma::IndexOps ix{l};
  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gn = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gm = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
  Value gb = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{2});
  const int64_t S = stages(t), aStage = t.tm * kSliceK, bStage = kSliceK * t.tn;
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
  const Gemm g{M, N, K, t.tm, t.tn, S, ct.getNumElements() / (M * N), aStage, bStage, (K + kSliceK - 1) / kSliceK,
               A, B, As, Bs, gb, ix.mulC(b, gm, t.tm), ix.mulC(b, gn, t.tn), elemOf(matmul.getLhs()), l, ix};
  if (t.warpSpecialize) buildSpecialized(b, g, lane, store);
  else buildPipelined(b, g, lane, store);
}

}  // namespace tessera::conversion::wgmma
