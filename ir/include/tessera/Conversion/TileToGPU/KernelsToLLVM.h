//===- KernelsToLLVM.h - Tile IR kernels -> one llvm::Module each ----------===//
//
// The driver the LLVM-based GPU code generators (cuda: NVVM, hip: ROCDL)
// share; each brings only what its target needs as hooks:
//
//  schedule-to-tile           Schedule IR stages -> Tile IR
//  per kernel                 its launch arguments checked (a global buffer:
//                             identity layout, static shape or memref<?xT>;
//                             or an integer / float scalar), then
//                             hooks.beforeKernelLowering (target-specific
//                             Tile IR ops), lowerTileKernelBody, and the
//                             func.func moved into gpu.module @name {
//                             gpu.func @name kernel } with its shared_alloc
//                             buffers as workgroup attributions
//  per gpu.module             hooks.beforeConversion
//  canonicalize, cse; in each gpu.module: scf-to-cf, memref expand
//                             (float atomic max/min -> CAS loop),
//                             hooks.addConversion (the upstream gpu -> NVVM
//                             / ROCDL pass), reconcile-unrealized-casts
//  per kernel                 addBarePointerEntry, then translation to an
//                             llvm::Module (the caller registered its
//                             dialect's translation)
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_TILETOGPU_KERNELSTOLLVM_H
#define TESSERA_CONVERSION_TILETOGPU_KERNELSTOLLVM_H

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tessera::gpu_lowering {

struct GpuKernel {
  std::string name;
  std::array<int64_t, 3> group{1, 1, 1};
  std::array<int64_t, 3> grid{1, 1, 1};  // tessera_tile.grid (missing dims 1), or 1s
  int64_t staticSharedBytes = 0;          // shared_alloc total
  std::unique_ptr<llvm::Module> module;   // in the caller's context
};

struct GpuBackendHooks {
  const char *plugin = "";  // for messages: "cuda kernel argument 2 ..."
  KernelLoweringOptions kernelLowering;
  std::string kernelAttrName;  // nvvm.kernel, rocdl.kernel
  std::function<mlir::LogicalResult(mlir::func::FuncOp)> beforeKernelLowering;  // optional
  std::function<mlir::LogicalResult(mlir::gpu::GPUModuleOp)> beforeConversion;  // optional
  std::function<void(mlir::OpPassManager &)> addConversion;                      // required
  /// Optional: how many opaque 128-byte parameters kernel `name`'s entry
  /// takes after its own (BarePointerEntry.h).
  std::function<unsigned(llvm::StringRef name)> opaqueEntryParams;
};

/// Lowers every Tile IR kernel of (a clone of) `input` to LLVM IR in
/// `llvmContext`.  Diagnostics go to the module's context.
mlir::LogicalResult lowerTileKernelsToLLVM(mlir::ModuleOp input, llvm::LLVMContext &llvmContext,
                                           const GpuBackendHooks &hooks, std::vector<GpuKernel> *kernels);

/// math.fma on scalars -> llvm.intr.fma (the NVVM and ROCDL conversions of
/// MLIR 16 leave it).
mlir::LogicalResult lowerFmaToLLVM(mlir::gpu::GPUModuleOp gm, const char *plugin);

}  // namespace tessera::gpu_lowering

#endif
