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

/// `outer` with `j` appended: the index of element j of a row.
SmallVector<Value> withLast(ArrayRef<Value> outer, Value j) {
  SmallVector<Value> v(outer.begin(), outer.end());
  v.push_back(j);
  return v;
}

/// Where a row of `n` elements stops being whole vectors of `width`
/// (0 when not vectorized: everything is the scalar remainder).
Value vectorEnd(OpBuilder &b, Location loc, Value n, int64_t width, bool vectorize) {
  if (!vectorize) return cIdx(b, loc, 0);
  return b.create<arith::SubIOp>(loc, n, b.create<arith::RemUIOp>(loc, n, cIdx(b, loc, width)));
}

/// The rows of `ext` (all dims but the last), and in each the last dim in
/// chunks of `width`, then one element at a time.  `vectorize` false:
/// elements only (layouts whose last dim is not contiguous).
template <typename Fn>
void forRowChunks(OpBuilder &b, Location loc, ArrayRef<Value> ext, bool vectorize, int64_t width,
                  Fn body) {
  forNest(b, loc, ext.drop_back(), [&](ArrayRef<Value> outer) {
    auto idx = [&](Value j) { return withLast(outer, j); };
    Value n = ext.back(), c0 = cIdx(b, loc, 0);
    Value main = vectorEnd(b, loc, n, width, vectorize);
    if (vectorize) {
      forLoop(b, loc, c0, main, cIdx(b, loc, width), [&](Value j) { body(idx(j), width); });
    }
    forLoop(b, loc, main, n, cIdx(b, loc, 1), [&](Value j) { body(idx(j), 1); });
  });
}

bool contiguousLastDim(const TensorAccess &t) { return graph::isRowMajor(t.type); }

/// A loop [lb, ub) step `step` carrying `init`; body(iv, acc) -> new acc.
template <typename Fn>
Value reduceLoop(OpBuilder &b, Location loc, Value lb, Value ub, int64_t step, Value init, Fn body) {
  auto loop = b.create<scf::ForOp>(loc, lb, ub, cIdx(b, loc, step), ValueRange{init});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  b.create<scf::YieldOp>(loc, ValueRange{body(loop.getInductionVar(), loop.getRegionIterArgs()[0])});
  return loop.getResult(0);
}

bool leavesContiguous(const FusedTree &tree, const LeafAccess &leaves) {
  return llvm::all_of(tree.leaves(), [&](Value v) { return contiguousLastDim(leaves(v)); });
}

/// The loader of a fused tree: leaves through the caller's buffers.
LeafLoader leafLoader(OpBuilder &b, Location loc, const LeafAccess &leaves,
                      const ElementOptions &elements) {
  return [&b, loc, &leaves, &elements](Value v, ArrayRef<Value> idx, int64_t w) {
    return loadChunk(b, loc, leaves(v), idx, w, elements);
  };
}

/// The epilogue's value at `idx` (width w) from the root's value there.
Value applyEpilogue(OpBuilder &b, Location loc, const FusedTree &epilogue, ArrayRef<Value> idx,
                    int64_t w, Value v, const LeafLoader &load, const ElementOptions &elements,
                    bool &ok, Value row0) {
  if (epilogue.ops.empty()) return v;
  FailureOr<Value> r = emitFusedTree(b, loc, epilogue, idx, w, v, load, elements, row0);
  if (failed(r)) {
    ok = false;
    return v;
  }
  return *r;
}

}  // namespace

LogicalResult lowerFusedTreeRows(OpBuilder &b, Location loc, const FusedTree &tree,
                                 const TensorAccess &out, const LeafAccess &leaves,
                                 ArrayRef<Value> ext, int64_t width, const ElementOptions &elements) {
  bool vectorize = width > 1 && contiguousLastDim(out) && leavesContiguous(tree, leaves) && !ext.empty();
  LeafLoader load = leafLoader(b, loc, leaves, elements);
  bool ok = true;
  auto body = [&](ArrayRef<Value> iv, int64_t w) {
    // Computed in f32 / i32, rounded to the result type by the store.
    FailureOr<Value> r = emitFusedTree(b, loc, tree, iv, w, Value(), load, elements, out.row0);
    if (failed(r)) { ok = false; return; }
    storeChunk(b, loc, out, iv, *r, elements);
  };
  if (ext.empty()) body({}, 1);  // rank 0: one element
  else forRowChunks(b, loc, ext, vectorize, width, body);
  return success(ok);
}

LogicalResult lowerSoftmaxRows(OpBuilder &b, Location loc, const TensorAccess &out,
                               const TensorAccess &in, int64_t dim, ArrayRef<Value> ext, Value rowBuf,
                               const FusedTree &epilogue, const LeafAccess &leaves, int64_t width,
                               const ElementOptions &elements) {
  LeafLoader load = leafLoader(b, loc, leaves, elements);
  bool ok = true;
  Type f32 = b.getF32Type();
  auto vf32 = VectorType::get({width}, f32);
  const bool last = dim == static_cast<int64_t>(ext.size()) - 1;
  const bool vectorize = width > 1 && last && contiguousLastDim(out) && contiguousLastDim(in) &&
                         leavesContiguous(epilogue, leaves);
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
    Value main = vectorEnd(b, loc, n, width, vectorize);
    // 1. The row max: vector partial maxima, one horizontal max, the rest.
    Value mx = splatConstant(b, loc, f32, -INFINITY);
    if (vectorize) {
      Value v = reduceLoop(b, loc, c0, main, width, splatConstant(b, loc, vf32, -INFINITY),
                           [&](Value j, Value acc) {
                             return b.create<arith::MaxFOp>(loc, acc, loadChunk(b, loc, in, idx(j), width, elements));
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
      Value v = reduceLoop(b, loc, c0, main, width, splatConstant(b, loc, vf32, 0.0), [&](Value j, Value acc) {
        Value e = b.create<math::ExpOp>(
            loc, b.create<arith::SubFOp>(loc, loadChunk(b, loc, in, idx(j), width, elements), mxv));
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
    // 3. Scale by 1/sum, apply the epilogue; the result is rounded once, here.
    Value inv = b.create<arith::DivFOp>(loc, splatConstant(b, loc, f32, 1.0), sum);
    auto finish = [&](Value j, int64_t w, Value scale) {
      Value p = b.create<arith::MulFOp>(loc, getExp(idx(j), w), scale);
      storeChunk(b, loc, out, idx(j), applyEpilogue(b, loc, epilogue, idx(j), w, p, load, elements, ok, out.row0),
                 elements);
    };
    if (vectorize) {
      Value invv = b.create<vector::BroadcastOp>(loc, vf32, inv);
      forLoop(b, loc, c0, main, cIdx(b, loc, width), [&](Value j) { finish(j, width, invv); });
    }
    forLoop(b, loc, main, n, cIdx(b, loc, 1), [&](Value j) { finish(j, 1, inv); });
  });
  return success(ok);
}

LogicalResult lowerReduceRows(OpBuilder &b, graph::ReduceOp red, const TensorAccess &out,
                              const TensorAccess &in, ArrayRef<Value> extOut, Value scratch,
                              const FusedTree &epilogue, const LeafAccess &leaves, int64_t width,
                              const ElementOptions &elements) {
  Location loc = red.getLoc();
  LeafLoader load = leafLoader(b, loc, leaves, elements);
  bool ok = true;
  auto t = in.type;
  Value c0 = cIdx(b, loc, 0);
  SmallVector<int64_t> dims(red.getDims());
  llvm::sort(dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= t.getDimSize(d);
  const graph::ReduceKind kind = red.getKind();
  const bool isMax = kind == graph::ReduceKind::max, isMin = kind == graph::ReduceKind::min;
  const bool keep = red.keepsDims();
  // In the compute type (f32 / i32), rounded once by the store (integer
  // sums wrap mod 2^32 and then to the width: the same as wrapping each step).
  // A mean sums, then divides by the count in f32.
  Type et = computeType(t.getElementType());
  auto combine = [&](Value x, Value y) -> Value {
    if (et.isa<FloatType>()) {
      if (isMax) return b.create<arith::MaxFOp>(loc, x, y);
      if (isMin) return b.create<arith::MinFOp>(loc, x, y);
      return b.create<arith::AddFOp>(loc, x, y);
    }
    if (isMax) return b.create<arith::MaxSIOp>(loc, x, y);
    if (isMin) return b.create<arith::MinSIOp>(loc, x, y);
    return b.create<arith::AddIOp>(loc, x, y);
  };
  // When the last dim is kept (a bias gradient's sum over rows), `width`
  // neighbouring outputs are reduced at once, one per vector lane: each
  // lane visits its elements in the same order as alone, so the bits are
  // the same; the input is read row by row instead of down its columns.
  const bool vectorize = width > 1 && t.getRank() >= 1 && !llvm::is_contained(dims, t.getRank() - 1) &&
                         !extOut.empty() && contiguousLastDim(in) && contiguousLastDim(out) &&
                         leavesContiguous(epilogue, leaves);
  // The reduced values of `w` outputs from `outer` on.
  auto reduceAt = [&](ArrayRef<Value> outer, int64_t w) {
    // The input index of reduced element `flat` of the output at `outer`.
    auto idx = [&](Value flat) {
      SmallVector<Value> v(t.getRank());
      Value rest = flat;
      for (size_t k = dims.size(); k-- > 0;) {
        int64_t size = t.getDimSize(dims[k]);
        if (k == 0) { v[dims[k]] = rest; break; }
        v[dims[k]] = b.create<arith::RemUIOp>(loc, rest, cIdx(b, loc, size));
        rest = b.create<arith::DivUIOp>(loc, rest, cIdx(b, loc, size));
      }
      // `outer` indexes the result: its kept dims only, or all dims
      // (keepdims: the reduced ones are 0 there).
      for (int64_t d = 0, o = 0; d < t.getRank(); ++d) {
        bool reduced = llvm::is_contained(dims, d);
        if (!reduced) v[d] = outer[o];
        if (!reduced || keep) ++o;
      }
      return v;
    };
    auto loadIn = [&](Value flat) { return loadChunk(b, loc, in, idx(flat), w, elements); };
    // Slot i of the pairwise scratch: w values at i * w.
    auto slot = [&](Value i) { return w == 1 ? i : b.create<arith::MulIOp>(loc, i, cIdx(b, loc, w)).getResult(); };
    auto loadSlot = [&](Value i) -> Value {
      if (w == 1) return b.create<memref::LoadOp>(loc, scratch, ValueRange{i});
      return b.create<vector::LoadOp>(loc, VectorType::get({w}, et), scratch, ValueRange{slot(i)});
    };
    auto storeSlot = [&](Value v, Value i) {
      if (w == 1) b.create<memref::StoreOp>(loc, v, scratch, ValueRange{i});
      else b.create<vector::StoreOp>(loc, v, scratch, ValueRange{slot(i)});
    };
    Value result;
    if (red.getOrder() == graph::AssocOrder::sequential) {
      result = reduceLoop(b, loc, cIdx(b, loc, 1), cIdx(b, loc, n), 1, loadIn(c0),
                          [&](Value j, Value acc) { return combine(acc, loadIn(j)); });
    } else {
      // Balanced tree: level s combines x[i] and x[i+s] for i % 2s == 0.
      forLoop(b, loc, c0, cIdx(b, loc, n), cIdx(b, loc, 1), [&](Value j) { storeSlot(loadIn(j), j); });
      for (int64_t s = 1; s < n; s *= 2) {
        forLoop(b, loc, c0, cIdx(b, loc, n - s), cIdx(b, loc, 2 * s), [&](Value i) {
          Value i2 = b.create<arith::AddIOp>(loc, i, cIdx(b, loc, s));
          storeSlot(combine(loadSlot(i), loadSlot(i2)), i);
        });
      }
      result = loadSlot(c0);
    }
    if (kind == graph::ReduceKind::mean)
      result = b.create<arith::DivFOp>(
          loc, result, splatConstant(b, loc, w == 1 ? et : VectorType::get({w}, et), static_cast<double>(n)));
    storeChunk(b, loc, out, outer, applyEpilogue(b, loc, epilogue, outer, w, result, load, elements, ok, out.row0),
               elements);
  };
  if (vectorize) forRowChunks(b, loc, extOut, true, width, reduceAt);
  else forNest(b, loc, extOut, [&](ArrayRef<Value> outer) { reduceAt(outer, 1); });
  return success(ok);
}

LogicalResult lowerNormRows(OpBuilder &b, Operation *op, const TensorAccess &out, const TensorAccess &in,
                            const TensorAccess &gamma, const std::optional<TensorAccess> &beta,
                            ArrayRef<Value> ext, const FusedTree &epilogue, const LeafAccess &leaves,
                            int64_t width, const ElementOptions &elements) {
  Location loc = op->getLoc();
  auto ln = dyn_cast<graph::LayerNormOp>(op);
  const double eps = ln ? ln.getEpsilon().convertToDouble()
                        : cast<graph::RmsNormOp>(op).getEpsilon().convertToDouble();
  LeafLoader load = leafLoader(b, loc, leaves, elements);
  bool ok = true;
  Type f32 = b.getF32Type();
  auto vf32 = VectorType::get({width}, f32);
  const bool vectorize = width > 1 && contiguousLastDim(out) && contiguousLastDim(in) &&
                         leavesContiguous(epilogue, leaves);
  forNest(b, loc, ext.drop_back(), [&](ArrayRef<Value> outer) {
    auto idx = [&](Value j) { return withLast(outer, j); };
    Value n = ext.back(), c0 = cIdx(b, loc, 0);
    Value main = vectorEnd(b, loc, n, width, vectorize);
    // sum over the row of term(x): vector partial sums, one horizontal
    // add, the scalar remainder.
    auto rowSum = [&](function_ref<Value(Value)> term) {
      Value sum = splatConstant(b, loc, f32, 0.0);
      if (vectorize) {
        Value v = reduceLoop(b, loc, c0, main, width, splatConstant(b, loc, vf32, 0.0), [&](Value j, Value acc) {
          return b.create<arith::AddFOp>(loc, acc, term(loadChunk(b, loc, in, idx(j), width, elements)));
        });
        sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, v);
      }
      return reduceLoop(b, loc, main, n, 1, sum, [&](Value j, Value acc) {
        return b.create<arith::AddFOp>(loc, acc, term(loadChunk(b, loc, in, idx(j), 1, elements)));
      });
    };
    Value count = b.create<arith::UIToFPOp>(loc, f32, b.create<arith::IndexCastOp>(loc, b.getI64Type(), n));
    Value mean;
    if (ln) mean = b.create<arith::DivFOp>(loc, rowSum([](Value x) { return x; }), count);
    auto meanOf = [&](Value x) -> Value {  // mean splat to x's shape
      if (!x.getType().isa<VectorType>()) return mean;
      return b.create<vector::BroadcastOp>(loc, x.getType(), mean);
    };
    Value sq = rowSum([&](Value x) -> Value {
      Value d = mean ? b.create<arith::SubFOp>(loc, x, meanOf(x)).getResult() : x;
      return b.create<arith::MulFOp>(loc, d, d);
    });
    Value inv = b.create<arith::DivFOp>(
        loc, splatConstant(b, loc, f32, 1.0),
        b.create<math::SqrtOp>(loc, b.create<arith::AddFOp>(loc, b.create<arith::DivFOp>(loc, sq, count),
                                                           splatConstant(b, loc, f32, eps))));
    auto finish = [&](Value j, int64_t w) {
      Value x = loadChunk(b, loc, in, idx(j), w, elements);
      if (mean) x = b.create<arith::SubFOp>(loc, x, meanOf(x));
      Value s = w == 1 ? inv : b.create<vector::BroadcastOp>(loc, x.getType(), inv).getResult();
      Value y = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, x, s),
                                        loadChunk(b, loc, gamma, {j}, w, elements));
      if (beta) y = b.create<arith::AddFOp>(loc, y, loadChunk(b, loc, *beta, {j}, w, elements));
      storeChunk(b, loc, out, idx(j), applyEpilogue(b, loc, epilogue, idx(j), w, y, load, elements, ok, out.row0),
                 elements);
    };
    if (vectorize) forLoop(b, loc, c0, main, cIdx(b, loc, width), [&](Value j) { finish(j, width); });
    forLoop(b, loc, main, n, cIdx(b, loc, 1), [&](Value j) { finish(j, 1); });
  });
  return success(ok);
}

}  // namespace tessera::cpu
