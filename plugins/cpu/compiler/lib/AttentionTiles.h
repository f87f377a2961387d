//===- AttentionTiles.h - register tiles of the cpu attention kernels -*- C++ -*-===//
//
// The builder shorthands and the vector register tile shared by the
// forward (FlashAttentionToCPU.cpp) and backward
// (FlashAttentionGradToCPU.cpp) attention kernels: acc[r][v] +=
// broadcast(a(k, r)) * b(k, v), `r` over up to kRowTile scalar rows and `v`
// over the kVectorsPerTile vectors of one query tile. The vectors are the
// target's width (Emitter::vt): 16 f32 lanes with AVX-512, else 8 (AVX2);
// with 8 on an AVX-512 machine the kernels ran at 0.56x (attention forward
// at 1024: 2.13 against 1.19 ms). Not thread-safe (one per kernel being
// built).
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_ATTENTIONTILES_H
#define TESSERA_LIB_TARGET_CPU_ATTENTIONTILES_H

#include "LoopBuilder.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::cpu::attention_tiles {

using namespace mlir;

constexpr int64_t kVectorsPerTile = 2;  // queries per register tile: 2 vectors
constexpr int64_t kRowTile = 6;  // key rows / value columns per register tile
constexpr int64_t kUnroll = 4;   // contraction steps per loop trip

struct Emitter {
  OpBuilder &b;
  Location loc;
  VectorType vt;  // f32 x the target's lanes
  Type f32;

  int64_t vec() const { return vt.getNumElements(); }
  int64_t qTile() const { return kVectorsPerTile * vec(); }

  Value c(int64_t v) { return cIdx(b, loc, v); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value addc(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value fconst(double v) { return b.create<arith::ConstantOp>(loc, f32, b.getF32FloatAttr(v)); }
  Value vconst(double v) {
    return b.create<arith::ConstantOp>(loc, vt, SplatElementsAttr::get(vt, b.getF32FloatAttr(v)));
  }
  /// x (an f32 or a vector of them) times the constant v.
  Value mulConst(Value x, double v) {
    return b.create<arith::MulFOp>(loc, x, x.getType().isa<VectorType>() ? vconst(v) : fconst(v));
  }
  Value vload(Value mem, ValueRange idx) { return b.create<vector::LoadOp>(loc, vt, mem, idx); }
  void vstore(Value v, Value mem, ValueRange idx) { b.create<vector::StoreOp>(loc, v, mem, idx); }
  Value alloc(ArrayRef<int64_t> shape, SmallVectorImpl<Value> &allocs) {
    Value m = b.create<memref::AllocOp>(loc, MemRefType::get(shape, f32), b.getI64IntegerAttr(64));
    allocs.push_back(m);
    return m;
  }

  /// acc[r * 2 + v] += broadcast(a(k, r)) * bvec(k, v) for k in [0, K):
  /// the register tile of both products.  The k loop is unrolled kUnroll
  /// times by hand (Graph IR kernels are compiled without LLVM's unroller).
  SmallVector<Value> tile(int64_t mr, int64_t K, SmallVector<Value> acc,
                          function_ref<Value(Value, int64_t)> a,
                          function_ref<Value(Value, int64_t)> bvec) {
    constexpr int64_t nv = kVectorsPerTile;
    auto step = [&](Value k, SmallVector<Value> &acc) {
      Value bv[nv];
      for (int64_t v = 0; v < nv; ++v) bv[v] = bvec(k, v);
      for (int64_t r = 0; r < mr; ++r) {
        Value ab = b.create<vector::BroadcastOp>(loc, vt, a(k, r));
        for (int64_t v = 0; v < nv; ++v)
          acc[r * nv + v] = b.create<vector::FMAOp>(loc, ab, bv[v], acc[r * nv + v]);
      }
    };
    auto loop = [&](int64_t lb, int64_t ub, int64_t unroll) {
      if (lb >= ub) return;
      auto f = b.create<scf::ForOp>(loc, c(lb), c(ub), c(unroll), acc);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(f.getBody());
      SmallVector<Value> cur(f.getRegionIterArgs());
      for (int64_t u = 0; u < unroll; ++u) step(addc(f.getInductionVar(), u), cur);
      b.create<scf::YieldOp>(loc, cur);
      acc.assign(f.getResults().begin(), f.getResults().end());
    };
    int64_t main = K - K % kUnroll;
    loop(0, main, kUnroll);
    loop(main, K, 1);
    return acc;
  }

  /// body(row0, mr) over [0, n) in register tiles of kRowTile rows: an
  /// scf.for over the full tiles, then one (static) remainder tile.
  void rowTiles(int64_t n, function_ref<void(Value, int64_t)> body) {
    int64_t full = n - n % kRowTile;
    if (full) forLoop(b, loc, c(0), c(full), c(kRowTile), [&](Value r0) { body(r0, kRowTile); });
    if (n % kRowTile) body(c(full), n % kRowTile);
  }
};


}  // namespace tessera::cpu::attention_tiles

#endif
