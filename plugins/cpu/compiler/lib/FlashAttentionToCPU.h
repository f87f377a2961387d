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
  /// (batch element, row, column) -> memref indices; the batch element is
  /// ignored by single matrices.
  using IndexFn = std::function<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::Value, mlir::Value)>;
  mlir::Value q, kt, v, out;     // memrefs of Q [Sq, d], K^T [d, Skv], V, O
  IndexFn qAt, ktAt, vAt, outAt;
  mlir::Value batch;             // batch elements this group computes (1: a single matrix)
  mlir::Value rows;              // query rows this group computes per batch element
  mlir::Value row0;              // the first one's index in the sequence (the causal mask's query index)
};

/// Emits the online-softmax loop nest for `op` at the builder's insertion
/// point, in vectors of `vectorWidth` f32 lanes (the target's: 16 with
/// AVX-512, else 8).  Scratch buffers are appended to `allocs` (the caller
/// frees them).
mlir::LogicalResult lowerFlashAttention(mlir::OpBuilder &b,
                                        schedule::FlashAttentionOp op,
                                        const FlashAttentionAccess &access,
                                        llvm::SmallVectorImpl<mlir::Value> &allocs, int64_t vectorWidth);

/// How the kernel reaches the operands and results of one
/// flash_attention_grad (index functions as FlashAttentionAccess).
struct FlashAttentionGradAccess {
  using IndexFn = FlashAttentionAccess::IndexFn;
  mlir::Value q, kt, v, out, dout;   // Q [Sq, d], K^T [d, Skv], V [Skv, dv], O and dO [Sq, dv]
  mlir::Value dquery, dkeyT, dvalue; // their cotangents' memrefs
  IndexFn qAt, ktAt, vAt, outAt, doutAt, dqueryAt, dkeyTAt, dvalueAt;
  mlir::Value batch;                 // batch elements this group computes (1: a single matrix)
};

/// Emits the blockwise backward of `op` (FlashAttentionGradToCPU.cpp): every
/// query and key of each of the group's batch elements, in vectors of
/// `vectorWidth` f32 lanes.
mlir::LogicalResult lowerFlashAttentionGrad(mlir::OpBuilder &b, schedule::FlashAttentionGradOp op,
                                            const FlashAttentionGradAccess &access,
                                            llvm::SmallVectorImpl<mlir::Value> &allocs, int64_t vectorWidth);

}  // namespace tessera::cpu

#endif
