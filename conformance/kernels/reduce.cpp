// Shared-memory tree reduction with group barriers (the seeds' example).
//
// group_reduce_f32(float* out, const float* in, uint64 n): group g reduces
// in[g*L .. g*L+L) (zero past n) into out[g], L = lanes (a power of two).
// Tile IR shape:
//     shared[lane] = in[g*L + lane]; barrier
//     for s = L/2; s > 0; s /= 2: if lane < s: shared[lane] += shared[lane+s]
//                                 barrier
//     if lane == 0: out[g] = shared[0]
// Each barrier ends one lane loop.  The association order is fixed, so the
// host reference reproduces the result bit for bit.
#include "kernel_util.h"

using namespace cts_kernels;

TESSERA_CPU_KERNEL(group_reduce_f32) {
  float* out = Ptr<float>(ctx, 0);
  const float* in = Ptr<const float>(ctx, 1);
  const uint64_t n = Arg<uint64_t>(ctx, 2);
  const uint32_t L = Lanes(ctx);
  float* shared = static_cast<float*>(ctx->shared_memory);
  const uint64_t g = LinearGroup(ctx);
  for (uint32_t lane = 0; lane < L; ++lane) {  // region 0
    const uint64_t i = g * L + lane;
    shared[lane] = i < n ? in[i] : 0.0f;
  }
  // barrier
  for (uint32_t s = L / 2; s > 0; s /= 2) {
    for (uint32_t lane = 0; lane < L; ++lane)  // region k
      if (lane < s) shared[lane] += shared[lane + s];
    // barrier
  }
  for (uint32_t lane = 0; lane < L; ++lane)  // last region
    if (lane == 0) out[g] = shared[0];
}
