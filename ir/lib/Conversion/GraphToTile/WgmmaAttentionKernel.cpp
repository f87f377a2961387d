//===- WgmmaAttentionKernel.cpp - attention on warpgroup matrix units -----===//
//
// See WgmmaAttentionKernel.h for the phases and why.
//===----------------------------------------------------------------------===//
#include "WgmmaAttentionKernel.h"

#include "GpuElements.h"
#include "KernelBuild.h"

#include <cmath>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace s = tessera::schedule;
namespace t = tessera::tile;

namespace tessera::conversion::wgmma_attention {
namespace {

using build::B;

// One swizzled block of a warpgroup_mma operand: 64 rows of 64 elements
// (128 bytes each).
constexpr int64_t kBlock = 64 * 64;
// Completion channels of tile_load_async: 0 and 1 for the key blocks, 2
// for the query block.
constexpr int64_t kStages = 3, kQueryStage = 2;

struct Dims : build::AttentionDims {
  explicit Dims(s::FlashAttentionOp op) : AttentionDims(op.getQuery(), op.getValue(), op.getBlockQ(), op.getBlockKv()) {}
  int64_t qBlocks() const { return (sq + bq - 1) / bq; }
  int64_t kvBlocks() const { return (skv + bkv - 1) / bkv; }
  // Elements of one stage's K^T part and V part.
  int64_t kStage() const { return d * bkv; }
  int64_t vStage() const { return bkv * dv; }
};

/// What the key-block copies and the products share.
struct Kernel {
  const Dims &sh;
  Location l;
  Value kt, v;     // K^T and V (kernel arguments)
  Value KVs;       // the two stages of K^T and V blocks
  Value batch, wg; // the group's batch element; the lane's warpgroup
  Type operand;    // bf16 or f16 (warpgroup_mma's operand_type)

  /// Key block `j` (K^T columns and V rows j*bkv ..) -> stage `stage`,
  /// 64 x 64 boxes swizzled as warpgroup_mma reads B.
  void loadKeys(OpBuilder &ob, Value j, Value stage) const {
    B x{ob, l};
    Value j0 = x.mul(j, sh.bkv), base = x.mul(stage, sh.kStage() + sh.vStage());
    Value ktRow = x.mul(batch, sh.d), vRow = x.add(x.mul(batch, sh.skv), j0);
    for (int64_t ks = 0; ks < sh.d / 64; ++ks)
      for (int64_t nb = 0; nb < sh.bkv / 64; ++nb)
        ob.create<t::TileLoadAsyncOp>(l, kt, x.add(ktRow, x.c(64 * ks)), x.add(j0, x.c(64 * nb)), KVs,
                                      x.add(base, x.c((ks * (sh.bkv / 64) + nb) * kBlock)), stage, uint64_t{64},
                                      uint64_t{64}, uint64_t(sh.skv), uint64_t(sh.batch * sh.d), uint64_t(kStages),
                                      false);
    for (int64_t ks = 0; ks < sh.bkv / 64; ++ks)
      for (int64_t nb = 0; nb < sh.dv / 64; ++nb)
        ob.create<t::TileLoadAsyncOp>(l, v, x.add(vRow, x.c(64 * ks)), x.c(64 * nb), KVs,
                                      x.add(base, x.c(sh.kStage() + (ks * (sh.dv / 64) + nb) * kBlock)), stage,
                                      uint64_t{64}, uint64_t{64}, uint64_t(sh.dv), uint64_t(sh.batch * sh.skv),
                                      uint64_t(kStages), false);
    ob.create<t::TileLoadCommitOp>(l, stage, uint64_t(kStages), false);
  }

  /// acc + A B over `slices` 64-deep slices: A's slice ks at aBuf[ks *
  /// bq * 64 + wg * 4096] (the warpgroup's 64 rows), B's at bIndex + ks *
  /// bSlice, `n` columns in 64-column blocks of 4096.
  Value product(OpBuilder &ob, Value aBuf, Value bIndex, int64_t slices, int64_t bSlice, int64_t n, Value acc) const {
    B x{ob, l};
    for (int64_t ks = 0; ks < slices; ++ks) {
      Value aIndex = x.add(x.mul(wg, kBlock), x.c(ks * sh.bq * 64));
      acc = ob.create<t::WarpgroupMmaOp>(l, acc.getType(), aBuf, aIndex, KVs, x.add(bIndex, x.c(ks * bSlice)), acc,
                                         static_cast<uint64_t>(n), uint64_t{64}, static_cast<uint64_t>(kBlock),
                                         operand, uint64_t{0});
    }
    return acc;
  }
};

/// The maximum / sum of a lane's values of one row over the quad of lanes
/// holding that row (lanes differing in their two low bits).
Value quadReduce(OpBuilder &b, Location l, Value x, bool max) {
  B y{b, l};
  for (int64_t offset : {1, 2}) {
    Value other = b.create<t::ShuffleOp>(l, t::ShuffleMode::Xor, x, y.c(offset));
    x = max ? y.fmax(x, other) : y.fadd(x, other);
  }
  return x;
}

}  // namespace

int64_t lanes(s::FlashAttentionOp op) { return op.getBlockQ() / 64 * 128; }

std::array<int64_t, 3> grid(s::FlashAttentionOp op) {
  const Dims sh(op);
  return {sh.qBlocks(), sh.batch, 1};
}

void buildKernel(func::FuncOp k, s::FlashAttentionOp op, Value q, Value kt, Value v, const StoreResult &store) {
  const Dims sh(op);
  const Location l = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  B x{b, l};
  const double negInf = -std::numeric_limits<double>::infinity();
  Type graphElem = op.getQuery().getType().cast<ShapedType>().getElementType();
  Type stored = q.getType().cast<MemRefType>().getElementType();
  auto shared = [&](int64_t n) {
    return MemRefType::get({n}, stored, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
  };
  // 1 KiB more for what a target adds (cuda's mbarriers) and alignment.
  k->setAttr(t::kMaxSharedAttr,
             b.getI64IntegerAttr(s::wgmmaAttentionSharedBytes(sh.d, sh.dv, sh.bq, sh.bkv) + 1024));
  Value Qs = b.create<t::SharedAllocOp>(l, shared(sh.d * sh.bq), uint64_t{0}, uint64_t{1024});
  Value KVs = b.create<t::SharedAllocOp>(l, shared(2 * (sh.kStage() + sh.vStage())), uint64_t{0}, uint64_t{1024});
  Value Ps = b.create<t::SharedAllocOp>(l, shared(sh.bkv * sh.bq), uint64_t{0}, uint64_t{1024});
  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value qBlock = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  // Causal: the last query blocks have the most key blocks, so the first
  // groups take them (GPUs start groups in order): the short ones fill the
  // tail of the launch instead of a long one running alone at its end.
  if (op.getCausal())
    qBlock = b.create<arith::SubIOp>(l, x.c(sh.qBlocks() - 1), qBlock);
  Value batch = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
  Value q0 = x.mul(qBlock, sh.bq), wg = x.div(lane, 128), p = x.rem(lane, 128);
  const Kernel kn{sh, l, kt, v, KVs, batch, wg, graphElem.isF16() ? graphElem : b.getBF16Type()};
  // The lane's rows of its warpgroup's 64 (warpgroup_mma's layout): row
  // 16 w + qq/4 (+ 8 for the second half of each group of four elements),
  // columns 2 (qq % 4) + 8 (e / 4) + e % 2.
  Value w = x.div(p, 32), qq = x.rem(p, 32);
  Value rowInBlock = x.add(x.mul(wg, 64), x.add(x.mul(w, 16), x.div(qq, 4)));  // of the group's bq rows
  Value colBase = x.mul(x.rem(qq, 4), 2);
  auto rowOf = [&](B &y, int64_t half) { return y.add(rowInBlock, y.c(8 * half)); };
  auto colOf = [&](B &y, int64_t e) { return y.add(colBase, y.c(8 * (e / 4) + e % 2)); };

  // The query block, then key block 0, in flight together.
  Value qRow = x.add(x.mul(batch, sh.sq), q0);
  for (int64_t ks = 0; ks < sh.d / 64; ++ks)
    b.create<t::TileLoadAsyncOp>(l, q, qRow, x.c(64 * ks), Qs, x.c(ks * sh.bq * 64), x.c(kQueryStage),
                                 uint64_t(sh.bq), uint64_t{64}, uint64_t(sh.d), uint64_t(sh.batch * sh.sq),
                                 uint64_t(kStages), false);
  b.create<t::TileLoadCommitOp>(l, x.c(kQueryStage), uint64_t(kStages), false);
  kn.loadKeys(b, x.c(0), x.c(0));
  b.create<t::TileLoadWaitOp>(l, x.c(kQueryStage), x.c(0), uint64_t(kStages));

  // Causal: the key blocks up to the one holding the block's last query
  // (block 0 always runs: key 0 is never masked, so m is finite after it).
  Value kvEnd = x.c(sh.kvBlocks());
  if (op.getCausal())
    kvEnd = b.create<arith::MinUIOp>(l, kvEnd, x.add(x.div(x.add(q0, x.c(sh.bq - 1)), sh.bkv), x.c(1)));
  auto oType = VectorType::get({sh.dv / 2}, b.getF32Type());
  auto sType = VectorType::get({sh.bkv / 2}, b.getF32Type());
  Value oZero = b.create<arith::ConstantOp>(l, DenseElementsAttr::get(oType, b.getF32FloatAttr(0.0f)));
  Value sZero = b.create<arith::ConstantOp>(l, DenseElementsAttr::get(sType, b.getF32FloatAttr(0.0f)));
  // Carried: O, then m and l of the lane's two rows.
  auto loop = b.create<scf::ForOp>(l, x.c(0), kvEnd, x.c(1),
                                   ValueRange{oZero, x.f(negInf), x.f(negInf), x.f(0.0), x.f(0.0)});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    B y{lb, l};
    Value j = loop.getInductionVar(), stage = y.rem(j, 2);
    ValueRange carried = loop.getRegionIterArgs();
    lb.create<t::TileLoadWaitOp>(l, stage, y.rem(y.div(j, 2), 2), uint64_t(kStages));
    // Every warpgroup is done with key block j-1, whose stage the next
    // load reuses.
    lb.create<t::BarrierOp>(l);
    Value next = y.add(j, y.c(1));
    auto ifNext = lb.create<scf::IfOp>(l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, next, kvEnd), false);
    {
      OpBuilder ib = ifNext.getThenBodyBuilder();
      kn.loadKeys(ib, next, B{ib, l}.rem(next, 2));
    }
    Value stageBase = y.mul(stage, sh.kStage() + sh.vStage());
    // S = Q K_j^T: d/64 slices; B's slice ks is its bkv/64 blocks of 64 k.
    Value S = kn.product(lb, Qs, stageBase, sh.d / 64, (sh.bkv / 64) * kBlock, sh.bkv, sZero);
    // Scale and mask, then the rows' maxima.  The scores are kept in base
    // 2 (scale * log2(e) folded into the scale), so that each
    // exponential is one exp2 (cuda: ex2.approx) instead of exp's range
    // reduction around it; m is in the same units.
    const bool maskKeys = sh.skv % sh.bkv != 0, causal = op.getCausal();
    Value j0 = y.mul(j, sh.bkv), scale = y.f(op.getScale().convertToDouble() * M_LOG2E);
    SmallVector<Value> scores;
    Value rowMax[2] = {carried[1], carried[2]};
    for (int64_t e = 0; e < sh.bkv / 2; ++e) {
      const int64_t half = (e % 4) / 2;
      Value s = y.fmul(lb.create<vector::ExtractOp>(l, S, ArrayRef<int64_t>{e}), scale);
      if (maskKeys || causal) {
        Value key = y.add(j0, colOf(y, e));
        Value live = y.lt(key, sh.skv);
        if (causal)
          live = y.band(live, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ule, key, y.add(q0, rowOf(y, half))));
        s = y.select(live, s, y.f(negInf));
      }
      scores.push_back(s);
      rowMax[half] = y.fmax(rowMax[half], s);
    }
    Value mNew[2], rescale[2], sum[2] = {y.f(0.0), y.f(0.0)};
    for (int64_t half : {0, 1}) {
      mNew[half] = quadReduce(lb, l, rowMax[half], /*max=*/true);
      rescale[half] = lb.create<math::Exp2Op>(l, y.fsub(carried[1 + half], mNew[half]));
    }
    // P = exp2(S - m_new), summed per row and written where warpgroup_mma
    // reads A: slice c/64, row r of the warpgroup's 64, 16-byte chunk
    // (c % 64)/8 swizzled with r % 8.
    // (rowInBlock counts the warpgroup's 64 rows before the lane's: 64 *
    // rowInBlock is the warpgroup's 4096 elements and the row's start.)
    Value pRow = y.mul(rowInBlock, 64);
    for (int64_t e = 0; e < sh.bkv / 2; ++e) {
      const int64_t half = (e % 4) / 2;
      Value pe = lb.create<math::Exp2Op>(l, y.fsub(scores[e], mNew[half]));
      sum[half] = y.fadd(sum[half], pe);
      const int64_t c = 8 * (e / 4) + e % 2;  // the column's constant part
      Value col = y.add(colBase, y.c(c % 64));
      Value chunk = lb.create<arith::XOrIOp>(l, y.div(col, 8), y.rem(rowOf(y, half), 8));
      Value at = y.add(y.add(pRow, y.c((c / 64) * sh.bq * 64 + 8 * 64 * half)), y.add(y.mul(chunk, 8), y.rem(col, 8)));
      y.store(gpu_elements::narrow(lb, l, pe, graphElem), Ps, at);
    }
    Value lNew[2];
    for (int64_t half : {0, 1})
      lNew[half] = y.fadd(y.fmul(carried[3 + half], rescale[half]), quadReduce(lb, l, sum[half], /*max=*/false));
    // O *= exp(m - m_new), element by element (O's rows are S's).
    Value O = carried[0];
    for (int64_t e = 0; e < sh.dv / 2; ++e) {
      Value o = lb.create<vector::ExtractOp>(l, O, ArrayRef<int64_t>{e});
      O = lb.create<vector::InsertOp>(l, y.fmul(o, rescale[(e % 4) / 2]), O, ArrayRef<int64_t>{e});
    }
    // P is in shared memory for every lane of the warpgroup (on cuda the
    // barrier also orders the lanes' stores before wgmma's reads).
    lb.create<t::BarrierOp>(l);
    O = kn.product(lb, Ps, y.add(stageBase, y.c(sh.kStage())), sh.bkv / 64, (sh.dv / 64) * kBlock, sh.dv, O);
    lb.create<scf::YieldOp>(l, ValueRange{O, mNew[0], mNew[1], lNew[0], lNew[1]});
  }
  // O / l for the rows that exist.
  Value O = loop.getResult(0);
  Value inv[2];
  for (int64_t half : {0, 1}) inv[half] = b.create<arith::DivFOp>(l, x.f(1.0), loop.getResult(3 + half));
  Value oBase = x.mul(batch, sh.sq * sh.dv);
  for (int64_t e = 0; e < sh.dv / 2; ++e) {
    const int64_t half = (e % 4) / 2;
    Value row = x.add(q0, rowOf(x, half));
    Value val = x.fmul(b.create<vector::ExtractOp>(l, O, ArrayRef<int64_t>{e}), inv[half]);
    Value flat = x.add(oBase, x.add(x.mul(row, sh.dv), colOf(x, e)));
    if (sh.sq % sh.bq == 0) {
      store(b, flat, val);
      continue;
    }
    auto guard = b.create<scf::IfOp>(l, x.lt(row, sh.sq), false);
    OpBuilder gb = guard.getThenBodyBuilder();
    store(gb, flat, val);
  }
  b.create<func::ReturnOp>(l);
}

}  // namespace tessera::conversion::wgmma_attention
