//===- RegisterTranspose.h - V x V transposes through vector registers -*- C++ -*-===//
//
// Copying a matrix into its transpose element by element is the slowest
// loop of a kernel: LLVM vectorizes the strided side into scatters (11
// cycles per 8 lanes here), or leaves scalar strided stores. These helpers
// move V x V blocks instead: V vector loads along the source's rows, the
// transpose in registers, V vector stores along the destination's rows.
// Used by the packing of a transposed matmul operand (MatmulToCPU.cpp) and
// the attention backward's packs and stores (FlashAttentionGradToCPU.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_REGISTERTRANSPOSE_H
#define TESSERA_LIB_TARGET_CPU_REGISTERTRANSPOSE_H

#include "LoopBuilder.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera::cpu {

/// Transposes the V x V matrix held in `rows` (V vectors of V lanes, V a
/// power of two) in place: log2 V stages of V two-source shuffles, the
/// stage of block size h swapping the off-diagonal h x h blocks of each
/// 2h x 2h block (x86: one vpermt2ps or vshufps each).
inline void transposeVectors(mlir::OpBuilder &b, mlir::Location loc, llvm::SmallVectorImpl<mlir::Value> &rows) {
  const int64_t V = static_cast<int64_t>(rows.size());
  for (int64_t h = V / 2; h >= 1; h /= 2) {
    llvm::SmallVector<int64_t> lo, hi;  // lane e from p[e] / q[e - h]; p[e + h] / q[e]
    for (int64_t e = 0; e < V; ++e) {
      lo.push_back(e & h ? V + e - h : e);
      hi.push_back(e & h ? V + e : e + h);
    }
    for (int64_t i = 0; i < V; ++i) {
      if (i & h) continue;
      mlir::Value p = rows[i], q = rows[i + h];
      rows[i] = b.create<mlir::vector::ShuffleOp>(loc, p, q, lo);
      rows[i + h] = b.create<mlir::vector::ShuffleOp>(loc, p, q, hi);
    }
  }
}

/// The memref indices of element (row, col) of a matrix stored row by row
/// (col the innermost, contiguous index).
using MatrixAt = std::function<llvm::SmallVector<mlir::Value>(mlir::Value row, mlir::Value col)>;

/// The MatrixAt of a plain 2-D memref.
inline llvm::SmallVector<mlir::Value> rowMajorAt(mlir::Value row, mlir::Value col) { return {row, col}; }

/// dst(c, r) = f(src(r, c)) for r < rows, c < cols (f32 memrefs; f null:
/// the value itself): blocks of V x V through registers, the edges past
/// the last whole block element by element.
inline void copyTransposed(mlir::OpBuilder &b, mlir::Location loc, int64_t V, mlir::Value src, const MatrixAt &srcAt,
                           mlir::Value dst, const MatrixAt &dstAt, int64_t rows, int64_t cols,
                           llvm::function_ref<mlir::Value(mlir::Value)> f = nullptr) {
  using namespace mlir;
  auto c = [&](int64_t v) { return cIdx(b, loc, v); };
  auto addc = [&](Value x, int64_t y) { return y ? b.create<arith::AddIOp>(loc, x, c(y)).getResult() : x; };
  auto apply = [&](Value v) { return f ? f(v) : v; };
  auto vt = VectorType::get({V}, b.getF32Type());
  const int64_t rowsFull = rows / V * V, colsFull = cols / V * V;
  if (rowsFull && colsFull)
    forLoop(b, loc, c(0), c(rowsFull), c(V), [&](Value r0) {
      forLoop(b, loc, c(0), c(colsFull), c(V), [&](Value c0) {
        SmallVector<Value> block;
        for (int64_t l = 0; l < V; ++l) block.push_back(b.create<vector::LoadOp>(loc, vt, src, srcAt(addc(r0, l), c0)));
        transposeVectors(b, loc, block);
        for (int64_t l = 0; l < V; ++l) b.create<vector::StoreOp>(loc, apply(block[l]), dst, dstAt(addc(c0, l), r0));
      });
    });
  auto element = [&](Value r, Value col) {
    b.create<memref::StoreOp>(loc, apply(b.create<memref::LoadOp>(loc, src, srcAt(r, col))), dst, dstAt(col, r));
  };
  if (colsFull < cols && rowsFull)
    forLoop(b, loc, c(0), c(rowsFull), c(1), [&](Value r) {
      forLoop(b, loc, c(colsFull), c(cols), c(1), [&](Value col) { element(r, col); });
    });
  if (rowsFull < rows)
    forLoop(b, loc, c(rowsFull), c(rows), c(1), [&](Value r) {
      forLoop(b, loc, c(0), c(cols), c(1), [&](Value col) { element(r, col); });
    });
}

}  // namespace tessera::cpu

#endif
