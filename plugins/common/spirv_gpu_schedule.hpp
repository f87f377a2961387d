// The schedule the SPIR-V plugins (vulkan, level_zero) build their GPU
// kernels for: both lower through one code generator
// (ir/lib/Conversion/TileToSPIRV), so they share it (docs/gpu-lowering.md).
// 128x128 GEMM tiles of 16x16 lanes with 8x8 registers each and BK = 16,
// not clamped (a small problem keeps the lane grid and guards); one tile per
// kernel; attention as matmul + softmax + matmul (the flash_attention kernel
// is opt-in: attention=1) with 16 x 32 blocks for 32 KiB of shared memory.
#pragma once

namespace tessera::plugin_support {

inline constexpr const char* kSpirvGpuSchedule =
    "tile-m=128 tile-n=128 tile-k=16 micro-m=8 micro-n=8 clamp-tiles=0 "
    "merge-matmul-chains=0 attention=0 attn-block-q=16 attn-block-kv=32";

}  // namespace tessera::plugin_support
