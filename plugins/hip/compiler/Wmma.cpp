//===- Wmma.cpp - tessera_tile.wave32_mma on RDNA3's WMMA -----------------===//
#include "Wmma.h"

#include "MatrixOperands.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tessera::hip {

bool hasWmma(StringRef chipset) { return chipset.startswith("gfx11"); }

FailureOr<SmallVector<Value>> lowerWave32MmaToWmma(OpBuilder &b, tile::Wave32MmaOp op, ArrayRef<Value> acc,
                                                   Value lane) {
  Location l = op.getLoc();
  const int64_t m = op.getM(), n = op.getN(), lda = op.getLda(), ldb = op.getLdb();
  const int64_t tilesM = m / 16, tilesN = n / 16;
  const bool bf16 = op.getOperandType().isBF16();
  // i8: 16 values of a row packed in four i32, i32 accumulators; the
  // intrinsic takes each operand's signedness and a clamp flag (off: the
  // sums wrap, as the op defines).
  const bool i8 = op.getOperandType().isInteger(8);
  Type operandElem = i8 ? Type(b.getI8Type()) : bf16 ? Type(b.getI16Type()) : Type(b.getF16Type());
  auto operandVec = VectorType::get({16}, operandElem);
  auto accVec = VectorType::get({8}, i8 ? Type(b.getI32Type()) : Type(b.getF32Type()));
  const char *callee = i8     ? "llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32"
                       : bf16 ? "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32"
                              : "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32";

  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(l, v); };
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(l, x, y); };
  auto pos = [&](int64_t i) { return i32Constant(b, l, i); };
  auto element = [&](Value buffer, Value index) { return loadMatrixOperand(b, l, buffer, index, operandElem); };
  // A lane's 16 operand values as the intrinsic takes them.
  auto fragment = [&](ArrayRef<Value> xs) -> Value {
    Value v = packVector(b, l, operandVec, xs);
    if (!i8) return v;
    return b.create<LLVM::BitcastOp>(l, VectorType::get({4}, b.getI32Type()), v);
  };

  Value row = b.create<arith::RemUIOp>(l, lane, c(16));  // A's row, B's column
  Value aLane = add(op.getAIndex(), b.create<arith::MulIOp>(l, row, c(lda)));
  Value bLane = add(op.getBIndex(), row);
  SmallVector<Value> aFrag, bFrag;
  for (int64_t tm = 0; tm < tilesM; ++tm) {
    SmallVector<Value> xs;
    for (int64_t k = 0; k < 16; ++k) xs.push_back(element(op.getA(), add(aLane, c(16 * tm * lda + k))));
    aFrag.push_back(fragment(xs));
  }
  for (int64_t tn = 0; tn < tilesN; ++tn) {
    SmallVector<Value> xs;
    for (int64_t k = 0; k < 16; ++k) xs.push_back(element(op.getB(), add(bLane, c(k * ldb + 16 * tn))));
    bFrag.push_back(fragment(xs));
  }
  SmallVector<Value> r(acc.begin(), acc.end());
  for (int64_t tm = 0; tm < tilesM; ++tm)
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      const int64_t v0 = (tm * tilesN + tn) * 8;
      Value d = packVector(b, l, accVec, ArrayRef<Value>(r).slice(v0, 8));
      if (i8) {
        auto flag = [&](bool v) { return b.create<LLVM::ConstantOp>(l, b.getI1Type(), b.getBoolAttr(v)).getResult(); };
        SmallVector<Value> args{flag(true), aFrag[tm], flag(true), bFrag[tn], d, flag(false)};  // signed, signed, no clamp
        d = b.create<LLVM::CallOp>(l, TypeRange{accVec}, callee, args).getResult();
      } else {
        d = b.create<LLVM::CallOp>(l, TypeRange{accVec}, callee, ValueRange{aFrag[tm], bFrag[tn], d}).getResult();
      }
      for (int64_t u = 0; u < 8; ++u) r[v0 + u] = b.create<LLVM::ExtractElementOp>(l, d, pos(u));
    }
  return r;
}

void declareIntrinsics(gpu::GPUModuleOp gm) {
  SmallVector<LLVM::CallOp> calls;
  gm.walk([&](LLVM::CallOp call) {
    auto callee = call.getCallee();
    if (callee && callee->startswith("llvm.amdgcn.") && !gm.lookupSymbol(*callee)) calls.push_back(call);
  });
  OpBuilder b = OpBuilder::atBlockBegin(gm.getBody());
  for (LLVM::CallOp call : calls) {
    StringRef name = *call.getCallee();
    if (gm.lookupSymbol(name)) continue;  // declared for an earlier call
    Type result = call.getNumResults() ? call.getResult().getType() : LLVM::LLVMVoidType::get(gm.getContext());
    SmallVector<Type> params(call.getOperandTypes().begin(), call.getOperandTypes().end());
    b.create<LLVM::LLVMFuncOp>(gm.getLoc(), name, LLVM::LLVMFunctionType::get(result, params));
  }
}

}  // namespace tessera::hip
