//===- FlashAttentionToCPU.cpp - flash_attention -> vectorized cpu loops --===//
//
// For each block of BQ query rows (a tile group owns one or more such
// blocks), the key/value rows are visited in blocks of BKV (the last one
// possibly partial, with its own static sizes) with a running
// max m, a running sum l and an accumulator O; the Sq x Skv score matrix is
// never formed (only one BKV x BQ block of it, in L1).
//
// Everything is kept with the QUERY index innermost, S^T [BKV x BQp] and
// O^T [dv x BQp], so that the V lanes of a vector<Vxf32> are V query rows
// (V = 16 with AVX-512, else 8: AttentionTiles.h):
//  - S^T = K_blk (scale * Q_blk)^T is a register-tiled product (6 key rows x
//    2V queries, 12 accumulators, vector.fma) whose scalar operand is K[j][c]
//    broadcast straight from K's storage: a col_major K^T argument is read
//    as the K it physically is, with no transposition pass and no K^T copy;
//  - rowmax S and rowsum P are elementwise arith.maxf / addf over the key
//    rows (no horizontal reductions) and m, l are vectors of queries;
//  - O^T = O^T * exp(m - m_new) + V_blk^T P^T is the same register tile with
//    broadcasts of V[j][c], the rescale folded into the accumulator load.
// Q^T is packed (and scaled) once per query block; O^T is transposed and
// divided by l once at the end (a whole block by V x V register blocks,
// RegisterTranspose.h). With heads (rank 3) the group loops over its
// batch elements. Causal: the scores of keys past the query are set to -inf
// in the register tile (a vector compare of the key with the V lanes'
// queries), and key blocks past the query block's last row are not visited.
// math.exp on vectors is expanded into a polynomial later
// (tessera-cpu-expand-vector-exp). The register tile is AttentionTiles.h.
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

LogicalResult lowerFlashAttention(OpBuilder &b, schedule::FlashAttentionOp op,
                                  const FlashAttentionAccess &in,
                                  SmallVectorImpl<Value> &allocs, int64_t vectorWidth) {
  auto qt = op.getQuery().getType().cast<RankedTensorType>();
  auto kt = op.getKeyT().getType().cast<RankedTensorType>();
  auto vt_ = op.getValue().getType().cast<RankedTensorType>();
  if (!qt.getElementType().isF32())
    return op.emitError("cpu backend: flash_attention supports f32 tensors");
  const int64_t m0 = qt.getRank() - 2;  // the first matrix dim (1 with heads)
  const int64_t d = qt.getDimSize(m0 + 1), skv = kt.getDimSize(m0 + 1), dv = vt_.getDimSize(m0 + 1);
  const bool causal = op.getCausal();
  const int64_t bq = op.getBlockQ(), bkv = op.getBlockKv();
  // Query lanes per block, padded to whole register tiles: padded queries
  // see Q = 0 (finite scores) and are never stored.
  // f32 lanes of the target's vectors (AttentionTiles.h), two per query tile.
  const int64_t vec = vectorWidth, qTile = kVectorsPerTile * vec;
  const int64_t bqp = (bq + qTile - 1) / qTile * qTile;
  constexpr int64_t nv = kVectorsPerTile;
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  Emitter e{b, loc, VectorType::get({vectorWidth}, f32), f32};

  // Scratch (per group, small): Q^T, the score block S^T (P^T in place),
  // the accumulator O^T and the per-query vectors m, m_new, l, alpha.
  Value qT = e.alloc({d, bqp}, allocs);
  Value sT = e.alloc({bkv, bqp}, allocs);
  Value oT = e.alloc({dv, bqp}, allocs);
  Value mRun = e.alloc({bqp}, allocs), mNew = e.alloc({bqp}, allocs);
  Value lSum = e.alloc({bqp}, allocs), alpha = e.alloc({bqp}, allocs);
  Value zeroV = e.vconst(0.0), negInfV = e.vconst(-INFINITY), zeroF = e.fconst(0.0);
  Value scale = e.fconst(op.getScale().convertToDouble());
  Value rows = in.rows;
  // Causal: the lanes' query offsets 0..V-1 (i32, as the key index is compared
  // with them lane by lane).
  Type i32 = b.getI32Type();
  VectorType vi = VectorType::get({vec}, i32);
  SmallVector<int32_t> lanes(vec);
  for (int64_t i = 0; i < vec; ++i) lanes[i] = static_cast<int32_t>(i);
  Value laneIdx = causal ? b.create<arith::ConstantOp>(loc, vi, DenseIntElementsAttr::get(vi, ArrayRef<int32_t>(lanes))).getResult()
                         : Value();
  auto toI32 = [&](Value idx) { return b.create<arith::IndexCastOp>(loc, i32, idx).getResult(); };

  forLoop(b, loc, e.c(0), in.batch, e.c(1), [&](Value h) {
  forLoop(b, loc, e.c(0), rows, e.c(bq), [&](Value qb) {
    Value nq = b.create<arith::MinSIOp>(loc, e.c(bq), b.create<arith::SubIOp>(loc, rows, qb));
    Value lastRow = b.create<arith::SubIOp>(loc, rows, e.c(1));
    // Q^T * scale (the scale is applied once per query, not per score). A
    // whole block (no padded lanes) goes by V x V blocks through registers
    // (its element-by-element stores were scatters); a partial one is
    // padded with zeros element by element.
    auto packElements = [&] {
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(1), [&](Value i) {
        Value row = e.add(qb, i);
        Value valid = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, nq);
        Value clamped = b.create<arith::MinSIOp>(loc, row, lastRow);
        forLoop(b, loc, e.c(0), e.c(d), e.c(1), [&](Value k) {
          Value x = b.create<memref::LoadOp>(loc, in.q, in.qAt(h, clamped, k));
          x = b.create<arith::MulFOp>(loc, x, scale);
          x = b.create<arith::SelectOp>(loc, valid, x, zeroF);
          b.create<memref::StoreOp>(loc, x, qT, ValueRange{k, i});
        });
      });
    };
    auto wholeBlock = [&](function_ref<void()> whole, function_ref<void()> partial) {
      if (bq != bqp) return partial();
      auto ifOp = b.create<scf::IfOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, nq, e.c(bqp)),
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      whole();
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      partial();
    };
    wholeBlock(
        [&] {
          copyTransposed(
              b, loc, vec, in.q, [&](Value i, Value k) { return in.qAt(h, e.add(qb, i), k); }, qT, rowMajorAt, bqp,
              d, [&](Value x) { return e.mulConst(x, op.getScale().convertToDouble()); });
        },
        packElements);
    // m = -inf, l = 0, O = 0.
    forLoop(b, loc, e.c(0), e.c(bqp), e.c(vec), [&](Value iv) {
      e.vstore(negInfV, mRun, iv);
      e.vstore(zeroV, lSum, iv);
    });
    forLoop(b, loc, e.c(0), e.c(dv), e.c(1), [&](Value cc) {
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(vec), [&](Value iv) { e.vstore(zeroV, oT, {cc, iv}); });
    });

    // One key/value block of `nk` keys (static): full blocks in a loop, then
    // the partial last block (Skv % BKV keys) with its own static trip counts.
    auto kvBlock = [&](Value kb, int64_t nk) {
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(vec), [&](Value iv) {
        e.vstore(e.vload(mRun, iv), mNew, iv);
      });
      // S^T = K_blk Q^T; m_new = max(m, rowmax S) while the tile is in registers.
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(qTile), [&](Value it) {
        e.rowTiles(nk, [&](Value jt, int64_t mr) {
          SmallVector<Value> acc(mr * nv, zeroV);
          acc = e.tile(
              mr, d, acc,
              [&](Value k, int64_t r) {
                return b.create<memref::LoadOp>(loc, in.kt, in.ktAt(h, k, e.add(kb, e.addc(jt, r))));
              },
              [&](Value k, int64_t v) { return e.vload(qT, {k, e.addc(it, v * vec)}); });
          if (causal) {
            // Keys past the query get -inf (lane by lane: the query of lane
            // l is row0 + qb + col + l).
            for (int64_t v = 0; v < nv; ++v) {
              Value q0 = toI32(e.add(in.row0, e.add(qb, e.addc(it, v * vec))));
              Value qv = b.create<arith::AddIOp>(loc, b.create<vector::BroadcastOp>(loc, vi, q0), laneIdx);
              for (int64_t r = 0; r < mr; ++r) {
                Value key = b.create<vector::BroadcastOp>(loc, vi, toI32(e.add(kb, e.addc(jt, r))));
                Value masked = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, key, qv);
                acc[r * nv + v] = b.create<arith::SelectOp>(loc, masked, negInfV, acc[r * nv + v]);
              }
            }
          }
          for (int64_t v = 0; v < nv; ++v) {
            Value col = e.addc(it, v * vec);
            Value mx = acc[v];
            for (int64_t r = 0; r < mr; ++r) {
              e.vstore(acc[r * nv + v], sT, {e.addc(jt, r), col});
              if (r) mx = b.create<arith::MaxFOp>(loc, mx, acc[r * nv + v]);
            }
            e.vstore(b.create<arith::MaxFOp>(loc, e.vload(mNew, col), mx), mNew, col);
          }
        });
      });
      // P = exp(S - m_new) in place; l = l * exp(m - m_new) + rowsum P.
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(vec), [&](Value iv) {
        Value mn = e.vload(mNew, iv);
        Value a = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, e.vload(mRun, iv), mn));
        auto sum = b.create<scf::ForOp>(loc, e.c(0), e.c(nk), e.c(1), ValueRange{zeroV});
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(sum.getBody());
          Value j = sum.getInductionVar();
          Value p = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, e.vload(sT, {j, iv}), mn));
          e.vstore(p, sT, {j, iv});
          b.create<scf::YieldOp>(loc, ValueRange{b.create<arith::AddFOp>(loc, sum.getRegionIterArgs()[0], p).getResult()});
        }
        e.vstore(b.create<vector::FMAOp>(loc, e.vload(lSum, iv), a, sum.getResult(0)), lSum, iv);
        e.vstore(mn, mRun, iv);
        e.vstore(a, alpha, iv);
      });
      // O^T = O^T * alpha + V_blk^T P^T.
      forLoop(b, loc, e.c(0), e.c(bqp), e.c(qTile), [&](Value it) {
        Value al[nv];
        for (int64_t v = 0; v < nv; ++v) al[v] = e.vload(alpha, e.addc(it, v * vec));
        e.rowTiles(dv, [&](Value ct, int64_t mr) {
          SmallVector<Value> acc;
          for (int64_t r = 0; r < mr; ++r)
            for (int64_t v = 0; v < nv; ++v)
              acc.push_back(b.create<arith::MulFOp>(
                  loc, e.vload(oT, {e.addc(ct, r), e.addc(it, v * vec)}), al[v]));
          acc = e.tile(
              mr, nk, acc,
              [&](Value j, int64_t r) {
                return b.create<memref::LoadOp>(loc, in.v, in.vAt(h, e.add(kb, j), e.addc(ct, r)));
              },
              [&](Value j, int64_t v) { return e.vload(sT, {j, e.addc(it, v * vec)}); });
          for (int64_t r = 0; r < mr; ++r)
            for (int64_t v = 0; v < nv; ++v)
              e.vstore(acc[r * nv + v], oT, {e.addc(ct, r), e.addc(it, v * vec)});
        });
      });
    };
    const int64_t fullKV = skv - skv % bkv;
    if (!causal) {
      if (fullKV) forLoop(b, loc, e.c(0), e.c(fullKV), e.c(bkv), [&](Value kb) { kvBlock(kb, bkv); });
      if (skv % bkv) kvBlock(e.c(fullKV), skv % bkv);
    } else {
      // Only the key blocks that start at or before the block's last query
      // (keys past it are masked for every row). The first block always
      // runs: key 0 is unmasked for every lane, so m is finite after it.
      Value keyEnd = e.add(in.row0, e.add(qb, nq));  // last query + 1
      if (fullKV)
        forLoop(b, loc, e.c(0), b.create<arith::MinSIOp>(loc, e.c(fullKV), keyEnd), e.c(bkv),
                [&](Value kb) { kvBlock(kb, bkv); });
      if (skv % bkv) {
        Value needed = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, e.c(fullKV), keyEnd);
        auto partial = b.create<scf::IfOp>(loc, needed, false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&partial.getThenRegion().front());
        kvBlock(e.c(fullKV), skv % bkv);
      }
    }

    // O = O^T^T / l for the block's real queries: a whole block divides O^T
    // by l in vectors of queries, then moves V x V blocks through registers.
    auto storeElements = [&] {
      forLoop(b, loc, e.c(0), nq, e.c(1), [&](Value i) {
        Value l = b.create<memref::LoadOp>(loc, lSum, ValueRange{i});
        Value inv = b.create<arith::DivFOp>(loc, e.fconst(1.0), l);
        Value row = e.add(qb, i);
        forLoop(b, loc, e.c(0), e.c(dv), e.c(1), [&](Value cc) {
          Value o = b.create<memref::LoadOp>(loc, oT, ValueRange{cc, i});
          b.create<memref::StoreOp>(loc, b.create<arith::MulFOp>(loc, o, inv), in.out, in.outAt(h, row, cc));
        });
      });
    };
    wholeBlock(
        [&] {
          forLoop(b, loc, e.c(0), e.c(bqp), e.c(vec), [&](Value iv) {
            Value inv = b.create<arith::DivFOp>(loc, e.vconst(1.0), e.vload(lSum, iv));
            forLoop(b, loc, e.c(0), e.c(dv), e.c(1), [&](Value cc) {
              e.vstore(b.create<arith::MulFOp>(loc, e.vload(oT, {cc, iv}), inv), oT, {cc, iv});
            });
          });
          copyTransposed(b, loc, vec, oT, rowMajorAt, in.out, [&](Value i, Value cc) { return in.outAt(h, e.add(qb, i), cc); },
                         dv, bqp);
        },
        storeElements);
  });
  });
  return success();
}

}  // namespace tessera::cpu
