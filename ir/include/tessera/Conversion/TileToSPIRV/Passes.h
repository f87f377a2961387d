//===- Passes.h - Tessera Tile IR -> SPIR-V (Vulkan) ----------------------===//
#ifndef TESSERA_CONVERSION_TILETOSPIRV_PASSES_H
#define TESSERA_CONVERSION_TILETOSPIRV_PASSES_H

#include <cstdint>
#include <string>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace tessera::spv {
#define GEN_PASS_DECL
#include "tessera/Conversion/TileToSPIRV/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/TileToSPIRV/Passes.h.inc"

/// What the generated SPIR-V may assume about the device.
struct VulkanTargetOptions {
  /// f32 atomic add as OpAtomicFAddEXT (the device needs
  /// VK_EXT_shader_atomic_float: shaderBufferFloat32AtomicAdd, or the shared
  /// one for shared memory); false: a compare-exchange loop that runs on
  /// any device (docs/spirv-lowering.md).
  bool nativeFloatAtomicAdd = true;
  /// The execution model: a Vulkan GLCompute shader (false) or an OpenCL
  /// Kernel (true: Addresses, Physical64, buffers as CrossWorkgroup pointer
  /// parameters, scalars as parameters; what Level Zero's zeModuleCreate
  /// takes).
  bool openclKernel = false;
};

/// Schedule/Tile IR -> spirv.module per kernel (Vulkan, Shader, GLCompute),
/// ABI lowered and VCE triple minimized. Registered as
/// `tessera-tile-to-spirv` (option `float-atomic-add=native|cas`) by
/// registerSPIRVPipelines().
void buildTileToSPIRVPipeline(mlir::OpPassManager &pm, const VulkanTargetOptions &options = {});

/// On a Vulkan shader's ABI-lowered spirv.module: storage buffers and
/// workgroup arrays of 32-bit scalars with aligned runs of 4 accessed
/// together get a vec4 element type, each run one vec4 load or store, the
/// other accesses one component (VectorizeBufferAccess.cpp).  Part of
/// buildTileToSPIRVPipeline.
std::unique_ptr<mlir::Pass> createVectorizeBufferAccessPass();
void registerSPIRVPipelines();

/// One compiled kernel: its SPIR-V binary and launch description.
struct VulkanKernel {
  std::string name;              ///< entry point (the kernel's name)
  std::vector<uint32_t> spirv;   ///< the binary (one module, one entry point)
  int64_t groupSize[3] = {1, 1, 1};
  int64_t grid[3] = {1, 1, 1};   ///< tessera_tile.grid, or 1s
};
/// Runs the pipeline on a clone of `module` and serializes every kernel in
/// process (mlir::spirv::serialize): Vulkan shaders, or OpenCL Kernels with
/// `options.openclKernel`. Diagnostics go to the context.
mlir::LogicalResult compileForVulkan(mlir::ModuleOp module,
                                     std::vector<VulkanKernel> *kernels,
                                     const VulkanTargetOptions &options = {});
}  // namespace tessera::spv

#endif
