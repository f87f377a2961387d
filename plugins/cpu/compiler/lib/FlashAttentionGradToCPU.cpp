//===- FlashAttentionGradToCPU.cpp - flash_attention_grad -> cpu loops ----===//
//
// The attention backward without the Sq x Skv matrices (FlashAttention-2's
// backward, Dao 2023), per batch element of the group:
//
//   pack    Q^T * scale [d, Sqp], Q * scale [Sqp, dp], dO^T [dv, Sqp],
//           dO [Sqp, dvp] (Sqp, dp, dvp: rounded up to the query tile T,
//           padding 0; T = 2V queries, V the f32 lanes of the target's
//           vectors: 16 with AVX-512, else 8);
//           D = rowsum(dO * O);  dQ^T [d, Sqp] = 0
//   pass 1  per T queries, every key (causal: up to the last query): m =
//           running max of S, l = sum of exp(S - m)  (the softmax
//           statistics the forward had)
//   pass 2  per key block (BKV keys): dK_blk = dV_blk = 0; per T queries
//           (causal: from the tile holding the block's first key):
//             P^T  = exp(S^T - m) / l          S^T = K_blk (scale Q)^T
//             dS^T = P^T * (V_blk dO^T - D)
//             dV_blk += P^T dO,  dK_blk += dS^T (scale Q),  dQ^T += K_blk^T dS^T
//           dV, dK^T of the block stored
//   end     dQ = scale * dQ^T^T
//
// Every product is the register tile of AttentionTiles.h (6 rows x T
// lanes of vector.fma, the scalar operand broadcast from storage); the only
// score storage is one BKV x T block of P^T and one of dS^T. Queries are
// walked in tiles of T lanes inside each key block (block_q does not change
// the cpu kernel). Padded query lanes have Q = dO = 0, hence dS = 0 and no
// contribution; their dQ is not stored.
//
//===----------------------------------------------------------------------===//
#include "FlashAttentionToCPU.h"

#include <cmath>

#include "AttentionTiles.h"
#include "RegisterTranspose.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace tessera::cpu {
using namespace attention_tiles;

namespace {
int64_t roundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
}  // namespace

LogicalResult lowerFlashAttentionGrad(OpBuilder &b, schedule::FlashAttentionGradOp op,
                                      const FlashAttentionGradAccess &in, SmallVectorImpl<Value> &allocs,
                                      int64_t vectorWidth) {
  auto qt = op.getQuery().getType().cast<RankedTensorType>();
  auto kt = op.getKeyT().getType().cast<RankedTensorType>();
  auto vt_ = op.getValue().getType().cast<RankedTensorType>();
  const int64_t m0 = qt.getRank() - 2;
  const int64_t sq = qt.getDimSize(m0), d = qt.getDimSize(m0 + 1);
  const int64_t skv = kt.getDimSize(m0 + 1), dv = vt_.getDimSize(m0 + 1);
  const int64_t bkv = op.getBlockKv();
  const bool causal = op.getCausal();
  // f32 lanes of the target's vectors (AttentionTiles.h), two per query tile.
  const int64_t vec = vectorWidth, qTile = kVectorsPerTile * vec;
  const int64_t sqp = roundUp(sq, qTile), dp = roundUp(d, qTile), dvp = roundUp(dv, qTile);
  constexpr int64_t nv = kVectorsPerTile;
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  Emitter e{b, loc, VectorType::get({vectorWidth}, f32), f32};
  auto load = [&](Value mem, ValueRange idx) { return b.create<memref::LoadOp>(loc, mem, idx).getResult(); };
  auto store = [&](Value v, Value mem, ValueRange idx) { b.create<memref::StoreOp>(loc, v, mem, idx); };
  auto fmul = [&](Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y).getResult(); };
  auto fsub = [&](Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y).getResult(); };
  auto vexp = [&](Value x) { return b.create<math::ExpOp>(loc, x).getResult(); };

  // Scratch, per group (reused by its batch elements).
  // (Q^T and dO^T padded to dp and dvp rows: whole blocks for copyTransposed.)
  Value qT = e.alloc({dp, sqp}, allocs), qs = e.alloc({sqp, dp}, allocs);
  Value doT = e.alloc({dvp, sqp}, allocs), dop = e.alloc({sqp, dvp}, allocs);
  Value mRow = e.alloc({sqp}, allocs), lInv = e.alloc({sqp}, allocs), dRow = e.alloc({sqp}, allocs);
  Value dqT = e.alloc({d, sqp}, allocs);
  Value pT = e.alloc({bkv, qTile}, allocs), dsT = e.alloc({bkv, qTile}, allocs);
  Value dkAcc = e.alloc({bkv, dp}, allocs), dvAcc = e.alloc({bkv, dvp}, allocs);
  Value zeroV = e.vconst(0.0), negInfV = e.vconst(-INFINITY), zeroF = e.fconst(0.0);
  Value scale = e.fconst(op.getScale().convertToDouble());
  Type i32 = b.getI32Type();
  VectorType vi = VectorType::get({vec}, i32);
  SmallVector<int32_t> laneIdx(vec);
  for (int64_t i = 0; i < vec; ++i) laneIdx[i] = static_cast<int32_t>(i);
  Value lanes = b.create<arith::ConstantOp>(loc, vi, DenseIntElementsAttr::get(vi, ArrayRef<int32_t>(laneIdx)));
  auto toI32 = [&](Value idx) { return b.create<arith::IndexCastOp>(loc, i32, idx).getResult(); };
  // Causal: -inf where key > the lane's query (query0 + lane).
  auto mask = [&](Value acc, Value key, Value query0) {
    Value qv = b.create<arith::AddIOp>(loc, b.create<vector::BroadcastOp>(loc, vi, toI32(query0)), lanes);
    Value kv = b.create<vector::BroadcastOp>(loc, vi, toI32(key));
    Value masked = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, kv, qv);
    return b.create<arith::SelectOp>(loc, masked, negInfV, acc).getResult();
  };
  auto zeroFill = [&](Value mem, int64_t rows, int64_t cols) {
    forLoop(b, loc, e.c(0), e.c(rows), e.c(1), [&](Value r) {
      forLoop(b, loc, e.c(0), e.c(cols), e.c(vec), [&](Value c) { e.vstore(zeroV, mem, {r, c}); });
    });
  };

  forLoop(b, loc, e.c(0), in.batch, e.c(1), [&](Value h) {
    // Pack (padding 0), D = rowsum(dO * O), dQ^T = 0.
    forLoop(b, loc, e.c(0), e.c(sqp), e.c(1), [&](Value i) {
      Value real = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, e.c(sq));
      Value row = b.create<arith::MinSIOp>(loc, i, e.c(sq - 1));
      forLoop(b, loc, e.c(0), e.c(dp), e.c(1), [&](Value c) {
        Value inside = b.create<arith::AndIOp>(loc, real, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, c, e.c(d)));
        Value col = b.create<arith::MinSIOp>(loc, c, e.c(d - 1));
        Value x = b.create<arith::SelectOp>(loc, inside, fmul(load(in.q, in.qAt(h, row, col)), scale), zeroF);
        store(x, qs, {i, c});
      });
      auto sum = b.create<scf::ForOp>(loc, e.c(0), e.c(dvp), e.c(1), ValueRange{zeroF});
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(sum.getBody());
        Value c = sum.getInductionVar();
        Value inside = b.create<arith::AndIOp>(loc, real, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, c, e.c(dv)));
        Value col = b.create<arith::MinSIOp>(loc, c, e.c(dv - 1));
        Value g_ = b.create<arith::SelectOp>(loc, inside, load(in.dout, in.doutAt(h, row, col)), zeroF);
        // Outside the tensor both are 0 (an inf of O would make 0 * inf).
        Value o = b.create<arith::SelectOp>(loc, inside, load(in.out, in.outAt(h, row, col)), zeroF);
        store(g_, dop, {i, c});
        Value acc = b.create<math::FmaOp>(loc, g_, o, sum.getRegionIterArgs()[0]);
        b.create<scf::YieldOp>(loc, ValueRange{acc});
      }
      store(sum.getResult(0), dRow, {i});
    });
    // The transposed packs by blocks through registers (strided stores
    // here were a fifth of the kernel: scatters).
    copyTransposed(b, loc, vec, qs, rowMajorAt, qT, rowMajorAt, sqp, dp);
    copyTransposed(b, loc, vec, dop, rowMajorAt, doT, rowMajorAt, sqp, dvp);
    zeroFill(dqT, d, sqp);

    // Pass 1: m and 1 / l per query, over every key in register tiles.
    forLoop(b, loc, e.c(0), e.c(sqp), e.c(qTile), [&](Value it) {
      for (int64_t v = 0; v < nv; ++v) {
        e.vstore(negInfV, mRow, e.addc(it, v * vec));
        e.vstore(zeroV, lInv, e.addc(it, v * vec));  // the running sum l until the end
      }
      auto keyTile = [&](Value jt, int64_t mr) {
        SmallVector<Value> acc(mr * nv, zeroV);
        acc = e.tile(
            mr, d, acc, [&](Value k, int64_t r) { return load(in.kt, in.ktAt(h, k, e.addc(jt, r))); },
            [&](Value k, int64_t v) { return e.vload(qT, {k, e.addc(it, v * vec)}); });
        for (int64_t v = 0; v < nv; ++v) {
          Value col = e.addc(it, v * vec);
          if (causal)
            for (int64_t r = 0; r < mr; ++r) acc[r * nv + v] = mask(acc[r * nv + v], e.addc(jt, r), col);
          Value mOld = e.vload(mRow, col), mNew = mOld;
          for (int64_t r = 0; r < mr; ++r) mNew = b.create<arith::MaxFOp>(loc, mNew, acc[r * nv + v]);
          // Key 0 is in the first tile and never masked: mNew is finite.
          Value l = fmul(e.vload(lInv, col), vexp(fsub(mOld, mNew)));
          for (int64_t r = 0; r < mr; ++r) l = b.create<arith::AddFOp>(loc, l, vexp(fsub(acc[r * nv + v], mNew)));
          e.vstore(mNew, mRow, col);
          e.vstore(l, lInv, col);
        }
      };
      if (!causal) {
        e.rowTiles(skv, keyTile);
      } else {
        // Only the key tiles that start before the tile's last query + 1.
        const int64_t full = skv - skv % kRowTile;
        Value end = e.addc(it, qTile);
        if (full)
          forLoop(b, loc, e.c(0), b.create<arith::MinSIOp>(loc, e.c(full), end), e.c(kRowTile),
                  [&](Value jt) { keyTile(jt, kRowTile); });
        if (skv % kRowTile) {
          auto rest = b.create<scf::IfOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, e.c(full), end), false);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(&rest.getThenRegion().front());
          keyTile(e.c(full), skv % kRowTile);
        }
      }
      for (int64_t v = 0; v < nv; ++v) {
        Value col = e.addc(it, v * vec);
        e.vstore(b.create<arith::DivFOp>(loc, e.vconst(1.0), e.vload(lInv, col)), lInv, col);
      }
    });

    // Pass 2: one key block of `nk` keys (static) from `kb`.
    auto kvBlock = [&](Value kb, int64_t nk) {
      zeroFill(dkAcc, nk, dp);
      zeroFill(dvAcc, nk, dvp);
      // Causal: queries before the block's first key see none of its keys.
      Value first = causal ? b.create<arith::MulIOp>(loc, b.create<arith::DivUIOp>(loc, kb, e.c(qTile)), e.c(qTile)).getResult()
                           : e.c(0);
      forLoop(b, loc, first, e.c(sqp), e.c(qTile), [&](Value it) {
        // P^T and dS^T of the block, key rows in register tiles.
        e.rowTiles(nk, [&](Value jt, int64_t mr) {
          SmallVector<Value> s(mr * nv, zeroV);
          s = e.tile(
              mr, d, s, [&](Value k, int64_t r) { return load(in.kt, in.ktAt(h, k, e.add(kb, e.addc(jt, r)))); },
              [&](Value k, int64_t v) { return e.vload(qT, {k, e.addc(it, v * vec)}); });
          for (int64_t v = 0; v < nv; ++v) {
            Value col = e.addc(it, v * vec);
            Value m = e.vload(mRow, col), li = e.vload(lInv, col);
            for (int64_t r = 0; r < mr; ++r) {
              Value x = s[r * nv + v];
              if (causal) x = mask(x, e.add(kb, e.addc(jt, r)), col);
              e.vstore(fmul(vexp(fsub(x, m)), li), pT, {e.addc(jt, r), e.c(v * vec)});
            }
          }
          SmallVector<Value> dpv(mr * nv, zeroV);
          dpv = e.tile(
              mr, dv, dpv, [&](Value k, int64_t r) { return load(in.v, in.vAt(h, e.add(kb, e.addc(jt, r)), k)); },
              [&](Value k, int64_t v) { return e.vload(doT, {k, e.addc(it, v * vec)}); });
          for (int64_t v = 0; v < nv; ++v) {
            Value dd = e.vload(dRow, e.addc(it, v * vec));
            for (int64_t r = 0; r < mr; ++r) {
              Value p = e.vload(pT, {e.addc(jt, r), e.c(v * vec)});
              e.vstore(fmul(p, fsub(dpv[r * nv + v], dd)), dsT, {e.addc(jt, r), e.c(v * vec)});
            }
          }
        });
        // dV_blk += P^T dO and dK_blk += dS^T (scale Q): rows = keys,
        // lanes = T columns, contraction over the T queries.
        auto accumulate = [&](Value acc, int64_t width, Value lhs, Value rhs) {
          forLoop(b, loc, e.c(0), e.c(width), e.c(qTile), [&](Value ct) {
            e.rowTiles(nk, [&](Value jt, int64_t mr) {
              SmallVector<Value> a;
              for (int64_t r = 0; r < mr; ++r)
                for (int64_t v = 0; v < nv; ++v) a.push_back(e.vload(acc, {e.addc(jt, r), e.addc(ct, v * vec)}));
              a = e.tile(
                  mr, qTile, a, [&](Value i, int64_t r) { return load(lhs, {e.addc(jt, r), i}); },
                  [&](Value i, int64_t v) { return e.vload(rhs, {e.add(it, i), e.addc(ct, v * vec)}); });
              for (int64_t r = 0; r < mr; ++r)
                for (int64_t v = 0; v < nv; ++v) e.vstore(a[r * nv + v], acc, {e.addc(jt, r), e.addc(ct, v * vec)});
            });
          });
        };
        accumulate(dvAcc, dvp, pT, dop);
        accumulate(dkAcc, dp, dsT, qs);
        // dQ^T[c][queries] += K^T[c][keys] dS^T: rows = head dims, lanes =
        // the T queries, contraction over the block's keys.
        e.rowTiles(d, [&](Value ct, int64_t mr) {
          SmallVector<Value> a;
          for (int64_t r = 0; r < mr; ++r)
            for (int64_t v = 0; v < nv; ++v) a.push_back(e.vload(dqT, {e.addc(ct, r), e.addc(it, v * vec)}));
          a = e.tile(
              mr, nk, a, [&](Value j, int64_t r) { return load(in.kt, in.ktAt(h, e.addc(ct, r), e.add(kb, j))); },
              [&](Value j, int64_t v) { return e.vload(dsT, {j, e.c(v * vec)}); });
          for (int64_t r = 0; r < mr; ++r)
            for (int64_t v = 0; v < nv; ++v) e.vstore(a[r * nv + v], dqT, {e.addc(ct, r), e.addc(it, v * vec)});
        });
      });
      // The block's dV rows and dK^T columns.
      forLoop(b, loc, e.c(0), e.c(nk), e.c(1), [&](Value j) {
        Value key = e.add(kb, j);
        forLoop(b, loc, e.c(0), e.c(dv), e.c(1), [&](Value c) {
          store(load(dvAcc, {j, c}), in.dvalue, in.dvalueAt(h, key, c));
        });
      });
      copyTransposed(
          b, loc, vec, dkAcc, rowMajorAt, in.dkeyT,
          [&](Value c, Value j) { return in.dkeyTAt(h, c, e.add(kb, j)); }, nk, d);
    };
    const int64_t fullKV = skv - skv % bkv;
    if (fullKV) forLoop(b, loc, e.c(0), e.c(fullKV), e.c(bkv), [&](Value kb) { kvBlock(kb, bkv); });
    if (skv % bkv) kvBlock(e.c(fullKV), skv % bkv);

    // dQ = scale * dQ^T^T for the real queries.
    copyTransposed(
        b, loc, vec, dqT, rowMajorAt, in.dquery, [&](Value i, Value c) { return in.dqueryAt(h, i, c); }, d, sq,
        [&](Value x) { return e.mulConst(x, op.getScale().convertToDouble()); });
  });
  return success();
}

}  // namespace tessera::cpu
