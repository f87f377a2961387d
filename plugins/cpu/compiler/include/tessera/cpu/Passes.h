//===- Passes.h - Tessera cpu code generation passes ----------------------===//
#ifndef TESSERA_CPU_PASSES_H
#define TESSERA_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::cpu {
#define GEN_PASS_DECL
#include "tessera/cpu/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tessera/cpu/Passes.h.inc"

/// The static extent a 1-D buffer argument of any length (memref<?xT>)
/// takes in the lowered kernel: it only passes the base address.
constexpr int64_t kDynamicExtent = int64_t{1} << 40;

/// Attribute the cpu lowering puts on each kernel function: number of
/// leading arguments that are inputs (the rest up to the ids are outputs).
constexpr llvm::StringLiteral kKernelAttr = "tessera.cpu_kernel";
}  // namespace tessera::cpu

#endif
