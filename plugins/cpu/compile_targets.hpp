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

// The schedules the cpu code generator is tuned for: BLIS-style GEMM nests
// with register tiles that fill the vector register file.  AVX2 + FMA:
// 6 x 16 (12 ymm accumulators), A blocks of 144 x 256; AVX-512: 12 x 32
// (24 zmm accumulators of the 32), which the compiler part runs on 16-lane
// vectors (MatmulAccess::lanes) when the target cpu has AVX-512F, and A
// blocks of 264 x 256 (row groups of 256: half the B packing per row;
// ScheduleToCPU.cpp's group heuristic).
inline constexpr const char* kScheduleAvx2 =
    "tile-m=144 tile-n=4096 tile-k=256 micro-m=6 micro-n=16 attn-block-q=64 attn-block-kv=64";
inline constexpr const char* kScheduleAvx512 =
    "tile-m=264 tile-n=4096 tile-k=256 micro-m=12 micro-n=32 attn-block-q=64 attn-block-kv=64";
// AMD's AVX-512 (Zen 4: 512-bit operations on 256-bit units, a larger L2
// per core): 8 x 32 register tiles (16 zmm accumulators) and A blocks of
// 144 x 512, found by `tessera-run --autotune` on bench/autotune's GEMMs
// (1024^3: 14.5 -> 9.7 ms; 64 x 4096 x 4096: 18.9 -> 12.7 ms; 2048^3
// unchanged, on an AMD EPYC, 2 threads).
inline constexpr const char* kScheduleAvx512Amd =
    "tile-m=144 tile-n=4096 tile-k=512 micro-m=8 micro-n=32 attn-block-q=64 attn-block-kv=64";

// This host's schedule: the program layer schedules for the native cpu
// (an explicit --target cpu:<name> gets the host's tiles, and the compiler
// part picks the vector width for <name>: correct, maybe not the fastest).
// cpuid only, no LLVM: Compiler_GetTargets must stay cheap.
inline const char* HostSchedule() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return __builtin_cpu_is("amd") ? kScheduleAvx512Amd : kScheduleAvx512;
#endif
  return kScheduleAvx2;
}

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "cpu",
     /*archs=*/"*", /*default_arch=*/"native", /*executable_format=*/"elf-native",
     /*emit_kinds=*/"llvm,asm", TS_IR_LEVEL_TILE | TS_IR_LEVEL_SCHEDULE, HostSchedule(), kCompileOptions,
     sizeof(kCompileOptions) / sizeof(kCompileOptions[0])},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::cpu
