//===- LoopBuilder.h - small helpers shared by the cpu lowerings ----------===//
#ifndef TESSERA_LIB_TARGET_CPU_LOOPBUILDER_H
#define TESSERA_LIB_TARGET_CPU_LOOPBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace tessera::cpu {

inline mlir::Value cIdx(mlir::OpBuilder &b, mlir::Location loc, int64_t v) {
  return b.create<mlir::arith::ConstantIndexOp>(loc, v);
}

/// Builds `for (iv = lb; iv < ub; iv += step) body(iv)` without iter_args.
template <typename Fn>
void forLoop(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lb,
             mlir::Value ub, mlir::Value step, Fn body) {
  auto loop = b.create<mlir::scf::ForOp>(loc, lb, ub, step);
  mlir::OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

/// Nested loops over [0, ubs[i]) (row-major order), body(ivs).
template <typename Fn>
void forNest(mlir::OpBuilder &b, mlir::Location loc,
             llvm::ArrayRef<mlir::Value> ubs, Fn body,
             llvm::SmallVector<mlir::Value> ivs = {}) {
  if (ubs.empty()) {
    body(ivs);
    return;
  }
  forLoop(b, loc, cIdx(b, loc, 0), ubs.front(), cIdx(b, loc, 1),
          [&](mlir::Value iv) {
            auto next = ivs;
            next.push_back(iv);
            forNest(b, loc, ubs.drop_front(), body, next);
          });
}

}  // namespace tessera::cpu

#endif
