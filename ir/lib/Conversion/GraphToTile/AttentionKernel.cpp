//===- AttentionKernel.cpp - Tile IR kernel for flash_attention -----------===//
//
// See AttentionKernel.h for the phases and why.
//===----------------------------------------------------------------------===//
#include "AttentionKernel.h"
#include "KernelBuild.h"
#include "LaneTile.h"

#include <algorithm>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace s = tessera::schedule;
namespace t = tessera::tile;

namespace tessera::conversion::attention {
namespace {

using build::B;
using build::laneLoop;
using build::sharedF32;

struct Shape : build::AttentionDims {
  explicit Shape(s::FlashAttentionOp op)
      : AttentionDims(op.getQuery(), op.getValue(), op.getBlockQ(), op.getBlockKv()) {}
  int64_t work() const { return batch * qBlocks(); }  // (batch element, query block) pairs
  // Shared f32 slots: K block, V block, S block, m, l, rescale.
  int64_t sharedFloats() const { return d * bkv + bkv * dv + bq * bkv + 3 * bq; }
};

}  // namespace

int64_t sharedBytes(s::FlashAttentionOp op) { return Shape(op).sharedFloats() * 4; }

std::array<int64_t, 3> grid(s::FlashAttentionOp op, int64_t maxGroups) {
  return {std::max<int64_t>(1, std::min(Shape(op).work(), maxGroups)), 1, 1};
}

void buildKernel(func::FuncOp k, s::FlashAttentionOp op, int64_t lanes, Value q, Value kt, Value v,
                 Value out, const KeyOffset &keyOffset) {
  const Shape sh(op);
  const Location l = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  B x{b, l};
  const double negInf = -std::numeric_limits<double>::infinity();
  Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
  Value group = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
  Value groups = b.create<t::GroupCountOp>(l, b.getIndexType(), uint64_t{0});
  Value Ks = sharedF32(b, l, sh.d * sh.bkv);   // [kk][j]
  Value Vs = sharedF32(b, l, sh.bkv * sh.dv);  // [j][c]
  Value Ss = sharedF32(b, l, sh.bq * sh.bkv);  // [r][j]: scores, then P
  Value Ms = sharedF32(b, l, sh.bq), Ls = sharedF32(b, l, sh.bq), As = sharedF32(b, l, sh.bq);
  const float scale = op.getScale().convertToFloat();
  // Each lane's register blocks (LaneTile.h): of the (query, key) block
  // and of O ([r][c]).
  const build::LaneTileIds ts = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.bkv, lanes), lane);
  const build::LaneTileIds to = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.dv, lanes), lane);

  const bool causal = op.getCausal();
  // (batch element, query block) pairs over the groups (uniform bounds:
  // every lane of a group reaches every barrier).
  auto qLoop = b.create<scf::ForOp>(l, group, x.c(sh.work()), groups);
  OpBuilder qb = OpBuilder::atBlockBegin(qLoop.getBody());
  B y{qb, l};
  Value head = y.div(qLoop.getInductionVar(), sh.qBlocks());
  Value q0 = y.mul(y.rem(qLoop.getInductionVar(), sh.qBlocks()), sh.bq);
  // The batch element's matrices in the flat buffers.
  Value qBase = y.mul(head, sh.sq * sh.d), kBase = y.mul(head, sh.d * sh.skv);
  Value vBase = y.mul(head, sh.skv * sh.dv), oBase = y.mul(head, sh.sq * sh.dv);
  // Where the lane's query rows start in Q (rows past Sq read row Sq-1:
  // computed, never stored).
  SmallVector<Value> qRowAt;
  for (Value r : ts.rows) qRowAt.push_back(y.add(qBase, y.mul(y.min(y.add(q0, r), sh.sq - 1), sh.d)));
  // m = -inf, l = 0 for the block's rows (rows lane, lane + lanes, ...:
  // block_q may exceed the lanes).
  laneLoop(qb, l, lane, lanes, sh.bq, [&](OpBuilder &ib, Value r) {
    B z{ib, l};
    z.store(z.f(negInf), Ms, r);
    z.store(z.f(0.0), Ls, r);
  });
  qb.create<t::BarrierOp>(l);
  SmallVector<Value> zeros(to.size(), y.f(0.0));
  // Causal: the key blocks up to the one holding the block's last query
  // (the first block always runs: key 0 is never masked, so m is finite
  // after it).
  Value kvEnd = y.c(sh.kvBlocks());
  if (causal)
    kvEnd = qb.create<arith::MinUIOp>(l, kvEnd, y.add(y.div(y.add(q0, y.c(sh.bq - 1)), sh.bkv), y.c(1)));
  auto kvLoop = qb.create<scf::ForOp>(l, y.c(0), kvEnd, y.c(1), zeros);
  {
    OpBuilder kb = OpBuilder::atBlockBegin(kvLoop.getBody());
    B z{kb, l};
    Value j0 = z.mul(kvLoop.getInductionVar(), sh.bkv);
    // 1. Stage K^T[:, j0..] and V[j0.., :]; keys past Skv read as 0.
    laneLoop(kb, l, lane, lanes, sh.d * sh.bkv, [&](OpBuilder &ob, Value e) {
      B w{ob, l};
      Value kk = w.div(e, sh.bkv), j = w.add(j0, w.rem(e, sh.bkv));
      Value ok = w.lt(j, sh.skv);
      Value val = w.load(kt, w.add(kBase, keyOffset(ob, kk, w.min(j, sh.skv - 1))));
      w.store(w.select(ok, val, w.f(0.0)), Ks, e);
    });
    laneLoop(kb, l, lane, lanes, sh.bkv * sh.dv, [&](OpBuilder &ob, Value e) {
      B w{ob, l};
      Value j = w.add(j0, w.div(e, sh.dv)), c = w.rem(e, sh.dv);
      Value ok = w.lt(j, sh.skv);
      Value val = w.load(v, w.add(vBase, w.add(w.mul(w.min(j, sh.skv - 1), sh.dv), c)));
      w.store(w.select(ok, val, w.f(0.0)), Vs, e);
    });
    kb.create<t::BarrierOp>(l);
    // 2. S = scale * Q_blk K_blk^T; masked keys -inf.
    SmallVector<Value> zs(ts.size(), z.f(0.0));
    SmallVector<Value> sc = build::blockedProduct(
        kb, l, ts, sh.d, zs, [&](B &u, int64_t i, Value kk) { return u.load(q, u.add(qRowAt[i], kk)); },
        [&](B &u, Value kk, int64_t j) { return u.load(Ks, u.add(u.mul(kk, sh.bkv), ts.cols[j])); });
    build::forOwned(kb, l, ts, [&](B &w, int64_t i, int64_t j) {
      Value key = w.add(j0, ts.cols[j]);
      Value live = w.lt(key, sh.skv);
      if (causal)  // keys past the query are masked
        live = w.band(live, w.b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ule, key, w.add(q0, ts.rows[i])));
      w.store(w.select(live, w.fmul(sc[i * ts.shape.rn + j], w.f(scale)), w.f(negInf)), Ss,
              w.add(w.mul(ts.rows[i], sh.bkv), ts.cols[j]));
    });
    kb.create<t::BarrierOp>(l);
    // 3. One lane per query row (rows lane, lane + lanes, ...): the online
    // softmax statistics.
    laneLoop(kb, l, lane, lanes, sh.bq, [&](OpBuilder &rb, Value row) {
      B w{rb, l};
      Value base = w.mul(row, sh.bkv);
      Value mOld = w.load(Ms, row);
      auto mx = rb.create<scf::ForOp>(l, w.c(0), w.c(sh.bkv), w.c(1), ValueRange{mOld});
      {
        OpBuilder mb = OpBuilder::atBlockBegin(mx.getBody());
        B u{mb, l};
        mb.create<scf::YieldOp>(l, ValueRange{u.fmax(mx.getRegionIterArgs()[0],
                                                     u.load(Ss, u.add(base, mx.getInductionVar())))});
      }
      Value mNew = mx.getResult(0);
      auto sum = rb.create<scf::ForOp>(l, w.c(0), w.c(sh.bkv), w.c(1), ValueRange{w.f(0.0)});
      {
        OpBuilder sb = OpBuilder::atBlockBegin(sum.getBody());
        B u{sb, l};
        Value at = u.add(base, sum.getInductionVar());
        Value p = sb.create<math::ExpOp>(l, sb.create<arith::SubFOp>(l, u.load(Ss, at), mNew));
        u.store(p, Ss, at);
        sb.create<scf::YieldOp>(l, ValueRange{u.fadd(sum.getRegionIterArgs()[0], p)});
      }
      Value rescale = rb.create<math::ExpOp>(l, rb.create<arith::SubFOp>(l, mOld, mNew));
      w.store(w.fadd(w.fmul(w.load(Ls, row), rescale), sum.getResult(0)), Ls, row);
      w.store(mNew, Ms, row);
      w.store(rescale, As, row);
    });
    kb.create<t::BarrierOp>(l);
    // 4. O = O * rescale + P V_blk on each lane's block (lanes past the
    // block compute a copy, never stored).
    SmallVector<Value> rescaled;
    for (int64_t i = 0; i < to.shape.rm; ++i) {
      Value a = z.load(As, to.rows[i]);
      for (int64_t j = 0; j < to.shape.rn; ++j)
        rescaled.push_back(z.fmul(kvLoop.getRegionIterArgs()[i * to.shape.rn + j], a));
    }
    SmallVector<Value> acc = build::blockedProduct(
        kb, l, to, sh.bkv, rescaled,
        [&](B &u, int64_t i, Value jj) { return u.load(Ss, u.add(u.mul(to.rows[i], sh.bkv), jj)); },
        [&](B &u, Value jj, int64_t j) { return u.load(Vs, u.add(u.mul(jj, sh.dv), to.cols[j])); });
    // The next block overwrites Ks, Vs, Ss and As: every lane is done.
    kb.create<t::BarrierOp>(l);
    kb.create<scf::YieldOp>(l, acc);
  }
  // O / l, stored for the rows and elements that exist.
  build::forOwned(
      qb, l, to,
      [&](B &u, int64_t i, int64_t j) {
        Value row = u.add(q0, to.rows[i]);
        Value o = u.b.create<arith::DivFOp>(l, kvLoop.getResult(i * to.shape.rn + j), u.load(Ls, to.rows[i]));
        u.store(o, out, u.add(oBase, u.add(u.mul(row, sh.dv), to.cols[j])));
      },
      [&](B &u, int64_t i, int64_t) { return u.lt(u.add(q0, to.rows[i]), sh.sq); });
  // Every lane has read m and l before the next query block resets them.
  qb.create<t::BarrierOp>(l);
  b.create<func::ReturnOp>(l);
}

}  // namespace tessera::conversion::attention
