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
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
namespace s = tessera::schedule;
namespace t = tessera::tile;

namespace tessera::conversion::attention_grad {
namespace {

using build::B;
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

/// scale * Q[row] . K^T[:, jj] of the staged block (row < Sq).
Value score(B &w, const Shape &sh, const Bases &base, Value q, Value ks, Value row, Value jj) {
  Value qRow = w.add(base.q, w.mul(row, sh.d));
  Value dot = fmaLoop(w.b, w.l, sh.d, w.f(0.0), [&](B &u, Value kk) {
    return std::make_pair(u.load(q, u.add(qRow, kk)), u.load(ks, u.add(u.mul(kk, sh.bkv), jj)));
  });
  return w.fmul(dot, w.f(sh.scale));
}

/// Does key `key` count for query `row`: it exists and, causal, is not
/// after the query.
Value live(B &w, const Shape &sh, Value row, Value key) {
  Value ok = w.lt(key, sh.skv);
  if (sh.causal)
    ok = w.band(ok, w.b.create<arith::CmpIOp>(w.l, arith::CmpIPredicate::ule, key, row));
  return ok;
}

/// P = exp(S - L) (0 where masked) and dS = P (dO_row . V_key - D) of
/// query `row` (< Sq) and staged key `jj`.
std::pair<Value, Value> probabilityAndGrad(B &w, const Shape &sh, const Bases &base, Value q, Value dout,
                                           Value stats, Value ks, Value vs, Value row, Value jj, Value ok) {
  Value sc = score(w, sh, base, q, ks, row, jj);
  Value at = w.add(base.stats, w.mul(row, 2));
  Value L = w.load(stats, at), D = w.load(stats, w.add(at, w.c(1)));
  Value p = w.select(ok, w.b.create<math::ExpOp>(w.l, w.fsub(sc, L)), w.f(0.0));
  Value oRow = w.add(base.o, w.mul(row, sh.dv));
  Value dp = fmaLoop(w.b, w.l, sh.dv, w.f(0.0), [&](B &u, Value c) {
    return std::make_pair(u.load(dout, u.add(oRow, c)), u.load(vs, u.add(u.mul(jj, sh.dv), c)));
  });
  return {p, w.fmul(p, w.fsub(dp, D))};
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
  WorkLoop w = workLoop(b, l, sh, id, sh.qBlocks(), sh.bq);
  OpBuilder &qb = w.body;
  B y{qb, l};
  const Value q0 = w.first;
  const Bases &base = w.base;
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
    // The block's scores, masked keys -inf; rows past Sq read row Sq-1
    // (computed, never stored; key 0 is live for every row, so m is finite
    // after the first block).
    laneLoop(kb, l, id.lane, lanes, sh.bq * sh.bkv, [&](OpBuilder &ob, Value e) {
      B w{ob, l};
      Value r = w.div(e, sh.bkv), jj = w.rem(e, sh.bkv);
      Value row = w.add(q0, r);
      Value sc = score(w, sh, base, q, Ks, w.min(row, sh.sq - 1), jj);
      w.store(w.select(live(w, sh, row, w.add(j0, jj)), sc, w.f(kNegInf)), Ss, e);
    });
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
  // The dQ elements of a lane: e = lane + i * lanes < bq * d.
  const int64_t perLane = (sh.bq * sh.d + lanes - 1) / lanes;
  WorkLoop w = workLoop(b, l, sh, id, sh.qBlocks(), sh.bq);
  OpBuilder &qb = w.body;
  B y{qb, l};
  const Value q0 = w.first;
  const Bases &base = w.base;
  SmallVector<Value> zeros(perLane, y.f(0.0));
  auto kvLoop = qb.create<scf::ForOp>(l, y.c(0), keyBlockEnd(y, sh, q0), y.c(1), zeros);
  {
    OpBuilder kb = OpBuilder::atBlockBegin(kvLoop.getBody());
    B z{kb, l};
    Value j0 = z.mul(kvLoop.getInductionVar(), sh.bkv);
    stageKeys(kb, l, sh, id.lane, lanes, base, j0, kt, Ks, v, Vs);
    kb.create<t::BarrierOp>(l);
    laneLoop(kb, l, id.lane, lanes, sh.bq * sh.bkv, [&](OpBuilder &ob, Value e) {
      B w{ob, l};
      Value r = w.div(e, sh.bkv), jj = w.rem(e, sh.bkv);
      Value row = w.add(q0, r);
      auto [p, ds] = probabilityAndGrad(w, sh, base, q, dout, stats, Ks, Vs, w.min(row, sh.sq - 1), jj,
                                        live(w, sh, row, w.add(j0, jj)));
      (void)p;
      w.store(ds, Ss, e);
    });
    kb.create<t::BarrierOp>(l);
    // dQ_blk += dS K_blk on each lane's elements (lanes past the block
    // compute a copy, never stored).
    SmallVector<Value> acc;
    for (int64_t i = 0; i < perLane; ++i) {
      Value ec = z.min(z.add(id.lane, z.c(i * lanes)), sh.bq * sh.d - 1);
      Value r = z.div(ec, sh.d), kk = z.rem(ec, sh.d);
      acc.push_back(fmaLoop(kb, l, sh.bkv, kvLoop.getRegionIterArgs()[i], [&](B &u, Value jj) {
        return std::make_pair(u.load(Ss, u.add(u.mul(r, sh.bkv), jj)), u.load(Ks, u.add(u.mul(kk, sh.bkv), jj)));
      }));
    }
    // The next block overwrites Ks, Vs and Ss: every lane is done.
    kb.create<t::BarrierOp>(l);
    kb.create<scf::YieldOp>(l, acc);
  }
  for (int64_t i = 0; i < perLane; ++i) {
    Value e = y.add(id.lane, y.c(i * lanes));
    Value r = y.div(e, sh.d), kk = y.rem(e, sh.d), row = y.add(q0, r);
    guarded(qb, l, y.band(y.lt(e, sh.bq * sh.d), y.lt(row, sh.sq)), [&](B &u) {
      u.store(u.fmul(kvLoop.getResult(i), u.f(sh.scale)), dq, u.add(base.q, u.add(u.mul(row, sh.d), kk)));
    });
  }
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
  // A lane's dV elements (e < bkv * dv, [jj][c]) then its dK^T elements
  // (e < d * bkv, [kk][jj]).
  const int64_t nV = (sh.bkv * sh.dv + lanes - 1) / lanes, nK = (sh.d * sh.bkv + lanes - 1) / lanes;
  WorkLoop w = workLoop(b, l, sh, id, sh.kvBlocks(), sh.bkv);
  OpBuilder &wb = w.body;
  B y{wb, l};
  const Value j0 = w.first;
  const Bases &base = w.base;
  stageKeys(wb, l, sh, id.lane, lanes, base, j0, kt, Ks, v, Vs);
  wb.create<t::BarrierOp>(l);
  // Causal: the query blocks from the one holding the block's first key.
  Value qbStart = sh.causal ? y.div(j0, sh.bq) : y.c(0);
  SmallVector<Value> zeros(nV + nK, y.f(0.0));
  auto qLoop = wb.create<scf::ForOp>(l, qbStart, y.c(sh.qBlocks()), y.c(1), zeros);
  {
    OpBuilder qb = OpBuilder::atBlockBegin(qLoop.getBody());
    B z{qb, l};
    Value q0 = z.mul(qLoop.getInductionVar(), sh.bq);
    laneLoop(qb, l, id.lane, lanes, sh.bq * sh.bkv, [&](OpBuilder &ob, Value e) {
      B w{ob, l};
      Value r = w.div(e, sh.bkv), jj = w.rem(e, sh.bkv);
      Value row = w.add(q0, r);
      Value ok = w.band(live(w, sh, row, w.add(j0, jj)), w.lt(row, sh.sq));  // rows past Sq add nothing
      auto [p, ds] = probabilityAndGrad(w, sh, base, q, dout, stats, Ks, Vs, w.min(row, sh.sq - 1), jj, ok);
      w.store(p, Ps, e);
      w.store(ds, Ds, e);
    });
    qb.create<t::BarrierOp>(l);
    SmallVector<Value> acc;
    for (int64_t i = 0; i < nV; ++i) {  // dV_blk += P^T dO_blk
      Value ec = z.min(z.add(id.lane, z.c(i * lanes)), sh.bkv * sh.dv - 1);
      Value jj = z.div(ec, sh.dv), c = z.rem(ec, sh.dv);
      acc.push_back(fmaLoop(qb, l, sh.bq, qLoop.getRegionIterArgs()[i], [&](B &u, Value r) {
        Value row = u.min(u.add(q0, r), sh.sq - 1);
        return std::make_pair(u.load(Ps, u.add(u.mul(r, sh.bkv), jj)),
                              u.load(dout, u.add(base.o, u.add(u.mul(row, sh.dv), c))));
      }));
    }
    for (int64_t i = 0; i < nK; ++i) {  // dK^T_blk += Q_blk^T dS
      Value ec = z.min(z.add(id.lane, z.c(i * lanes)), sh.d * sh.bkv - 1);
      Value kk = z.div(ec, sh.bkv), jj = z.rem(ec, sh.bkv);
      acc.push_back(fmaLoop(qb, l, sh.bq, qLoop.getRegionIterArgs()[nV + i], [&](B &u, Value r) {
        Value row = u.min(u.add(q0, r), sh.sq - 1);
        return std::make_pair(u.load(q, u.add(base.q, u.add(u.mul(row, sh.d), kk))),
                              u.load(Ds, u.add(u.mul(r, sh.bkv), jj)));
      }));
    }
    // The next query block overwrites Ps and Ds: every lane is done.
    qb.create<t::BarrierOp>(l);
    qb.create<scf::YieldOp>(l, acc);
  }
  for (int64_t i = 0; i < nV; ++i) {
    Value e = y.add(id.lane, y.c(i * lanes));
    Value key = y.add(j0, y.div(e, sh.dv)), c = y.rem(e, sh.dv);
    guarded(wb, l, y.band(y.lt(e, sh.bkv * sh.dv), y.lt(key, sh.skv)), [&](B &u) {
      u.store(qLoop.getResult(i), dv, u.add(base.v, u.add(u.mul(key, sh.dv), c)));
    });
  }
  for (int64_t i = 0; i < nK; ++i) {
    Value e = y.add(id.lane, y.c(i * lanes));
    Value kk = y.div(e, sh.bkv), key = y.add(j0, y.rem(e, sh.bkv));
    guarded(wb, l, y.band(y.lt(e, sh.d * sh.bkv), y.lt(key, sh.skv)), [&](B &u) {
      u.store(u.fmul(qLoop.getResult(nV + i), u.f(sh.scale)), dkt, u.add(base.k, u.add(u.mul(kk, sh.skv), key)));
    });
  }
  // The next key block restages Ks and Vs: every lane is done with them.
  wb.create<t::BarrierOp>(l);
  b.create<func::ReturnOp>(l);
}

}  // namespace tessera::conversion::attention_grad
