// What the cpu plugin compiles for (Compiler_GetTargets): one target,
// "cpu[:<LLVM cpu name>]", native by default.  Shared by the plugin (which
// answers Compiler_GetTargets without loading LLVM) and its compiler part
// (which checks requests against it).
#pragma once

#include "tessera/plugin.h"

namespace tessera::cpu {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "opt_level", TS_VALUE_INT64, "3",
     "LLVM optimization level, 0..3"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "cache_dir", TS_VALUE_STRING, "",
     "folder of compiled kernels reused across processes (\"\": none; the program layer "
     "passes $TESSERA_CACHE_DIR/cpu)"},
};

// The schedule the cpu code generator is tuned for (BLIS-style GEMM nests
// for AVX2 + FMA: 6x16 register tiles, panels of 144 x 256).
inline constexpr const char* kSchedule =
    "tile-m=144 tile-n=4096 tile-k=256 micro-m=6 micro-n=16 attn-block-q=64 attn-block-kv=64";

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "cpu",
     /*archs=*/"*", /*default_arch=*/"native", /*executable_format=*/"elf-native",
     /*emit_kinds=*/"llvm,asm", TS_IR_LEVEL_TILE | TS_IR_LEVEL_SCHEDULE, kSchedule, kCompileOptions,
     sizeof(kCompileOptions) / sizeof(kCompileOptions[0])},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::cpu
