// What the level_zero plugin compiles for (Compiler_GetTargets):
// "level_zero", Tile IR -> one SPIR-V module per kernel for the OpenCL
// Kernel execution model (Kernel, Addresses, Physical64; buffers as
// CrossWorkgroup pointer parameters), returned as an "archive:spirv-kernel"
// executable, the format Executable_Load takes. Shared by the plugin
// (answers without loading MLIR) and its compiler part.
#pragma once

#include "spirv_gpu_schedule.hpp"
#include "tessera/plugin.h"

namespace tessera::level_zero {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "float_atomic_add", TS_VALUE_STRING, "native",
     "f32 atomic add as OpAtomicFAddEXT ('native': SPV_EXT_shader_atomic_float_add) or a "
     "compare-exchange loop ('cas'); with a device, what its float atomics support"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "validate", TS_VALUE_BOOL, "true",
     "check every module with SPIRV-Tools' validator (opencl2.2; the universal rules of "
     "the module's SPIR-V version for subgroup operations or f16 arithmetic) before returning it"},
};

// The GPU schedule of both SPIR-V plugins (spirv_gpu_schedule.hpp).
inline constexpr const char* kSchedule = plugin_support::kSpirvGpuSchedule;

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "level_zero",
     /*archs=*/"", /*default_arch=*/"", /*executable_format=*/"archive:spirv-kernel",
     /*emit_kinds=*/"spirv,spirv-asm", TS_IR_LEVEL_TILE, kSchedule, kCompileOptions,
     sizeof(kCompileOptions) / sizeof(kCompileOptions[0])},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::level_zero
