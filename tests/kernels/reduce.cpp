// Shared-memory group reduction, written the way code generated from Tile IR
// is: the body is split at each barrier into regions, each region is a loop
// over the group's lanes (PoCL's work-item loops).
#include <cmath>
#include <cstdint>

#include "tessera/cpu_kernel.h"

// group_sum(const float* in, float* out, uint32 n): out[g] = sum of the
// group's group_size.x elements of `in` (missing elements count as 0).
// Needs group_size.x (a power of two) floats of shared memory; with less it
// writes NaN so the test sees it.
TESSERA_CPU_KERNEL(group_sum) {
  const float* in = static_cast<const float*>(ctx->args[0]);
  float* out = static_cast<float*>(ctx->args[1]);
  const uint32_t n = *static_cast<const uint32_t*>(ctx->args[2]);
  const uint32_t lanes = ctx->group_size[0];
  const uint32_t group = ctx->group_id[0];
  float* shared = static_cast<float*>(ctx->shared_memory);
  if (shared == nullptr || ctx->shared_memory_size < lanes * sizeof(float)) {
    out[group] = std::nanf("");
    return;
  }
  // Region 1: each lane loads its element into shared memory.
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(group) * lanes + lane;
    shared[lane] = i < n ? in[i] : 0.0f;
  }
  // barrier
  // Regions 2..: tree reduction, one barrier per level.
  for (uint32_t stride = lanes / 2; stride > 0; stride /= 2) {
    for (uint32_t lane = 0; lane < stride; ++lane)
      shared[lane] += shared[lane + stride];
    // barrier
  }
  // Last region: lane 0 writes the group's result.
  out[group] = shared[0];
}
