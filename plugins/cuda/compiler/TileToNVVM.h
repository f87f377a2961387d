//===- TileToNVVM.h - Tile IR kernels -> LLVM IR for NVPTX -----------------===//
//
// The MLIR half of the cuda compiler part: Schedule/Tile IR kernels ->
// gpu.func (KernelLowering, NVVM forms) -> NVVM + LLVM dialects (upstream
// convert-gpu-to-nvvm) -> one llvm::Module per kernel, whose entry takes
// one pointer per buffer argument (the launch ABI every Tessera plugin
// uses) and scalars by value.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_TILETONVVM_H
#define TESSERA_CUDA_TILETONVVM_H

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/Conversion/TileToGPU/KernelsToLLVM.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tessera::cuda {

// A kernel's launch description and its LLVM IR.
using NVVMKernel = gpu_lowering::GpuKernel;

struct NVVMOptions {
  /// Mesh-scope atomics become atom.sys; false: a diagnostic naming the op
  /// (a device whose atomics on host memory race with the host's).
  bool meshAtomics = true;
  /// sm_80 and up: cp_async becomes cp.async (else a synchronous copy).
  bool asyncCopies = false;
  /// sm_80 and up: subgroup_mma becomes ldmatrix + mma.sync (MmaSync.h);
  /// else each lane computes its elements with FMAs.
  bool tensorCores = false;
  /// sm_90a: warpgroup_mma becomes wgmma.mma_async (Wgmma.h), and a kernel
  /// that has one fences the async proxy after each cp.async wait; else
  /// each lane computes its elements with FMAs.
  bool wgmma = false;
  /// sm_90a: tile_load_async becomes TMA copies with an mbarrier pipeline
  /// (Tma.h); else 16-byte cp.async copies per lane.
  bool tma = false;
};

/// Lowers every Tile IR kernel of (a clone of) `module` to LLVM IR in
/// `llvmContext`.  Diagnostics go to the module's context.
/// `tensorMaps`: per kernel with TMA copies, its tensor-map parameters
/// (Tma.h; the tensor_map.hpp format, one line each).
mlir::LogicalResult lowerTileToNVVM(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                                    const NVVMOptions &options, std::vector<NVVMKernel> *kernels,
                                    std::map<std::string, std::vector<std::string>> *tensorMaps);

}  // namespace tessera::cuda

#endif
