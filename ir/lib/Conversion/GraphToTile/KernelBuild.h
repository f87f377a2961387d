//===- KernelBuild.h - shorthands for building Tile IR kernel bodies ------===//
//
// Shared by the hand-built attention kernels (AttentionKernel.cpp,
// AttentionGradKernel.cpp): index and f32 arithmetic at one insertion
// point, per-lane strided loops, f32 shared-memory buffers, the dims of an
// attention op.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_KERNELBUILD_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_KERNELBUILD_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::conversion::build {

/// Builder shorthands over one insertion point.
struct B {
  mlir::OpBuilder &b;
  mlir::Location l;
  mlir::Value c(int64_t v) { return b.create<mlir::arith::ConstantIndexOp>(l, v); }
  mlir::Value f(double v) {
    return b.create<mlir::arith::ConstantOp>(l, b.getF32FloatAttr(static_cast<float>(v)));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AddIOp>(l, x, y); }
  mlir::Value mul(mlir::Value x, int64_t y) { return b.create<mlir::arith::MulIOp>(l, x, c(y)); }
  mlir::Value div(mlir::Value x, int64_t y) { return b.create<mlir::arith::DivUIOp>(l, x, c(y)); }
  mlir::Value rem(mlir::Value x, int64_t y) { return b.create<mlir::arith::RemUIOp>(l, x, c(y)); }
  mlir::Value lt(mlir::Value x, int64_t y) {
    return b.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::ult, x, c(y));
  }
  mlir::Value min(mlir::Value x, int64_t y) { return b.create<mlir::arith::MinUIOp>(l, x, c(y)); }
  mlir::Value load(mlir::Value m, mlir::Value i) { return b.create<mlir::memref::LoadOp>(l, m, i); }
  void store(mlir::Value v, mlir::Value m, mlir::Value i) { b.create<mlir::memref::StoreOp>(l, v, m, i); }
  mlir::Value fadd(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AddFOp>(l, x, y); }
  mlir::Value fsub(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::SubFOp>(l, x, y); }
  mlir::Value fmul(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MulFOp>(l, x, y); }
  mlir::Value fmax(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::MaxFOp>(l, x, y); }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return b.create<mlir::arith::SelectOp>(l, c, x, y);
  }
  mlir::Value band(mlir::Value x, mlir::Value y) { return b.create<mlir::arith::AndIOp>(l, x, y); }
};

/// for (e = lane; e < n; e += lanes) body(e): no barrier inside (lanes
/// take different trip counts).
inline void laneLoop(mlir::OpBuilder &b, mlir::Location l, mlir::Value lane, int64_t lanes, int64_t n,
                     llvm::function_ref<void(mlir::OpBuilder &, mlir::Value)> body) {
  B x{b, l};
  auto loop = b.create<mlir::scf::ForOp>(l, lane, x.c(n), x.c(lanes));
  mlir::OpBuilder lb = mlir::OpBuilder::atBlockBegin(loop.getBody());
  body(lb, loop.getInductionVar());
}

/// `n` f32 of the group's shared memory.
inline mlir::Value sharedF32(mlir::OpBuilder &b, mlir::Location l, int64_t n) {
  auto ty = mlir::MemRefType::get({n}, b.getF32Type(), mlir::AffineMap(),
                                  b.getI64IntegerAttr(tessera::tile::kSharedMemorySpace));
  return b.create<tessera::tile::SharedAllocOp>(l, ty, uint64_t{0});
}

/// The dims of an attention (forward or backward) from its Q and V: one
/// matrix, or a leading batch (heads) dim; its block sizes.
struct AttentionDims {
  int64_t batch, sq, d, skv, dv, bq, bkv;
  AttentionDims(mlir::Value query, mlir::Value value, int64_t blockQ, int64_t blockKv) {
    auto q = query.getType().cast<mlir::ShapedType>();
    auto v = value.getType().cast<mlir::ShapedType>();
    const int64_t m0 = q.getRank() - 2;  // heads first when rank 3
    batch = m0 ? q.getDimSize(0) : 1;
    sq = q.getDimSize(m0);
    d = q.getDimSize(m0 + 1);
    skv = v.getDimSize(m0);
    dv = v.getDimSize(m0 + 1);
    bq = blockQ;
    bkv = blockKv;
  }
  int64_t qBlocks() const { return (sq + bq - 1) / bq; }
  int64_t kvBlocks() const { return (skv + bkv - 1) / bkv; }
};

}  // namespace tessera::conversion::build

#endif
