// The schedule the SPIR-V plugins (vulkan, level_zero) build their GPU
// kernels for: both lower through one code generator
// (ir/lib/Conversion/TileToSPIRV), so they share it (docs/gpu-lowering.md).
// 128x128 GEMM tiles of 16x16 lanes with 8x8 registers each and BK = 16,
// not clamped (a small problem keeps the lane grid and guards); one tile per
// kernel; attention blocks of 64 x 32, halved where the head dims would not
// fit 32 KiB of shared memory (each lane a register block).
#pragma once

namespace tessera::plugin_support {

#define TESSERA_SPIRV_GPU_SCHEDULE                                     \
  "tile-m=128 tile-n=128 tile-k=16 micro-m=8 micro-n=8 clamp-tiles=0 " \
  "merge-matmul-chains=0 attn-block-q=64 attn-block-kv=32 attn-shared-kib=32"

// Level Zero: attention as matmul + softmax + matmul (the flash_attention
// kernels are opt-in, attention=1) until measured on an Intel GPU.
inline constexpr const char* kSpirvGpuSchedule = TESSERA_SPIRV_GPU_SCHEDULE " attention=0";

// Vulkan adds micro-layout=quads: the GEMM's register blocks, slice
// staging and C stores in aligned runs of 4, which the Vulkan SPIR-V path
// turns into vec4 accesses (tessera-spirv-vectorize-buffer-access; a 1024^3
// GEMM on lavapipe went from 2.2-2.6x to 1.16-1.21x the hand-tiled GLSL
// one).  Level Zero's OpenCL
// path has no such pass and keeps the strided blocks until measured on an
// Intel GPU.  And attention=1: attention chains become one flash_attention
// kernel, their gradients the three flash_attention_grad kernels, faster on
// lavapipe than the GEMMs and softmax they replace at every size measured
// (docs/gpu-lowering.md, "FlashAttention"), and with no Sq x Skv matrix.
inline constexpr const char* kVulkanGpuSchedule = TESSERA_SPIRV_GPU_SCHEDULE " micro-layout=quads attention=1";

#undef TESSERA_SPIRV_GPU_SCHEDULE

}  // namespace tessera::plugin_support
