//===- FlashAttentionToCPU.h - flash_attention -> vector loops -*- C++ -*-===//
#ifndef TESSERA_LIB_TARGET_CPU_FLASHATTENTIONTOCPU_H
#define TESSERA_LIB_TARGET_CPU_FLASHATTENTIONTOCPU_H

#include <functional>

#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::cpu {

/// How the kernel reaches the operands of one flash_attention op.  The
/// index functions map a logical (row, column) of the tensor to the indices
/// of its memref (layouts and this group's row offset included), so the
/// lowering does not depend on how ScheduleToCPU stores values.
struct FlashAttentionAccess {
  using IndexFn = std::function<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::Value)>;
  mlir::Value q, kt, v, out;     // memrefs of Q [Sq, d], K^T [d, Skv], V, O
  IndexFn qAt, ktAt, vAt, outAt;
  mlir::Value rows;              // query rows this group computes (index)
};

/// Emits the online-softmax loop nest for `op` at the builder's insertion
/// point.  Scratch buffers are appended to `allocs` (the caller frees them).
mlir::LogicalResult lowerFlashAttention(mlir::OpBuilder &b,
                                        schedule::FlashAttentionOp op,
                                        const FlashAttentionAccess &access,
                                        llvm::SmallVectorImpl<mlir::Value> &allocs);

}  // namespace tessera::cpu

#endif
