// What the vulkan plugin compiles for (Compiler_GetTargets): "vulkan", Tile
// IR -> one SPIR-V module per kernel (Shader, GLCompute, Vulkan 1.1
// environment), returned as an "archive:spirv" executable.  Shared by the
// plugin (answers without loading MLIR) and its compiler part.
#pragma once

#include "tessera/plugin.h"

namespace tessera::vk {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "float_atomic_add", TS_VALUE_STRING, "native",
     "f32 atomic add as OpAtomicFAddEXT ('native': VK_EXT_shader_atomic_float) or a "
     "compare-exchange loop ('cas'); with a device, what it supports"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "validate", TS_VALUE_BOOL, "true",
     "check every module with SPIRV-Tools' validator (vulkan1.1) before returning it"},
};

// The schedule the GPU kernels are built for (docs/gpu-lowering.md): 128x128
// GEMM tiles of 16x16 lanes with 8x8 registers each and BK = 16, not clamped
// (a small problem keeps the lane grid and guards); one tile per kernel;
// attention as matmul + softmax + matmul (the flash_attention kernel is
// opt-in: attention=1) with 16 x 32 blocks for 32 KiB of shared memory.
inline constexpr const char* kSchedule =
    "tile-m=128 tile-n=128 tile-k=16 micro-m=8 micro-n=8 clamp-tiles=0 "
    "merge-matmul-chains=0 attention=0 attn-block-q=16 attn-block-kv=32";

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "vulkan",
     /*archs=*/"", /*default_arch=*/"", /*executable_format=*/"archive:spirv",
     /*emit_kinds=*/"spirv,spirv-asm", TS_IR_LEVEL_TILE, kSchedule, kCompileOptions,
     sizeof(kCompileOptions) / sizeof(kCompileOptions[0])},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::vk
