//===- AttentionGradKernel.cpp - Tile IR kernels for flash_attention_grad -===//
//
// See AttentionGradKernel.h for the kernels and why. Barriers sit only in
// loops whose bounds are the same for every lane of a group.
//===----------------------------------------------------------------------===//
#include "AttentionGradKernel.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "KernelBuild.h"
#include "LaneTile.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
namespace s = tessera::schedule;
namespace t = tessera::tile;

namespace tessera::conversion::attention_grad {
namespace {

using build::B;
using build::LaneTileIds;
using build::laneLoop;
using build::sharedF32;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Shape : build::AttentionDims {
  bool causal;
  float scale;
  explicit Shape(s::FlashAttentionGradOp op)
      : AttentionDims(op.getQuery(), op.getValue(), op.getBlockQ(), op.getBlockKv()),
        causal(op.getCausal()), scale(op.getScale().convertToFloat()) {}
};

/// The lane, group and group count of the kernel.
struct Ids {
  Value lane, group, groups;
};
Ids ids(OpBuilder &b, Location l) {
  return {b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0}),
          b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0}),
          b.create<t::GroupCountOp>(l, b.getIndexType(), uint64_t{0})};
}

/// Where batch element `head`'s matrices start in the flat buffers: Q and
/// dQ, K^T and dK^T, V and dV, O and dO, the statistics.
struct Bases {
  Value q, k, v, o, stats;
};
Bases bases(B &y, const Shape &sh, Value head) {
  return {y.mul(head, sh.sq * sh.d), y.mul(head, sh.d * sh.skv), y.mul(head, sh.skv * sh.dv),
          y.mul(head, sh.sq * sh.dv), y.mul(head, sh.sq * 2)};
}

/// The groups' loop over (batch element, block) pairs, `blocks` blocks of
/// `size` rows per element (uniform bounds: every lane of a group reaches
/// every barrier), with the body's builder, the element and the block's
/// first row.
struct WorkLoop {
  scf::ForOp loop;
  OpBuilder body;
  Value head, first;
  Bases base;
};
WorkLoop workLoop(OpBuilder &b, Location l, const Shape &sh, const Ids &id, int64_t blocks, int64_t size) {
  B x{b, l};
  auto loop = b.create<scf::ForOp>(l, id.group, x.c(sh.batch * blocks), id.groups);
  OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
  B y{body, l};
  Value head = y.div(loop.getInductionVar(), blocks);
  Value first = y.mul(y.rem(loop.getInductionVar(), blocks), size);
  return {loop, body, head, first, bases(y, sh, head)};
}

/// sum over i < n of a(i) * b(i), from `init`, in one scf.for.
Value fmaLoop(OpBuilder &b, Location l, int64_t n, Value init,
              function_ref<std::pair<Value, Value>(B &, Value)> terms) {
  B x{b, l};
  auto loop = b.create<scf::ForOp>(l, x.c(0), x.c(n), x.c(1), ValueRange{init});
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  B u{lb, l};
  auto [p, q] = terms(u, loop.getInductionVar());
  lb.create<scf::YieldOp>(l, ValueRange{lb.create<math::FmaOp>(l, p, q, loop.getRegionIterArgs()[0]).getResult()});
  return loop.getResult(0);
}

/// Stages K^T[:, j0 .. j0 + bkv) into Ks ([kk][jj]) and, with `vs`, V[j0 ..
/// j0 + bkv, :] into Vs ([jj][c]); keys past Skv read as 0. The caller
/// places the barrier.
void stageKeys(OpBuilder &b, Location l, const Shape &sh, Value lane, int64_t lanes, const Bases &base,
               Value j0, Value kt, Value ks, Value v, Value vs) {
  laneLoop(b, l, lane, lanes, sh.d * sh.bkv, [&](OpBuilder &ob, Value e) {
    B w{ob, l};
    Value kk = w.div(e, sh.bkv), j = w.add(j0, w.rem(e, sh.bkv));
    Value val = w.load(kt, w.add(base.k, w.add(w.mul(kk, sh.skv), w.min(j, sh.skv - 1))));
    w.store(w.select(w.lt(j, sh.skv), val, w.f(0.0)), ks, e);
  });
  if (!vs) return;
  laneLoop(b, l, lane, lanes, sh.bkv * sh.dv, [&](OpBuilder &ob, Value e) {
    B w{ob, l};
    Value j = w.add(j0, w.div(e, sh.dv)), c = w.rem(e, sh.dv);
    Value val = w.load(v, w.add(base.v, w.add(w.mul(w.min(j, sh.skv - 1), sh.dv), c)));
    w.store(w.select(w.lt(j, sh.skv), val, w.f(0.0)), vs, e);
  });
}

/// Does key `key` count for query `row`: both exist and, causal, the key
/// is not after the query.
Value live(B &w, const Shape &sh, Value row, Value key) {
  Value ok = w.band(w.lt(key, sh.skv), w.lt(row, sh.sq));
  if (sh.causal)
    ok = w.band(ok, w.b.create<arith::CmpIOp>(w.l, arith::CmpIPredicate::ule, key, row));
  return ok;
}

/// The query rows of a lane's register block over (query block, key
/// block): the row (q0 + r, maybe past Sq) and, for reads, where the
/// clamped row starts in Q and in O / dO.
struct QueryRows {
  SmallVector<Value> row, qAt, oAt;
};
QueryRows queryRows(B &x, const Shape &sh, const Bases &base, const LaneTileIds &t, Value q0) {
  QueryRows rows;
  for (Value r : t.rows) {
    Value row = x.add(q0, r), safe = x.min(row, sh.sq - 1);
    rows.row.push_back(row);
    rows.qAt.push_back(x.add(base.q, x.mul(safe, sh.d)));
    rows.oAt.push_back(x.add(base.o, x.mul(safe, sh.dv)));
  }
  return rows;
}

/// The lane's block of S = Q_blk K_blk^T (unscaled) from the staged K^T
/// block Ks ([kk][jj]).
SmallVector<Value> scoreBlock(OpBuilder &b, Location l, const Shape &sh, const LaneTileIds &t,
                              const QueryRows &rows, Value q, Value ks) {
  B x{b, l};
  SmallVector<Value> zeros(t.size(), x.f(0.0));
  return build::blockedProduct(
      b, l, t, sh.d, zeros, [&](B &u, int64_t i, Value kk) { return u.load(q, u.add(rows.qAt[i], kk)); },
      [&](B &u, Value kk, int64_t j) { return u.load(ks, u.add(u.mul(kk, sh.bkv), t.cols[j])); });
}

/// P = exp(scale S - L) (0 where the key does not count) and
/// dS = P (dO_row . V_key - D) on the lane's block of (query block q0,
/// staged key block j0).
struct ProbabilityBlock {
  SmallVector<Value> p, ds;
};
ProbabilityBlock probabilityBlock(OpBuilder &b, Location l, const Shape &sh, const Bases &base,
                                  const LaneTileIds &t, Value q0, Value j0, Value q, Value dout, Value stats,
                                  Value ks, Value vs) {
  B x{b, l};
  const QueryRows rows = queryRows(x, sh, base, t, q0);
  SmallVector<Value> s = scoreBlock(b, l, sh, t, rows, q, ks);
  SmallVector<Value> zeros(t.size(), x.f(0.0));
  SmallVector<Value> dp = build::blockedProduct(
      b, l, t, sh.dv, zeros, [&](B &u, int64_t i, Value c) { return u.load(dout, u.add(rows.oAt[i], c)); },
      [&](B &u, Value c, int64_t j) { return u.load(vs, u.add(u.mul(t.cols[j], sh.dv), c)); });
  ProbabilityBlock out;
  for (int64_t i = 0; i < t.shape.rm; ++i) {
    Value at = x.add(base.stats, x.mul(x.min(rows.row[i], sh.sq - 1), 2));
    Value L = x.load(stats, at), D = x.load(stats, x.add(at, x.c(1)));
    for (int64_t j = 0; j < t.shape.rn; ++j) {
      const int64_t e = i * t.shape.rn + j;
      Value ok = live(x, sh, rows.row[i], x.add(j0, t.cols[j]));
      Value p = x.select(ok, b.create<math::ExpOp>(l, x.fsub(x.fmul(s[e], x.f(sh.scale)), L)), x.f(0.0));
      out.p.push_back(p);
      out.ds.push_back(x.fmul(p, x.fsub(dp[e], D)));
    }
  }
  return out;
}

/// Stores a lane's block of `values` into the [r][jj] block `to` (the
/// elements inside the block).
void storeBlock(OpBuilder &b, Location l, const LaneTileIds &t, ArrayRef<Value> values, Value to) {
  build::forOwned(b, l, t, [&](B &u, int64_t i, int64_t j) {
    u.store(values[i * t.shape.rn + j], to, u.add(u.mul(t.rows[i], t.shape.n), t.cols[j]));
  });
}

/// The key blocks query block `q0` needs: all, or causal, up to the one
/// holding its last row.
Value keyBlockEnd(B &y, const Shape &sh, Value q0) {
  Value end = y.c(sh.kvBlocks());
  if (sh.causal) end = y.b.create<arith::MinUIOp>(y.l, end, y.add(y.div(y.add(q0, y.c(sh.bq - 1)), sh.bkv), y.c(1)));
  return end;
}

/// `if (cond) body` at `b`.
void guarded(OpBuilder &b, Location l, Value cond, function_ref<void(B &)> body) {
  auto st = b.create<scf::IfOp>(l, cond, false);
  OpBuilder sb = st.getThenBodyBuilder();
  B u{sb, l};
  body(u);
}

}  // namespace

int64_t statsElements(s::FlashAttentionGradOp op) {
  const Shape sh(op);
  return sh.batch * sh.sq * 2;
}

std::array<int64_t, 3> queryGrid(s::FlashAttentionGradOp op, int64_t maxGroups) {
  const Shape sh(op);
  return {std::max<int64_t>(1, std::min(sh.batch * sh.qBlocks(), maxGroups)), 1, 1};
}

std::array<int64_t, 3> keyGrid(s::FlashAttentionGradOp op, int64_t maxGroups) {
  const Shape sh(op);
  return {std::max<int64_t>(1, std::min(sh.batch * sh.kvBlocks(), maxGroups)), 1, 1};
}

void buildStats(func::FuncOp k, s::FlashAttentionGradOp op, int64_t lanes, Value q, Value kt, Value o, Value dout,
                Value stats) {
  const Shape sh(op);
  const Location l = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const Ids id = ids(b, l);
  Value Ks = sharedF32(b, l, sh.d * sh.bkv), Ss = sharedF32(b, l, sh.bq * sh.bkv);
  Value Ms = sharedF32(b, l, sh.bq), Ls = sharedF32(b, l, sh.bq);
  B x{b, l};
  const LaneTileIds ts = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.bkv, lanes), id.lane);
  WorkLoop w = workLoop(b, l, sh, id, sh.qBlocks(), sh.bq);
  OpBuilder &qb = w.body;
  B y{qb, l};
  const Value q0 = w.first;
  const Bases &base = w.base;
  const QueryRows rows = queryRows(y, sh, base, ts, q0);
  laneLoop(qb, l, id.lane, lanes, sh.bq, [&](OpBuilder &ib, Value r) {
    B z{ib, l};
    z.store(z.f(kNegInf), Ms, r);
    z.store(z.f(0.0), Ls, r);
  });
  qb.create<t::BarrierOp>(l);
  auto kvLoop = qb.create<scf::ForOp>(l, y.c(0), keyBlockEnd(y, sh, q0), y.c(1));
  {
    OpBuilder kb = OpBuilder::atBlockBegin(kvLoop.getBody());
    B z{kb, l};
    Value j0 = z.mul(kvLoop.getInductionVar(), sh.bkv);
    stageKeys(kb, l, sh, id.lane, lanes, base, j0, kt, Ks, Value(), Value());
    kb.create<t::BarrierOp>(l);
    // The block's scores, keys that do not count -inf (rows past Sq read
    // row Sq-1 and are never stored; key 0 counts for every row, so m is
    // finite after the first block).
    SmallVector<Value> s = scoreBlock(kb, l, sh, ts, rows, q, Ks), masked;
    for (int64_t i = 0; i < ts.shape.rm; ++i)
      for (int64_t j = 0; j < ts.shape.rn; ++j) {
        Value ok = live(z, sh, z.min(rows.row[i], sh.sq - 1), z.add(j0, ts.cols[j]));
        masked.push_back(z.select(ok, z.fmul(s[i * ts.shape.rn + j], z.f(sh.scale)), z.f(kNegInf)));
      }
    storeBlock(kb, l, ts, masked, Ss);
    kb.create<t::BarrierOp>(l);
    // One lane per row: m and l online, as the forward.
    laneLoop(kb, l, id.lane, lanes, sh.bq, [&](OpBuilder &rb, Value r) {
      B w{rb, l};
      Value rowAt = w.mul(r, sh.bkv);
      Value mOld = w.load(Ms, r);
      auto mx = rb.create<scf::ForOp>(l, w.c(0), w.c(sh.bkv), w.c(1), ValueRange{mOld});
      {
        OpBuilder mb = OpBuilder::atBlockBegin(mx.getBody());
        B u{mb, l};
        mb.create<scf::YieldOp>(l, ValueRange{u.fmax(mx.getRegionIterArgs()[0], u.load(Ss, u.add(rowAt, mx.getInductionVar())))});
      }
      Value mNew = mx.getResult(0);
      auto sum = rb.create<scf::ForOp>(l, w.c(0), w.c(sh.bkv), w.c(1), ValueRange{w.f(0.0)});
      {
        OpBuilder sb = OpBuilder::atBlockBegin(sum.getBody());
        B u{sb, l};
        Value p = sb.create<math::ExpOp>(l, u.fsub(u.load(Ss, u.add(rowAt, sum.getInductionVar())), mNew));
        sb.create<scf::YieldOp>(l, ValueRange{u.fadd(sum.getRegionIterArgs()[0], p)});
      }
      Value rescale = rb.create<math::ExpOp>(l, w.fsub(mOld, mNew));
      w.store(w.fadd(w.fmul(w.load(Ls, r), rescale), sum.getResult(0)), Ls, r);
      w.store(mNew, Ms, r);
    });
    kb.create<t::BarrierOp>(l);
  }
  // L = m + log(l) and D = dO . O per existing row.
  laneLoop(qb, l, id.lane, lanes, sh.bq, [&](OpBuilder &ib, Value r) {
    B w{ib, l};
    Value row = w.add(q0, r);
    guarded(ib, l, w.lt(row, sh.sq), [&](B &u) {
      Value L = u.fadd(u.load(Ms, r), u.b.create<math::LogOp>(l, u.load(Ls, r)));
      Value oRow = u.add(base.o, u.mul(row, sh.dv));
      Value D = fmaLoop(u.b, l, sh.dv, u.f(0.0), [&](B &v, Value c) {
        return std::make_pair(v.load(dout, v.add(oRow, c)), v.load(o, v.add(oRow, c)));
      });
      Value at = u.add(base.stats, u.mul(row, 2));
      u.store(L, stats, at);
      u.store(D, stats, u.add(at, u.c(1)));
    });
  });
  // Every lane has read m and l before the next query block resets them.
  qb.create<t::BarrierOp>(l);
  b.create<func::ReturnOp>(l);
}

void buildQueryGrad(func::FuncOp k, s::FlashAttentionGradOp op, int64_t lanes, Value q, Value kt, Value v,
                    Value dout, Value stats, Value dq) {
  const Shape sh(op);
  const Location l = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const Ids id = ids(b, l);
  Value Ks = sharedF32(b, l, sh.d * sh.bkv), Vs = sharedF32(b, l, sh.bkv * sh.dv);
  Value Ss = sharedF32(b, l, sh.bq * sh.bkv);  // dS of the block, [r][jj]
  B x{b, l};
  // Register blocks: of the (query, key) block, and of dQ_blk ([r][kk]).
  const LaneTileIds ts = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.bkv, lanes), id.lane);
  const LaneTileIds tq = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.d, lanes), id.lane);
  WorkLoop w = workLoop(b, l, sh, id, sh.qBlocks(), sh.bq);
  OpBuilder &qb = w.body;
  B y{qb, l};
  const Value q0 = w.first;
  const Bases &base = w.base;
  SmallVector<Value> zeros(tq.size(), y.f(0.0));
  auto kvLoop = qb.create<scf::ForOp>(l, y.c(0), keyBlockEnd(y, sh, q0), y.c(1), zeros);
  {
    OpBuilder kb = OpBuilder::atBlockBegin(kvLoop.getBody());
    B z{kb, l};
    Value j0 = z.mul(kvLoop.getInductionVar(), sh.bkv);
    stageKeys(kb, l, sh, id.lane, lanes, base, j0, kt, Ks, v, Vs);
    kb.create<t::BarrierOp>(l);
    storeBlock(kb, l, ts, probabilityBlock(kb, l, sh, base, ts, q0, j0, q, dout, stats, Ks, Vs).ds, Ss);
    kb.create<t::BarrierOp>(l);
    // dQ_blk += dS K_blk (lanes past the block compute a copy, never
    // stored).
    SmallVector<Value> acc = build::blockedProduct(
        kb, l, tq, sh.bkv, kvLoop.getRegionIterArgs(),
        [&](B &u, int64_t i, Value jj) { return u.load(Ss, u.add(u.mul(tq.rows[i], sh.bkv), jj)); },
        [&](B &u, Value jj, int64_t j) { return u.load(Ks, u.add(u.mul(tq.cols[j], sh.bkv), jj)); });
    // The next block overwrites Ks, Vs and Ss: every lane is done.
    kb.create<t::BarrierOp>(l);
    kb.create<scf::YieldOp>(l, acc);
  }
  build::forOwned(
      qb, l, tq,
      [&](B &u, int64_t i, int64_t j) {
        Value row = u.add(q0, tq.rows[i]);
        u.store(u.fmul(kvLoop.getResult(i * tq.shape.rn + j), u.f(sh.scale)), dq,
                u.add(base.q, u.add(u.mul(row, sh.d), tq.cols[j])));
      },
      [&](B &u, int64_t i, int64_t) { return u.lt(u.add(q0, tq.rows[i]), sh.sq); });
  b.create<func::ReturnOp>(l);
}

void buildKeyValueGrad(func::FuncOp k, s::FlashAttentionGradOp op, int64_t lanes, Value q, Value kt, Value v,
                       Value dout, Value stats, Value dkt, Value dv) {
  const Shape sh(op);
  const Location l = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&k.front());
  const Ids id = ids(b, l);
  Value Ks = sharedF32(b, l, sh.d * sh.bkv), Vs = sharedF32(b, l, sh.bkv * sh.dv);
  Value Ps = sharedF32(b, l, sh.bq * sh.bkv), Ds = sharedF32(b, l, sh.bq * sh.bkv);  // [r][jj]
  B x{b, l};
  // Register blocks: of the (query, key) block, of dV_blk ([jj][c]) and of
  // dK^T_blk ([kk][jj]).
  const LaneTileIds ts = build::laneTileIds(x, build::LaneTile::choose(sh.bq, sh.bkv, lanes), id.lane);
  const LaneTileIds tv = build::laneTileIds(x, build::LaneTile::choose(sh.bkv, sh.dv, lanes), id.lane);
  const LaneTileIds tk = build::laneTileIds(x, build::LaneTile::choose(sh.d, sh.bkv, lanes), id.lane);
  WorkLoop w = workLoop(b, l, sh, id, sh.kvBlocks(), sh.bkv);
  OpBuilder &wb = w.body;
  B y{wb, l};
  const Value j0 = w.first;
  const Bases &base = w.base;
  stageKeys(wb, l, sh, id.lane, lanes, base, j0, kt, Ks, v, Vs);
  wb.create<t::BarrierOp>(l);
  // Causal: the query blocks from the one holding the block's first key.
  Value qbStart = sh.causal ? y.div(j0, sh.bq) : y.c(0);
  SmallVector<Value> zeros(tv.size() + tk.size(), y.f(0.0));
  auto qLoop = wb.create<scf::ForOp>(l, qbStart, y.c(sh.qBlocks()), y.c(1), zeros);
  {
    OpBuilder qb = OpBuilder::atBlockBegin(qLoop.getBody());
    B z{qb, l};
    Value q0 = z.mul(qLoop.getInductionVar(), sh.bq);
    // Rows past Sq count for no key: their P and dS are 0 and add nothing.
    ProbabilityBlock pb = probabilityBlock(qb, l, sh, base, ts, q0, j0, q, dout, stats, Ks, Vs);
    storeBlock(qb, l, ts, pb.p, Ps);
    storeBlock(qb, l, ts, pb.ds, Ds);
    qb.create<t::BarrierOp>(l);
    // Where a query row of the block starts in O / dO and in Q (clamped).
    auto oAt = [&](B &u, Value r) { return u.add(base.o, u.mul(u.min(u.add(q0, r), sh.sq - 1), sh.dv)); };
    auto qAt = [&](B &u, Value r) { return u.add(base.q, u.mul(u.min(u.add(q0, r), sh.sq - 1), sh.d)); };
    ValueRange carried = qLoop.getRegionIterArgs();
    SmallVector<Value> acc = build::blockedProduct(  // dV_blk += P^T dO_blk
        qb, l, tv, sh.bq, carried.take_front(tv.size()),
        [&](B &u, int64_t i, Value r) { return u.load(Ps, u.add(u.mul(r, sh.bkv), tv.rows[i])); },
        [&](B &u, Value r, int64_t j) { return u.load(dout, u.add(oAt(u, r), tv.cols[j])); });
    llvm::append_range(acc, build::blockedProduct(  // dK^T_blk += Q_blk^T dS
                                qb, l, tk, sh.bq, carried.drop_front(tv.size()),
                                [&](B &u, int64_t i, Value r) { return u.load(q, u.add(qAt(u, r), tk.rows[i])); },
                                [&](B &u, Value r, int64_t j) {
                                  return u.load(Ds, u.add(u.mul(r, sh.bkv), tk.cols[j]));
                                }));
    // The next query block overwrites Ps and Ds: every lane is done.
    qb.create<t::BarrierOp>(l);
    qb.create<scf::YieldOp>(l, acc);
  }
  build::forOwned(
      wb, l, tv,
      [&](B &u, int64_t i, int64_t j) {
        Value key = u.add(j0, tv.rows[i]);
        u.store(qLoop.getResult(i * tv.shape.rn + j), dv, u.add(base.v, u.add(u.mul(key, sh.dv), tv.cols[j])));
      },
      [&](B &u, int64_t i, int64_t) { return u.lt(u.add(j0, tv.rows[i]), sh.skv); });
  build::forOwned(
      wb, l, tk,
      [&](B &u, int64_t i, int64_t j) {
        Value key = u.add(j0, tk.cols[j]);
        u.store(u.fmul(qLoop.getResult(tv.size() + i * tk.shape.rn + j), u.f(sh.scale)), dkt,
                u.add(base.k, u.add(u.mul(tk.rows[i], sh.skv), key)));
      },
      [&](B &u, int64_t, int64_t j) { return u.lt(u.add(j0, tk.cols[j]), sh.skv); });
  // The next key block restages Ks and Vs: every lane is done with them.
  wb.create<t::BarrierOp>(l);
  b.create<func::ReturnOp>(l);
}

}  // namespace tessera::conversion::attention_grad
