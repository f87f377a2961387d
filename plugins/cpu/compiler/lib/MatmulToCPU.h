//===- MatmulToCPU.h - matmul + epilogue -> BLIS loop nest ------*- C++ -*-===//
#ifndef TESSERA_LIB_TARGET_CPU_MATMULTOCPU_H
#define TESSERA_LIB_TARGET_CPU_MATMULTOCPU_H

#include <functional>
#include <optional>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "FusedTree.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::cpu {

// The cpu kernels store and compute element types as every backend does.
using namespace tessera::elements;

/// One tensor as the kernel stores it: a memref of the storage type
/// (ElementTypes.h) and a function from logical indices (all dims) to the
/// memref's indices (layouts and the group's row offset included), so that
/// the emitter does not depend on how ScheduleToCPU stores values.
struct TensorAccess {
  using IndexFn = std::function<llvm::SmallVector<mlir::Value>(llvm::ArrayRef<mlir::Value>)>;
  mlir::Value mem;
  mlir::RankedTensorType type;   // logical type
  IndexFn at;
  // Where dim 0 of the indices `at` takes is local to this group: the
  // group's first row (null: the indices are the tensor's own).
  mlir::Value row0;
};

/// Where a B packed once for all tile groups lives in the kernel's scratch
/// buffer (ScheduleToCPU's planSharedB): sliver s = (jc / nc * panelsK +
/// pc / kcMax) * slivers + jr / NR has its state word at flagBase + s (the
/// number of groups that reached it, plus 2^30 once packed) and its kcMax x NR values at
/// dataBase + s * kcMax * NR.
struct SharedBLayout {
  int64_t nc = 0, kcMax = 0, slivers = 0, panelsK = 0, flagBase = 0, dataBase = 0;
};

struct MatmulAccess {
  TensorAccess a, b, c;          // lhs, rhs, the chain's result
  /// The tensors the fused epilogue reads (FusedTree::leaves).
  std::function<TensorAccess(mlir::Value)> operand;
  /// Extent of dim 0 of the result that this group computes (rows of a
  /// rank-2 matmul, the leading batch dim otherwise), and every value it
  /// can take over the groups (rank 2: for the remainder-row tiles).
  mlir::Value dim0;
  llvm::SmallVector<int64_t> dim0Counts;
  /// Packing buffers of the accumulator type (f32, or i32 for integer
  /// matmuls), large enough for these tile sizes (packBufferSizes).
  mlir::Value packA, packB;
  int64_t MC = 144, NC = 4096, KC = 256, MR = 6, NR = 16;
  /// Lanes of the micro-kernel's vectors: 8 (AVX2) or 16 (AVX-512); NR is
  /// a multiple of it.
  int64_t lanes = 8;
  ElementOptions elements;
  /// B shared by the groups (set when every group reads all of it): the
  /// state words (memref<? x i32>), the packed slivers (memref<? x acc>),
  /// their layout, and this group's id (index), which staggers where each
  /// group starts in a panel so that groups running at once pack
  /// different slivers.
  struct SharedB {
    mlir::Value flags, data;
    SharedBLayout layout;
    mlir::Value groupId;
  };
  std::optional<SharedB> shared;
};

/// Elements of the A and B packing buffers a matmul needs with these tiles.
std::pair<int64_t, int64_t> packBufferSizes(graph::MatmulOp mm, int64_t MC, int64_t NC,
                                            int64_t KC, int64_t MR, int64_t NR);

/// Emits `mm` followed by its fused elementwise epilogue (`epilogue`, whose
/// root is `mm`'s result; casts included) at the builder's insertion point:
/// the tree is applied to the registers after the last K slice and its
/// output stored to `access.c`.  Scratch buffers are appended to `allocs`
/// (the caller frees them).
mlir::LogicalResult lowerMatmul(mlir::OpBuilder &b, graph::MatmulOp mm,
                                const FusedTree &epilogue,
                                const MatmulAccess &access,
                                llvm::SmallVectorImpl<mlir::Value> &allocs);

}  // namespace tessera::cpu

#endif
