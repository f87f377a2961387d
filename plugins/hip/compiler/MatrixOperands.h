//===- MatrixOperands.h - operands of the matrix-core intrinsics -*- C++ -*-===//
//
// What the MFMA (Mfma.cpp) and WMMA (Wmma.cpp) hooks build alike: a 16-bit
// operand read from LDS as the intrinsic's element type, values packed
// into the intrinsic's vectors, and i32 constants (vector positions and
// the intrinsics' immediates).
//===----------------------------------------------------------------------===//
#ifndef TESSERA_HIP_MATRIXOPERANDS_H
#define TESSERA_HIP_MATRIXOPERANDS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace tessera::hip {

inline mlir::Value i32Constant(mlir::OpBuilder &b, mlir::Location l, int64_t v) {
  return b.create<mlir::LLVM::ConstantOp>(l, b.getI32Type(), b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

/// Element `index` of `buffer` as `elem`: the buffer holds the operand's
/// type or its bits (i16), which are bitcast.
inline mlir::Value loadMatrixOperand(mlir::OpBuilder &b, mlir::Location l, mlir::Value buffer, mlir::Value index,
                                     mlir::Type elem) {
  mlir::Value x = b.create<mlir::memref::LoadOp>(l, buffer, index);
  return x.getType() == elem ? x : b.create<mlir::arith::BitcastOp>(l, elem, x).getResult();
}

/// `xs` as a vector of type `t`.
inline mlir::Value packVector(mlir::OpBuilder &b, mlir::Location l, mlir::VectorType t,
                              llvm::ArrayRef<mlir::Value> xs) {
  mlir::Value v = b.create<mlir::LLVM::UndefOp>(l, t);
  for (size_t i = 0; i < xs.size(); ++i)
    v = b.create<mlir::LLVM::InsertElementOp>(l, v, xs[i], i32Constant(b, l, static_cast<int64_t>(i)));
  return v;
}

}  // namespace tessera::hip

#endif
