//===- Mfma.cpp - tessera_tile.wavefront_mma on CDNA matrix cores ---------===//
#include "Mfma.h"

#include "MatrixOperands.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"

using namespace mlir;

namespace tessera::hip {

bool hasMfma(llvm::StringRef chipset) {
  return chipset == "gfx908" || chipset == "gfx90a" || chipset.startswith("gfx94");
}

FailureOr<SmallVector<Value>> lowerWavefrontMmaToMfma(OpBuilder &b, tile::WavefrontMmaOp op, ArrayRef<Value> acc,
                                                      Value lane, StringRef chipset) {
  Location l = op.getLoc();
  const int64_t m = op.getM(), n = op.getN(), lda = op.getLda(), ldb = op.getLdb();
  const int64_t tilesM = m / 32, tilesN = n / 32;
  const bool i8 = op.getOperandType().isInteger(8);
  // i8 ops are 16 deep: gfx940's v_mfma_i32_32x32x16_i8 takes the whole
  // step (lane p holds k = 8*(p/32) .. +7, eight i8 in an i64), gfx908 /
  // gfx90a take it in two v_mfma_i32_32x32x8i8 (four i8 in an i32).
  const bool deepI8 = i8 && chipset.startswith("gfx94");
  const bool bf16 = op.getOperandType().isBF16(), f32Operands = op.getOperandType().isF32();
  // gfx908 has bf16 matrix cores only with 2 values per lane (k = 4); f32
  // takes one value per lane (k = 2).
  const bool bf16Pairs = bf16 && chipset == "gfx908";
  const int64_t depth = i8 ? 16 : 8;                                        // the op's k
  const int64_t perLane = f32Operands ? 1 : bf16Pairs ? 2 : deepI8 ? 8 : 4;  // k values per lane and instruction
  const int64_t steps = depth / (2 * perLane);                              // instructions per op and tile
  Type i16 = b.getI16Type(), f32 = b.getF32Type();
  Type operandElem = f32Operands ? f32 : i8 ? b.getI8Type() : bf16 ? i16 : b.getF16Type();
  auto operandVec = VectorType::get({perLane}, operandElem);
  auto accVec = VectorType::get({16}, i8 ? Type(b.getI32Type()) : f32);

  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(l, v); };
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
  auto mul = [&](Value x, int64_t v) -> Value { return b.create<arith::MulIOp>(l, x, c(v)); };
  auto pos = [&](int64_t i) { return i32Constant(b, l, i); };
  auto element = [&](Value buffer, Value index) { return loadMatrixOperand(b, l, buffer, index, operandElem); };
  // A lane's k values of one instruction: f32 operands are scalars
  // (v_mfma_f32_32x32x2f32 takes one value each), the others vectors.
  auto fragment = [&](ArrayRef<Value> xs) -> Value {
    if (f32Operands) return xs.front();
    Value v = packVector(b, l, operandVec, xs);
    if (!i8) return v;
    return b.create<LLVM::BitcastOp>(l, deepI8 ? b.getI64Type() : b.getI32Type(), v);
  };

  Value row = b.create<arith::RemUIOp>(l, lane, c(32));                // A's row, B's column
  Value kq = mul(b.create<arith::DivUIOp>(l, lane, c(32)), perLane);  // first k of the lane
  Value aLane = add(op.getAIndex(), add(mul(row, lda), kq));
  Value bLane = add(op.getBIndex(), add(mul(kq, ldb), row));
  // fragments[step][tile]: the lane's k values of that step.
  SmallVector<SmallVector<Value>> aFrag(steps), bFrag(steps);
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t k0 = s * 2 * perLane;
    for (int64_t tm = 0; tm < tilesM; ++tm) {
      SmallVector<Value> xs;
      for (int64_t j = 0; j < perLane; ++j) xs.push_back(element(op.getA(), add(aLane, c(32 * tm * lda + k0 + j))));
      aFrag[s].push_back(fragment(xs));
    }
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      SmallVector<Value> xs;
      for (int64_t j = 0; j < perLane; ++j)
        xs.push_back(element(op.getB(), add(bLane, c((k0 + j) * ldb + 32 * tn))));
      bFrag[s].push_back(fragment(xs));
    }
  }

  SmallVector<Value> r(acc.begin(), acc.end());
  Value zero = pos(0);  // cbsz, abid, blgp: no broadcast between blocks
  for (int64_t tm = 0; tm < tilesM; ++tm)
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      const int64_t v0 = (tm * tilesN + tn) * 16;
      Value d = packVector(b, l, accVec, ArrayRef<Value>(r).slice(v0, 16));
      for (int64_t s = 0; s < steps; ++s) {
        SmallVector<Value> operands{aFrag[s][tm], bFrag[s][tn], d, zero, zero, zero};
        if (deepI8)
          d = b.create<ROCDL::mfma_i32_32x32x16_i8>(l, accVec, operands);
        else if (i8)
          d = b.create<ROCDL::mfma_i32_32x32x8i8>(l, accVec, operands);
        else if (f32Operands)
          d = b.create<ROCDL::mfma_f32_32x32x2f32>(l, accVec, operands);
        else if (bf16Pairs)
          d = b.create<ROCDL::mfma_f32_32x32x4bf16>(l, accVec, operands);
        else if (bf16)
          d = b.create<ROCDL::mfma_f32_32x32x8bf16_1k>(l, accVec, operands);
        else
          d = b.create<ROCDL::mfma_f32_32x32x8f16>(l, accVec, operands);
      }
      for (int64_t u = 0; u < 16; ++u) r[v0 + u] = b.create<LLVM::ExtractElementOp>(l, d, pos(u));
    }
  return r;
}

}  // namespace tessera::hip
