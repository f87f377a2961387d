// The kernels of tessera-streams-demo, in the cpu plugin's native executable
// format (see tessera/cpu_kernel.h).  Until the IR issue generates such
// objects from Tile IR, they are written by hand: one call runs one tile
// group, and the body loops over the group's lanes.
//
// Element i of a launch is  group_linear_id * lanes_per_group + lane.
#include <stdint.h>

#include "tessera/cpu_kernel.h"

namespace {

inline uint64_t LinearGroup(const TsCpuLaunchContext* ctx) {
  return ctx->group_id[0] +
         static_cast<uint64_t>(ctx->grid[0]) *
             (ctx->group_id[1] +
              static_cast<uint64_t>(ctx->grid[1]) * ctx->group_id[2]);
}

inline uint64_t LanesPerGroup(const TsCpuLaunchContext* ctx) {
  return static_cast<uint64_t>(ctx->group_size[0]) * ctx->group_size[1] *
         ctx->group_size[2];
}

}  // namespace

// y[i] = a * x[i] + y[i]  for i < n.
// args: 0 float* y (buffer), 1 const float* x (buffer), 2 float a, 3 uint64 n.
TESSERA_CPU_KERNEL(saxpy) {
  if (ctx->num_args != 4) return;
  float* y = static_cast<float*>(ctx->args[0]);
  const float* x = static_cast<const float*>(ctx->args[1]);
  const float a = *static_cast<const float*>(ctx->args[2]);
  const uint64_t n = *static_cast<const uint64_t*>(ctx->args[3]);
  const uint64_t lanes = LanesPerGroup(ctx);
  const uint64_t first = LinearGroup(ctx) * lanes;
  for (uint64_t lane = 0; lane < lanes; ++lane) {
    const uint64_t i = first + lane;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

// x[i] = s * x[i]  for i < n.
// args: 0 float* x (buffer), 1 float s, 2 uint64 n.
TESSERA_CPU_KERNEL(scale) {
  if (ctx->num_args != 3) return;
  float* x = static_cast<float*>(ctx->args[0]);
  const float s = *static_cast<const float*>(ctx->args[1]);
  const uint64_t n = *static_cast<const uint64_t*>(ctx->args[2]);
  const uint64_t lanes = LanesPerGroup(ctx);
  const uint64_t first = LinearGroup(ctx) * lanes;
  for (uint64_t lane = 0; lane < lanes; ++lane) {
    const uint64_t i = first + lane;
    if (i < n) x[i] = s * x[i];
  }
}
