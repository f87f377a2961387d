// What the hip plugin compiles for (Compiler_GetTargets): "hip", Tile IR ->
// ROCDL -> LLVM AMDGPU object -> ld.lld -shared -> one code object (hsaco)
// per kernel, returned as an "archive:hsaco" executable
// (tessera/kernel_archive.hpp).  Shared by the plugin (answers without
// loading MLIR) and its compiler part (compiler/).
#pragma once

#include "tessera/plugin.h"

namespace tessera::hip {

inline const TsOptionInfo kCompileOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "device_libs", TS_VALUE_STRING, "",
     "folder of ROCm's device library bitcode (ocml.bc, ockl.bc, oclc_*.bc) linked for math "
     "functions; \"\" searches $ROCM_PATH/amdgcn/bitcode, /opt/rocm/amdgcn/bitcode and "
     "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"},
};

// The GPU schedule (docs/gpu-lowering.md), as for vulkan and cuda.  On the
// CDNA targets bf16 / f16 matmuls whose shape the tile divides run on the
// matrix cores (mma=mfma: wavefronts of 64 lanes, 64x64 outputs each, four
// v_mfma_f32_32x32x8 per 8-deep step; K staged 32 at a time).  On RDNA3
// they run on WMMA (mma=wmma: waves of 32 lanes, 64x32 outputs each, eight
// v_wmma_f32_16x16x16 per 16-deep step); RDNA2 keeps the lanes' FMAs.
inline constexpr const char* kSchedule =
    "tile-m=128 tile-n=128 tile-k=16 micro-m=8 micro-n=8 gfx908:mma=mfma gfx90a:mma=mfma "
    "gfx940:mma=mfma gfx1100:mma=wmma gfx1101:mma=wmma gfx1102:mma=wmma gfx1103:mma=wmma "
    "clamp-tiles=0 "
    "merge-matmul-chains=0 attention=0 attn-block-q=64 attn-block-kv=32 attn-shared-kib=32";

// What LLVM 16's AMDGPU back end knows among the data-center and current
// parts: CDNA1 (gfx908), CDNA2 (gfx90a), CDNA3 (gfx940; gfx942 is unknown
// to LLVM 16), RDNA2 (gfx1030), RDNA3 (gfx1100, gfx1101, gfx1102 and the
// gfx1103 APU: every RDNA3 part LLVM 16 knows).
inline constexpr const char* kArchs = "gfx908,gfx90a,gfx940,gfx1030,gfx1100,gfx1101,gfx1102,gfx1103";

inline const TsCompilerTarget kCompileTargets[] = {
    {TS_COMPILER_TARGET_STRUCT_SIZE, nullptr, "hip", kArchs, /*default_arch=*/"gfx90a",
     /*executable_format=*/"archive:hsaco", /*emit_kinds=*/"hsaco,asm,llvm", TS_IR_LEVEL_TILE,
     kSchedule, kCompileOptions, sizeof(kCompileOptions) / sizeof(kCompileOptions[0]),
     /*build_id=*/nullptr},
};
inline constexpr size_t kNumCompileTargets = sizeof(kCompileTargets) / sizeof(kCompileTargets[0]);

}  // namespace tessera::hip
