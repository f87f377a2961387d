// What the vulkan plugin compiles for (Compiler_GetTargets): "vulkan", Tile
// IR -> one SPIR-V module per kernel (Shader, GLCompute, Vulkan 1.1
// environment), returned as an "archive:spirv" executable.  Shared by the
// plugin (answers without loading MLIR) and its compiler part.
#pragma once

#include "spirv_gpu_schedule.hpp"
#include "tessera/plugin.h"

namespace tessera::vk {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "float_atomic_add", TS_VALUE_STRING, "native",
     "f32 atomic add as OpAtomicFAddEXT ('native': VK_EXT_shader_atomic_float) or a "
     "compare-exchange loop ('cas'); with a device, what it supports"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "validate", TS_VALUE_BOOL, "true",
     "check every module with SPIRV-Tools' validator (vulkan1.1) before returning it"},
};

// The GPU schedule of both SPIR-V plugins (spirv_gpu_schedule.hpp).
inline constexpr const char* kSchedule = plugin_support::kVulkanGpuSchedule;

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "vulkan",
     /*archs=*/"", /*default_arch=*/"", /*executable_format=*/"archive:spirv",
     /*emit_kinds=*/"spirv,spirv-asm", TS_IR_LEVEL_TILE, kSchedule, kCompileOptions,
     sizeof(kCompileOptions) / sizeof(kCompileOptions[0])},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::vk
