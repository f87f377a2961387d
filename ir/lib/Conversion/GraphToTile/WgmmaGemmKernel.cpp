//===- WgmmaGemmKernel.cpp - GEMM on warpgroup matrix units ---------------===//
#include "WgmmaGemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::conversion::wgmma {
namespace {

constexpr int64_t kStages = 2;
// cuda's static shared memory per group without an opt-in.
constexpr int64_t kMaxSharedBytes = 48 * 1024;
// Elements between B's 64-column blocks: 64 rows (k) of 64.
constexpr int64_t kBlockStride = kSliceK * 64;

int64_t sharedBytes(const GemmTile &t) { return kStages * (t.tm + t.tn) * kSliceK * 2; }

Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }

}  // namespace

int64_t lanes(const GemmTile &t) { return t.tm / 64 * 128; }

bool eligible(graph::MatmulOp matmul, const GemmTile &t) {
  if (!t.mmaWgmma) return false;
  Type a = elemOf(matmul.getLhs()), b = elemOf(matmul.getRhs());
  if (a != b || !(a.isBF16() || a.isF16())) return false;
  if (!elements::computeType(elemOf(matmul.getResult())).isF32()) return false;
  auto at = matmul.getLhs().getType().cast<ShapedType>(), bt = matmul.getRhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  if (!at.hasStaticShape() || !bt.hasStaticShape() || at.getRank() != bt.getRank()) return false;
  const int64_t r = at.getRank(), M = at.getDimSize(r - 2), K = at.getDimSize(r - 1), N = ct.getShape().back();
  if (bt.getDimSize(r - 2) != K || bt.getDimSize(r - 1) != N) return false;
  if ((t.tm != 64 && t.tm != 128) || t.tn % 64 || t.tn > 256) return false;
  if (M % t.tm || N % t.tn || K % kSliceK) return false;
  return sharedBytes(t) <= kMaxSharedBytes;
}

GemmTile fitTile(graph::MatmulOp matmul, const GemmTile &tile) {
  if (!tile.mmaWgmma || eligible(matmul, tile)) return tile;
  for (auto [tm, tn] : {std::pair<int64_t, int64_t>{64, 128}, {128, 64}, {64, 64}}) {
    if (tm > tile.tm || tn > tile.tn) continue;
    GemmTile t = tile;
    t.tm = tm;
    t.tn = tn;
    if (eligible(matmul, t)) return t;
  }
  return tile;
}

void buildKernel(func::FuncOp k, graph::MatmulOp matmul, const GemmTile &t, Value A, Value B,
                 const mma::StoreElement &store) {
  auto at = matmul.getLhs().getType().cast<ShapedType>();
  auto ct = matmul.getType().cast<ShapedType>();
  const int64_t r = at.getRank(), M = at.getDimSize(r - 2), K = at.getDimSize(r - 1), N = ct.getShape().back();
  const int64_t TM = t.tm, TN = t.tn, BK = kSliceK, nLanes = lanes(t);
  const int64_t aStage = TM * BK, bStage = BK * TN;
  Type operand = elemOf(matmul.getLhs());
  Location l = matmul.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  auto c = [&](OpBuilder &ob, int64_t v) -> Value { return ob.create<arith::ConstantIndexOp>(l, v); };
  auto add = [&](OpBuilder &ob, Value x, Value y) -> Value { return ob.create<arith::AddIOp>(l, x, y); };
  auto mulC = [&](OpBuilder &ob, Value x, int64_t v) -> Value { return ob.create<arith::MulIOp>(l, x, c(ob, v)); };
  auto divC = [&](OpBuilder &ob, Value x, int64_t v) -> Value { return ob.create<arith::DivUIOp>(l, x, c(ob, v)); };
  auto remC = [&](OpBuilder &ob, Value x, int64_t v) -> Value { return ob.create<arith::RemUIOp>(l, x, c(ob, v)); };
  // warpgroup_mma's 128-byte swizzle on element indices: e ^ ((e >> 3) & 0x38).
  auto swizzle = [&](OpBuilder &ob, Value e) -> Value {
    Value bits = ob.create<arith::AndIOp>(l, ob.create<arith::ShRUIOp>(l, e, c(ob, 3)), c(ob, 0x38));
    return ob.create<arith::XOrIOp>(l, e, bits);
  };

  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gn = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  Value gm = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
  Value gb = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{2});
  Value wg = divC(b, lane, 128), p = remC(b, lane, 128);
  Value m0 = mulC(b, gm, TM), n0 = mulC(b, gn, TN);
  Value aBase = add(b, mulC(b, gb, M * K), mulC(b, m0, K)), bBase = add(b, mulC(b, gb, K * N), n0);
  // The stages hold the buffers' 16-bit elements as they are (bf16 bits
  // in i16): cp_async copies bytes.  1024-byte aligned: the swizzle is on
  // the address bits.
  Type stored = A.getType().cast<MemRefType>().getElementType();
  auto shared = [&](int64_t n) {
    return MemRefType::get({n}, stored, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
  };
  Value As = b.create<t::SharedAllocOp>(l, shared(kStages * aStage), uint64_t{0}, uint64_t{1024});  // [stage][m][k]
  Value Bs = b.create<t::SharedAllocOp>(l, shared(kStages * bStage), uint64_t{0}, uint64_t{1024});  // [stage][n/64][k][64]

  // Slice `k0` of A (TM x 64) and B (64 x TN) -> stage `stage`, 16 bytes
  // per cp_async, each to its swizzled place; consecutive lanes copy
  // consecutive chunks of a row.
  auto load = [&](OpBuilder &ob, Value stage, Value k0) {
    auto chunks = [&](int64_t rows, int64_t rowChunks, function_ref<void(OpBuilder &, Value, Value)> copy) {
      const int64_t n = rows * rowChunks;
      for (int64_t round = 0; round * nLanes < n; ++round) {
        Value chunk = add(ob, lane, c(ob, round * nLanes));
        OpBuilder cb = ob;
        if ((round + 1) * nLanes > n) {
          auto ifOp = ob.create<scf::IfOp>(
              l, ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, chunk, c(ob, n)), false);
          cb = ifOp.getThenBodyBuilder();
        }
        copy(cb, divC(cb, chunk, rowChunks), remC(cb, chunk, rowChunks));
      }
    };
    chunks(TM, BK / 8, [&](OpBuilder &cb, Value row, Value ch) {
      Value src = add(cb, aBase, add(cb, mulC(cb, row, K), add(cb, k0, mulC(cb, ch, 8))));
      Value dst = add(cb, mulC(cb, stage, aStage), add(cb, mulC(cb, row, 64), mulC(cb, ch, 8)));
      cb.create<t::CpAsyncOp>(l, A, ValueRange{src}, As, ValueRange{swizzle(cb, dst)}, uint64_t{8});
    });
    chunks(BK, TN / 8, [&](OpBuilder &cb, Value row, Value ch) {
      Value src = add(cb, bBase, add(cb, mulC(cb, add(cb, k0, row), N), mulC(cb, ch, 8)));
      Value block = divC(cb, ch, 8), within = mulC(cb, remC(cb, ch, 8), 8);
      Value dst = add(cb, mulC(cb, stage, bStage),
                      add(cb, mulC(cb, block, kBlockStride), add(cb, mulC(cb, row, 64), within)));
      cb.create<t::CpAsyncOp>(l, B, ValueRange{src}, Bs, ValueRange{swizzle(cb, dst)}, uint64_t{8});
    });
  };

  load(b, c(b, 0), c(b, 0));
  b.create<t::CpAsyncCommitOp>(l);
  const int64_t perLane = TN / 2;
  auto accType = VectorType::get({perLane}, b.getF32Type());
  Value zero = b.create<arith::ConstantOp>(l, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  const int64_t slices = K / BK;
  auto loop = b.create<scf::ForOp>(l, c(b, 0), c(b, slices), c(b, 1), ValueRange{zero});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value s = loop.getInductionVar(), stage = remC(lb, s, kStages);
    lb.create<t::CpAsyncWaitOp>(l, uint64_t{0});
    // Every lane's copies of slice s are in, and every warpgroup is done
    // with slice s-1, whose stage the next load reuses (warpgroup_mma
    // returns once its products are in the registers).
    lb.create<t::BarrierOp>(l);
    Value next = add(lb, s, c(lb, 1));
    auto ifNext = lb.create<scf::IfOp>(l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, next, c(lb, slices)),
                                       false);
    {
      OpBuilder ib = ifNext.getThenBodyBuilder();
      load(ib, remC(ib, next, kStages), mulC(ib, next, BK));
    }
    lb.create<t::CpAsyncCommitOp>(l);
    Value aOff = add(lb, mulC(lb, stage, aStage), mulC(lb, wg, 64 * 64));
    Value bOff = mulC(lb, stage, bStage);
    Value acc = lb.create<t::WarpgroupMmaOp>(l, accType, As, aOff, Bs, bOff, loop.getRegionIterArgs()[0],
                                             static_cast<uint64_t>(TN), static_cast<uint64_t>(BK),
                                             static_cast<uint64_t>(kBlockStride), operand);
    lb.create<scf::YieldOp>(l, acc);
  }
  // Lane p of its warpgroup (warp w = p/32, q = p%32), element v: row
  // 16*w + q/4 + 8*((v%4)/2), column 8*(v/4) + 2*(q%4) + v%2.
  Value w = divC(b, p, 32), q = remC(b, p, 32);
  Value rowBase = add(b, m0, add(b, mulC(b, wg, 64), add(b, mulC(b, w, 16), divC(b, q, 4))));
  Value colBase = add(b, n0, mulC(b, remC(b, q, 4), 2));
  for (int64_t v = 0; v < perLane; ++v) {
    Value row = add(b, rowBase, c(b, 8 * ((v % 4) / 2)));
    Value col = add(b, colBase, c(b, 8 * (v / 4) + v % 2));
    Value x = b.create<vector::ExtractOp>(l, loop.getResult(0), ArrayRef<int64_t>{v});
    store(b, row, col, x);
  }
}

}  // namespace tessera::conversion::wgmma
