//===- Passes.h - Tessera Tile IR passes ----------------------------------===//
#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::tile {
#define GEN_PASS_DECL
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
}  // namespace tessera::tile

#endif
