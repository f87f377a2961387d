//===- LaneTile.cpp - register blocks of a block product over a group -----===//
//
// See LaneTile.h.
//===----------------------------------------------------------------------===//
#include "LaneTile.h"

#include <limits>

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace tessera::conversion::build {

LaneTile LaneTile::choose(int64_t m, int64_t n, int64_t lanes) {
  LaneTile best{m, n, 1, lanes, m, 1};
  int64_t bestCost = std::numeric_limits<int64_t>::max();
  for (int64_t lm = 1; lm <= lanes; lm *= 2) {
    if (lanes % lm) continue;
    const int64_t ln = lanes / lm;
    const int64_t rm = (m + lm - 1) / lm, rn = (n + ln - 1) / ln;
    const int64_t cost = rm * rn + rm + rn;
    // Ties: the grid wasting fewer lanes on clamped copies.
    if (cost < bestCost || (cost == bestCost && lm * rm * ln * rn < best.lm * best.rm * best.ln * best.rn)) {
      best = {m, n, lm, ln, rm, rn};
      bestCost = cost;
    }
  }
  return best;
}

LaneTileIds laneTileIds(B &x, const LaneTile &t, Value lane) {
  LaneTileIds ids{t, {}, {}, {}, {}};
  Value ty = x.div(lane, t.ln), tx = x.rem(lane, t.ln);
  for (int64_t i = 0; i < t.rm; ++i) {
    Value r = x.add(ty, x.c(i * t.lm));
    ids.rows.push_back(x.min(r, t.m - 1));
    ids.rowIn.push_back(x.lt(r, t.m));
  }
  for (int64_t j = 0; j < t.rn; ++j) {
    Value c = x.add(tx, x.c(j * t.ln));
    ids.cols.push_back(x.min(c, t.n - 1));
    ids.colIn.push_back(x.lt(c, t.n));
  }
  return ids;
}

SmallVector<Value> blockedProduct(OpBuilder &b, Location l, const LaneTileIds &ids, int64_t depth, ValueRange init,
                                  function_ref<Value(B &, int64_t, Value)> a, function_ref<Value(B &, Value, int64_t)> bOp) {
  B x{b, l};
  auto loop = b.create<scf::ForOp>(l, x.c(0), x.c(depth), x.c(1), init);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  B u{lb, l};
  Value k = loop.getInductionVar();
  SmallVector<Value> as, bs;
  for (int64_t i = 0; i < ids.shape.rm; ++i) as.push_back(a(u, i, k));
  for (int64_t j = 0; j < ids.shape.rn; ++j) bs.push_back(bOp(u, k, j));
  SmallVector<Value> next;
  for (int64_t i = 0; i < ids.shape.rm; ++i)
    for (int64_t j = 0; j < ids.shape.rn; ++j)
      next.push_back(lb.create<math::FmaOp>(l, as[i], bs[j], loop.getRegionIterArgs()[i * ids.shape.rn + j]));
  lb.create<scf::YieldOp>(l, next);
  return SmallVector<Value>(loop.getResults());
}

void forOwned(OpBuilder &b, Location l, const LaneTileIds &ids, function_ref<void(B &, int64_t, int64_t)> body,
              function_ref<Value(B &, int64_t, int64_t)> extra) {
  B x{b, l};
  for (int64_t i = 0; i < ids.shape.rm; ++i)
    for (int64_t j = 0; j < ids.shape.rn; ++j) {
      Value ok = x.band(ids.rowIn[i], ids.colIn[j]);
      if (extra) ok = x.band(ok, extra(x, i, j));
      auto st = b.create<scf::IfOp>(l, ok, false);
      OpBuilder sb = st.getThenBodyBuilder();
      B u{sb, l};
      body(u, i, j);
    }
}

}  // namespace tessera::conversion::build
