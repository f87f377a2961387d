//===- MmaSync.cpp - tessera_tile.subgroup_mma on tensor cores -----------===//
#include "MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tessera::cuda {
namespace {

/// Index arithmetic of the fragment addresses (both mma.sync forms).
struct IndexArith {
  OpBuilder &b;
  Location l;
  Value c(int64_t v) const { return b.create<arith::ConstantIndexOp>(l, v); }
  Value add(Value x, Value y) const { return b.create<arith::AddIOp>(l, x, y); }
  Value mul(Value x, int64_t v) const { return b.create<arith::MulIOp>(l, x, c(v)); }
};

/// `count` 32-bit registers from one ldmatrix at the shared address `addr`
/// (i32, this lane's row).
SmallVector<Value> ldmatrix(OpBuilder &b, Location l, Value addr, int count, bool trans) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> regs(count, b.getI32Type());
  std::string outs, constraints;
  for (int i = 0; i < count; ++i) {
    outs += (i ? ",$" : "$") + std::to_string(i);
    constraints += "=r,";
  }
  constraints += "r";
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (trans ? ".trans" : "") +
                     ".shared.b16 {" + outs + "}, [$" + std::to_string(count) + "];";
  Type result = count == 1 ? regs[0] : LLVM::LLVMStructType::getLiteral(ctx, regs);
  auto asmOp = b.create<LLVM::InlineAsmOp>(l, result, ValueRange{addr}, text, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> r;
  for (int i = 0; i < count; ++i)
    r.push_back(count == 1 ? asmOp.getResult(0)
                           : b.create<LLVM::ExtractValueOp>(l, asmOp.getResult(0), ArrayRef<int64_t>{i}).getResult());
  return r;
}

}  // namespace

Value sharedAddress(OpBuilder &b, Location l, Value m, Value index, int64_t elemBytes) {
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(l, m);
  Value bytes = b.create<arith::MulIOp>(l, index, b.create<arith::ConstantIndexOp>(l, elemBytes));
  return b.create<arith::IndexCastOp>(l, b.getI32Type(), b.create<arith::AddIOp>(l, base, bytes));
}

namespace {

/// i8 x i8 -> i32 (mma.sync.m16n8k16.s32.s8.s8.s32): per lane (g = lane/4,
/// t = lane%4) A's a0 holds row g, k 4t..4t+3 (one 32-bit shared load), a1
/// row g+8; B's b0 holds k 4t..4t+3 of column g (four bytes, packed). The
/// accumulators are laid out as the f32 ones.
SmallVector<Value> mmaSyncI8(OpBuilder &b, tile::SubgroupMmaOp op, ArrayRef<Value> acc, Value lane) {
  Location l = op.getLoc();
  const int64_t m = op.getM(), n = op.getN(), lda = op.getLda(), ldb = op.getLdb();
  const int64_t tilesM = m / 16, tilesN = n / 8;
  const IndexArith ix{b, l};
  Type i32 = b.getI32Type();
  Value g = b.create<arith::DivUIOp>(l, lane, ix.c(4)), t4 = ix.mul(b.create<arith::RemUIOp>(l, lane, ix.c(4)), 4);
  auto load32 = [&](Value index) -> Value {  // four consecutive bytes of A (4-byte aligned)
    return b.create<LLVM::InlineAsmOp>(l, i32, ValueRange{sharedAddress(b, l, op.getA(), index, 1)},
                                       "ld.shared.b32 $0, [$1];", "=r,r", /*has_side_effects=*/true,
                                       /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  };
  SmallVector<std::pair<Value, Value>> a;
  Value aLane = ix.add(op.getAIndex(), ix.add(ix.mul(g, lda), t4));
  for (int64_t tm = 0; tm < tilesM; ++tm)
    a.push_back({load32(ix.add(aLane, ix.c(16 * tm * lda))), load32(ix.add(aLane, ix.c((16 * tm + 8) * lda)))});
  SmallVector<Value> bFrag;
  Value bLane = ix.add(op.getBIndex(), ix.add(ix.mul(t4, ldb), g));
  for (int64_t tn = 0; tn < tilesN; ++tn) {
    Value packed = b.create<arith::ConstantIntOp>(l, 0, 32);
    for (int64_t i = 0; i < 4; ++i) {
      Value byte = b.create<memref::LoadOp>(l, op.getB(), ix.add(bLane, ix.c(i * ldb + 8 * tn)));
      Value wide = b.create<arith::ExtUIOp>(l, i32, byte);
      packed = b.create<arith::OrIOp>(
          l, packed, b.create<arith::ShLIOp>(l, wide, b.create<arith::ConstantIntOp>(l, 8 * i, 32)));
    }
    bFrag.push_back(packed);
  }
  const std::string text =
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {$0,$1,$2,$3}, {$4,$5}, {$6}, {$7,$8,$9,$10};";
  Type quad = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t tm = 0; tm < tilesM; ++tm)
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      const int64_t v = (tm * tilesN + tn) * 4;
      SmallVector<Value> operands{a[tm].first, a[tm].second, bFrag[tn]};
      for (int e = 0; e < 4; ++e) operands.push_back(r[v + e]);
      auto mma = b.create<LLVM::InlineAsmOp>(l, quad, operands, text, "=r,=r,=r,=r,r,r,r,r,r,r,r",
                                             /*has_side_effects=*/false, /*is_align_stack=*/false,
                                             LLVM::AsmDialectAttr(), ArrayAttr());
      for (int e = 0; e < 4; ++e)
        r[v + e] = b.create<LLVM::ExtractValueOp>(l, mma.getResult(0), ArrayRef<int64_t>{e});
    }
  return r;
}

}  // namespace

FailureOr<SmallVector<Value>> lowerSubgroupMmaToMmaSync(OpBuilder &b, tile::SubgroupMmaOp op, ArrayRef<Value> acc,
                                                        Value lane) {
  if (op.getOperandType().isInteger(8)) return mmaSyncI8(b, op, acc, lane);
  Location l = op.getLoc();
  const int64_t m = op.getM(), n = op.getN(), lda = op.getLda(), ldb = op.getLdb();
  const int64_t tilesM = m / 16, tilesN = n / 8;
  const IndexArith ix{b, l};
  Value row = b.create<arith::RemUIOp>(l, lane, ix.c(16));
  Value half = ix.mul(b.create<arith::DivUIOp>(l, lane, ix.c(16)), 8);  // 0 or 8

  // A: rows 16*tm + lane%16, columns lane/16 * 8 .. +7.
  SmallVector<SmallVector<Value>> a;
  Value aLane = ix.add(op.getAIndex(), ix.add(ix.mul(row, lda), half));
  for (int64_t tm = 0; tm < tilesM; ++tm)
    a.push_back(ldmatrix(b, l, sharedAddress(b, l, op.getA(), ix.add(aLane, ix.c(tm * 16 * lda)), 2), 4, false));
  // B: rows (k) lane%16; 16 columns per x4 load, the 8-column tiles 2p
  // (lanes 0-15's matrices) and 2p+1 (lanes 16-31's).
  SmallVector<std::pair<Value, Value>> bFrag(tilesN);
  Value bRow = ix.add(op.getBIndex(), ix.mul(row, ldb));
  for (int64_t tn = 0; tn < tilesN; tn += 2) {
    if (tn + 1 < tilesN) {
      auto r = ldmatrix(b, l, sharedAddress(b, l, op.getB(), ix.add(bRow, ix.add(half, ix.c(tn * 8))), 2), 4, true);
      bFrag[tn] = {r[0], r[1]};
      bFrag[tn + 1] = {r[2], r[3]};
    } else {
      auto r = ldmatrix(b, l, sharedAddress(b, l, op.getB(), ix.add(bRow, ix.c(tn * 8)), 2), 2, true);
      bFrag[tn] = {r[0], r[1]};
    }
  }

  const std::string type = op.getOperandType().isBF16() ? "bf16" : "f16";
  const std::string text = "mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type +
                           ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
  const std::string constraints = "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f";
  Type f32 = b.getF32Type();
  Type quad = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t tm = 0; tm < tilesM; ++tm)
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      const int64_t v = (tm * tilesN + tn) * 4;
      SmallVector<Value> operands(a[tm].begin(), a[tm].end());
      operands.push_back(bFrag[tn].first);
      operands.push_back(bFrag[tn].second);
      for (int e = 0; e < 4; ++e) operands.push_back(r[v + e]);
      auto mma = b.create<LLVM::InlineAsmOp>(l, quad, operands, text, constraints, /*has_side_effects=*/false,
                                             /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
      for (int e = 0; e < 4; ++e)
        r[v + e] = b.create<LLVM::ExtractValueOp>(l, mma.getResult(0), ArrayRef<int64_t>{e});
    }
  return r;
}

}  // namespace tessera::cuda
