//===- RowOpsToCPU.cpp - elementwise ops and softmax in vectors -----------===//
#include "RowOpsToCPU.h"

#include <cmath>

#include "LoopBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace tessera::cpu {
namespace {

/// `w` consecutive innermost elements of `t` from `idx` (w == 1: a scalar),
/// widened to the compute type.
Value loadChunk(OpBuilder &b, Location loc, const TensorAccess &t, ArrayRef<Value> idx,
                int64_t w, const ElementOptions &elements) {
  Type elem = t.type.getElementType();
  Value raw = w == 1 ? b.create<memref::LoadOp>(loc, t.mem, t.at(idx)).getResult()
                     : b.create<vector::LoadOp>(loc, VectorType::get({w}, storageType(elem)), t.mem,
                                                t.at(idx))
                           .getResult();
  return widen(b, loc, raw, elem, elements);
}

/// Stores a compute-type scalar or vector, rounded to `t`'s element type.
void storeChunk(OpBuilder &b, Location loc, const TensorAccess &t, ArrayRef<Value> idx, Value v,
                const ElementOptions &elements) {
  Value raw = narrow(b, loc, v, t.type.getElementType(), elements);
  if (raw.getType().isa<VectorType>()) b.create<vector::StoreOp>(loc, raw, t.mem, t.at(idx));
  else b.create<memref::StoreOp>(loc, raw, t.mem, t.at(idx));
}

/// The rows of `ext` (all dims but the last), and in each the last dim in
/// chunks of kRowVector, then one element at a time.  `vectorize` false:
/// elements only (layouts whose last dim is not contiguous).
template <typename Fn>
void forRowChunks(OpBuilder &b, Location loc, ArrayRef<Value> ext, bool vectorize, Fn body) {
  forNest(b, loc, ext.drop_back(), [&](ArrayRef<Value> outer) {
    auto idx = [&](Value j) {
      SmallVector<Value> v(outer.begin(), outer.end());
      v.push_back(j);
      return v;
    };
    Value n = ext.back(), c0 = cIdx(b, loc, 0);
    Value main = c0;
    if (vectorize) {
      main = b.create<arith::SubIOp>(loc, n, b.create<arith::RemUIOp>(loc, n, cIdx(b, loc, kRowVector)));
      forLoop(b, loc, c0, main, cIdx(b, loc, kRowVector), [&](Value j) { body(idx(j), kRowVector); });
    }
    forLoop(b, loc, main, n, cIdx(b, loc, 1), [&](Value j) { body(idx(j), 1); });
  });
}

bool contiguousLastDim(const TensorAccess &t) {
  graph::LayoutAttr l = graph::getLayout(t.type);
  return !l || l.isRowMajor();
}

/// A loop [lb, ub) step `step` carrying `init`; body(iv, acc) -> new acc.
template <typename Fn>
Value reduceLoop(OpBuilder &b, Location loc, Value lb, Value ub, int64_t step, Value init, Fn body) {
  auto loop = b.create<scf::ForOp>(loc, lb, ub, cIdx(b, loc, step), ValueRange{init});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  b.create<scf::YieldOp>(loc, ValueRange{body(loop.getInductionVar(), loop.getRegionIterArgs()[0])});
  return loop.getResult(0);
}

}  // namespace

LogicalResult lowerElementwiseRows(OpBuilder &b, Operation *op, const TensorAccess &out,
                                   const TensorAccess &lhs, const std::optional<TensorAccess> &rhs,
                                   ArrayRef<Value> ext, const ElementOptions &elements) {
  Location loc = op->getLoc();
  bool vectorize = contiguousLastDim(out) && contiguousLastDim(lhs) &&
                   (!rhs || contiguousLastDim(*rhs)) && !ext.empty();
  bool ok = true;
  if (ext.empty()) {  // rank 0: one element
    SmallVector<Value> ins{loadChunk(b, loc, lhs, {}, 1, elements)};
    if (rhs) ins.push_back(loadChunk(b, loc, *rhs, {}, 1, elements));
    FailureOr<Value> r = emitElementwise(b, loc, op, ins);
    if (failed(r)) return failure();
    storeChunk(b, loc, out, {}, *r, elements);
    return success();
  }
  forRowChunks(b, loc, ext, vectorize, [&](ArrayRef<Value> iv, int64_t w) {
    SmallVector<Value> ins{loadChunk(b, loc, lhs, iv, w, elements)};
    if (rhs) {
      int64_t rank = rhs->type.getRank();
      Value x = loadChunk(b, loc, *rhs, iv.take_back(rank), rank == 0 ? 1 : w, elements);
      if (rank == 0 && w > 1) x = b.create<vector::BroadcastOp>(loc, VectorType::get({w}, x.getType()), x);
      ins.push_back(x);
    }
    // Computed in f32 / i32, rounded to the result type by the store.
    FailureOr<Value> r = emitElementwise(b, loc, op, ins);
    if (failed(r)) { ok = false; return; }
    storeChunk(b, loc, out, iv, *r, elements);
  });
  return success(ok);
}

void lowerSoftmaxRows(OpBuilder &b, Location loc, const TensorAccess &out, const TensorAccess &in,
                      int64_t dim, ArrayRef<Value> ext, Value rowBuf, const ElementOptions &elements) {
  Type f32 = b.getF32Type();
  auto vf32 = VectorType::get({kRowVector}, f32);
  const bool last = dim == static_cast<int64_t>(ext.size()) - 1;
  const bool vectorize = last && contiguousLastDim(out) && contiguousLastDim(in);
  SmallVector<Value> outerExt(ext.begin(), ext.end());
  outerExt.erase(outerExt.begin() + dim);
  // The exponentials: in `out` (f32 results) or in the f32 row buffer.
  auto putExp = [&](ArrayRef<Value> idx, Value e) {
    if (!rowBuf) return storeChunk(b, loc, out, idx, e, elements);
    if (e.getType().isa<VectorType>()) b.create<vector::StoreOp>(loc, e, rowBuf, ValueRange{idx[dim]});
    else b.create<memref::StoreOp>(loc, e, rowBuf, ValueRange{idx[dim]});
  };
  auto getExp = [&](ArrayRef<Value> idx, int64_t w) -> Value {
    if (!rowBuf) return loadChunk(b, loc, out, idx, w, elements);
    if (w == 1) return b.create<memref::LoadOp>(loc, rowBuf, ValueRange{idx[dim]});
    return b.create<vector::LoadOp>(loc, vf32, rowBuf, ValueRange{idx[dim]});
  };
  forNest(b, loc, outerExt, [&](ArrayRef<Value> outer) {
    // The full index with `j` along `dim`.
    auto idx = [&](Value j) {
      SmallVector<Value> v(outer.begin(), outer.end());
      v.insert(v.begin() + dim, j);
      return v;
    };
    Value n = ext[dim], c0 = cIdx(b, loc, 0);
    Value main = vectorize ? b.create<arith::SubIOp>(loc, n, b.create<arith::RemUIOp>(loc, n, cIdx(b, loc, kRowVector))).getResult()
                           : c0;
    // 1. The row max: vector partial maxima, one horizontal max, the rest.
    Value mx = splatConstant(b, loc, f32, -INFINITY);
    if (vectorize) {
      Value v = reduceLoop(b, loc, c0, main, kRowVector, splatConstant(b, loc, vf32, -INFINITY),
                           [&](Value j, Value acc) {
                             return b.create<arith::MaxFOp>(loc, acc, loadChunk(b, loc, in, idx(j), kRowVector, elements));
                           });
      mx = b.create<vector::ReductionOp>(loc, vector::CombiningKind::MAXF, v);
    }
    mx = reduceLoop(b, loc, main, n, 1, mx, [&](Value j, Value acc) {
      return b.create<arith::MaxFOp>(loc, acc, loadChunk(b, loc, in, idx(j), 1, elements));
    });
    // 2. exp(x - max), kept, and their sum.
    Value sum = splatConstant(b, loc, f32, 0.0);
    if (vectorize) {
      Value mxv = b.create<vector::BroadcastOp>(loc, vf32, mx);
      Value v = reduceLoop(b, loc, c0, main, kRowVector, splatConstant(b, loc, vf32, 0.0), [&](Value j, Value acc) {
        Value e = b.create<math::ExpOp>(
            loc, b.create<arith::SubFOp>(loc, loadChunk(b, loc, in, idx(j), kRowVector, elements), mxv));
        putExp(idx(j), e);
        return b.create<arith::AddFOp>(loc, acc, e);
      });
      sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, v);
    }
    sum = reduceLoop(b, loc, main, n, 1, sum, [&](Value j, Value acc) {
      Value e = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, loadChunk(b, loc, in, idx(j), 1, elements), mx));
      putExp(idx(j), e);
      return b.create<arith::AddFOp>(loc, acc, e);
    });
    // 3. Scale by 1/sum; the result is rounded once, here.
    Value inv = b.create<arith::DivFOp>(loc, splatConstant(b, loc, f32, 1.0), sum);
    if (vectorize) {
      Value invv = b.create<vector::BroadcastOp>(loc, vf32, inv);
      forLoop(b, loc, c0, main, cIdx(b, loc, kRowVector), [&](Value j) {
        storeChunk(b, loc, out, idx(j), b.create<arith::MulFOp>(loc, getExp(idx(j), kRowVector), invv), elements);
      });
    }
    forLoop(b, loc, main, n, cIdx(b, loc, 1), [&](Value j) {
      storeChunk(b, loc, out, idx(j), b.create<arith::MulFOp>(loc, getExp(idx(j), 1), inv), elements);
    });
  });
}

}  // namespace tessera::cpu
