// What the cuda plugin compiles for (Compiler_GetTargets): "cuda", Tile IR
// -> NVVM -> PTX (LLVM 16's NVPTX back end) -> cubin (the toolkit's
// ptxas), one cubin per kernel, returned as an "archive:cubin" executable
// (tessera/kernel_archive.hpp).  Shared by the plugin (answers without
// loading MLIR) and its compiler part (compiler/).
#pragma once

#include "tessera/plugin.h"

namespace tessera::cuda {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "ptxas", TS_VALUE_STRING, "",
     "the ptxas that turns PTX into cubins; \"\" searches $CUDA_HOME/bin, "
     "/usr/local/cuda/bin, then PATH"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "libdevice", TS_VALUE_STRING, "",
     "the toolkit's libdevice.10.bc (CUDA math functions); \"\" searches "
     "$CUDA_HOME/nvvm/libdevice and /usr/local/cuda/nvvm/libdevice"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "ptxas_opt_level", TS_VALUE_INT64, "3",
     "ptxas -O level (0..3)"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "tma", TS_VALUE_BOOL, "true",
     "sm_90a: stage tile loads with TMA copies and mbarriers; false: 16-byte cp.async copies "
     "per lane, as before sm_90a"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "mesh_atomics", TS_VALUE_BOOL, "true",
     "lower mesh-scope atomics (PTX atom.sys); with a device, whether its atomics on host "
     "memory are atomic with the host's (CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)"},
};

// The GPU schedule (docs/gpu-lowering.md), as for vulkan: 128x128 GEMM tiles
// of 16x16 lanes with 8x8 registers each; attention as matmul + softmax +
// matmul unless attention=1.  bf16 / f16 matmuls whose shape the tile
// divides run on subgroup matrix units (mma=sync: tensor cores from sm_80,
// 8 subgroups of 64x32 outputs, K staged 32 at a time whatever tile-k says).
// tile-k=16 is the f32 GEMM's: 32 made mlp 1.08 ms against 0.93 on an H100.
// On sm_90a the same matmuls run on warpgroups (mma=wgmma: wgmma.mma_async
// from 128-byte swizzled stages, 64 rows per warpgroup), warp-specialized:
// a producer warpgroup issues the TMA copies while the others multiply.
inline constexpr const char* kSchedule =
    "tile-m=128 tile-n=128 tile-k=16 micro-m=8 micro-n=8 mma=sync sm_90a:mma=wgmma sm_90a:warp-specialize=1 clamp-tiles=0 "
    "merge-matmul-chains=0 attention=0 attn-block-q=64 attn-block-kv=32 attn-shared-kib=32";

// Architectures the generic tier compiles for (LLVM 16's NVPTX knows up to
// sm_90 and PTX 7.8; sm_90a is sm_90 code with the PTX header raised to
// ".target sm_90a" for ptxas).
inline constexpr const char* kArchs = "sm_70,sm_75,sm_80,sm_86,sm_87,sm_89,sm_90,sm_90a";

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "cuda", kArchs, /*default_arch=*/"sm_80",
     /*executable_format=*/"archive:cubin", /*emit_kinds=*/"ptx,cubin", TS_IR_LEVEL_TILE, kSchedule,
     kCompileOptions, sizeof(kCompileOptions) / sizeof(kCompileOptions[0]), /*build_id=*/nullptr},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::cuda
