//===- Tile.h - Tessera Tile IR dialect -----------------------------------===//
#ifndef TESSERA_DIALECT_TILE_IR_TILE_H
#define TESSERA_DIALECT_TILE_IR_TILE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessera/Dialect/Tile/IR/TileOpsDialect.h.inc"
#include "tessera/Dialect/Tile/IR/TileOpsEnums.h.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.h.inc"

namespace tessera::tile {
/// Memory space of group shared memory in Tile IR memrefs.
constexpr unsigned kSharedMemorySpace = 3;
/// Default per-group shared memory limit (the cpu plugin's).
constexpr int64_t kDefaultMaxSharedMemory = 65536;
/// Attribute names on kernel functions.
constexpr llvm::StringLiteral kGroupSizeAttr = "tessera_tile.group_size";
constexpr llvm::StringLiteral kMaxSharedAttr = "tessera_tile.max_shared_memory";
/// Launch grid (tile groups in x, y, z) a runner uses by default.
constexpr llvm::StringLiteral kGridAttr = "tessera_tile.grid";
/// Static lanes per group of a kernel ({1,1,1} when absent).
llvm::SmallVector<int64_t, 3> getGroupSize(mlir::Operation *kernel);
bool isSharedMemory(mlir::MemRefType type);
}  // namespace tessera::tile

#endif
