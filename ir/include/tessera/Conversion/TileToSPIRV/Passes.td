#ifndef TESSERA_SPIRV_PASSES
#define TESSERA_SPIRV_PASSES
include "mlir/Pass/PassBase.td"

def TileToGPU : Pass<"tessera-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "prepare Tile IR kernels for SPIR-V: gpu ids, scalarized vectors, one gpu.module per kernel";
  let description = [{
    Each kernel (a func.func with tessera_tile.group_size) becomes a
    `gpu.func` kernel in its own `gpu.module` that carries the Vulkan target
    environment. Group/lane ids become `gpu.block_id` / `gpu.thread_id`,
    group counts `gpu.grid_dim`, lane counts constants, `shared_alloc` a
    `memref.alloc` in memory space 3 (Workgroup), `barrier` `gpu.barrier`,
    `cp_async` a synchronous element copy (commit/wait vanish), subgroup
    reductions and xor/idx shuffles SPIR-V GroupNonUniform ops (up/down are
    left to tessera-gpu-to-spirv). 1-D vectors and 2-D mma fragments
    (SPIR-V has at most 4 components) are scalarized, loop-carried ones
    included; `mma` becomes per-lane FMAs. Buffers that float atomic
    max/min (or, with float-atomic-add=cas, add) touch are retyped to
    integers of the same width for a compare-exchange loop. Buffer arguments get
    `spirv.interface_var_abi` (set 0, bindings 0..n-1 in argument order) and
    the kernel `spirv.entry_point_abi` with the group size as LocalSize.
  }];
  let options = [
    Option<"floatAtomicAdd", "float-atomic-add", "std::string", /*default=*/"\"native\"",
           "f32 atomic_rmw add: 'native' (OpAtomicFAddEXT: the device needs "
           "VK_EXT_shader_atomic_float) or 'cas' (a compare-exchange loop on the "
           "buffer's bits, like float max/min: any device)">,
    Option<"clientApi", "client-api", "std::string", /*default=*/"\"vulkan\"",
           "'vulkan' (Shader, GLCompute, StorageBuffer bindings and push constants) or "
           "'opencl' (Kernel, Physical64, CrossWorkgroup pointer parameters: Level Zero)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::spirv::SPIRVDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def GPUToSPIRV : Pass<"tessera-gpu-to-spirv", "::mlir::ModuleOp"> {
  let summary = "gpu.module kernels -> spirv.module (structured control flow, push constants)";
  let description = [{
    The upstream GPU, SCF (structured selection/loop), arith, math, memref
    and func patterns in one full conversion, plus `tessera_tile.atomic_rmw`
    -> SPIR-V atomics (scope tile/group -> Workgroup, device/mesh -> Device;
    Workgroup scope for shared memory; float max/min as compare-exchange
    loops) and shuffle up/down -> GroupNonUniformShuffleUp/Down. Scalar kernel arguments become the
    members of one PushConstant block (in argument order, naturally aligned
    offsets). Run `map-memref-spirv-storage-class` first and
    `spirv-lower-abi-attrs`, `spirv-update-vce` after.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def SerializeSPIRV : Pass<"tessera-serialize-spirv", "::mlir::ModuleOp"> {
  let summary = "serialize the spirv.module to a SPIR-V binary file";
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "path of the .spv to write (required)">
  ];
}
#endif
