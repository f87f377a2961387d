// Elementwise test kernels.  Layout of every 1-D kernel here: group g, lane l
// handles element g * group_size.x + l (grid.x groups of group_size.x lanes).
#include <cstdint>

#include "tessera/cpu_kernel.h"

namespace {
template <typename T>
T Arg(const TsCpuLaunchContext* ctx, uint32_t i) {
  return *static_cast<const T*>(ctx->args[i]);
}
template <typename T>
T* Ptr(const TsCpuLaunchContext* ctx, uint32_t i) {
  return static_cast<T*>(ctx->args[i]);
}
}  // namespace

// Does nothing: for launch-count and ordering tests.
TESSERA_CPU_KERNEL(empty) { (void)ctx; }

// fill(float* out, float value, uint32 n): out[i] = value.
TESSERA_CPU_KERNEL(fill) {
  float* out = Ptr<float>(ctx, 0);
  const float value = Arg<float>(ctx, 1);
  const uint32_t n = Arg<uint32_t>(ctx, 2);
  const uint32_t lanes = ctx->group_size[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(ctx->group_id[0]) * lanes + lane;
    if (i < n) out[i] = value;
  }
}

// add(float* dst, const float* src, float value, uint32 n):
// dst[i] = src[i] + value.  dst may equal src.
TESSERA_CPU_KERNEL(add) {
  float* dst = Ptr<float>(ctx, 0);
  const float* src = Ptr<const float>(ctx, 1);
  const float value = Arg<float>(ctx, 2);
  const uint32_t n = Arg<uint32_t>(ctx, 3);
  const uint32_t lanes = ctx->group_size[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(ctx->group_id[0]) * lanes + lane;
    if (i < n) dst[i] = src[i] + value;
  }
}

// affine(float* dst, const float* src, float a, float b, uint32 n):
// dst[i] = a * src[i] + b.  Not commutative in composition, so a chain of
// them gives a different result when run out of order.
TESSERA_CPU_KERNEL(affine) {
  float* dst = Ptr<float>(ctx, 0);
  const float* src = Ptr<const float>(ctx, 1);
  const float a = Arg<float>(ctx, 2);
  const float b = Arg<float>(ctx, 3);
  const uint32_t n = Arg<uint32_t>(ctx, 4);
  const uint32_t lanes = ctx->group_size[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(ctx->group_id[0]) * lanes + lane;
    if (i < n) dst[i] = a * src[i] + b;
  }
}

// sum2(float* dst, const float* a, const float* b, uint32 n): dst = a + b.
TESSERA_CPU_KERNEL(sum2) {
  float* dst = Ptr<float>(ctx, 0);
  const float* a = Ptr<const float>(ctx, 1);
  const float* b = Ptr<const float>(ctx, 2);
  const uint32_t n = Arg<uint32_t>(ctx, 3);
  const uint32_t lanes = ctx->group_size[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(ctx->group_id[0]) * lanes + lane;
    if (i < n) dst[i] = a[i] + b[i];
  }
}

// saxpy(float a, const float* x, float* y, uint32 n): y = a * x + y.
TESSERA_CPU_KERNEL(saxpy) {
  const float a = Arg<float>(ctx, 0);
  const float* x = Ptr<const float>(ctx, 1);
  float* y = Ptr<float>(ctx, 2);
  const uint32_t n = Arg<uint32_t>(ctx, 3);
  const uint32_t lanes = ctx->group_size[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    uint64_t i = uint64_t(ctx->group_id[0]) * lanes + lane;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

// grid_ids(uint32* out): every lane of every group writes, at its linear
// position (group-major, then lane), its group and lane coordinates packed as
// gx | gy << 6 | gz << 12 | lx << 18 | ly << 22 | lz << 26, and out[total]
// gets the grid and group sizes of the launch context (written by group 0).
TESSERA_CPU_KERNEL(grid_ids) {
  uint32_t* out = Ptr<uint32_t>(ctx, 0);
  const uint32_t gx = ctx->group_id[0], gy = ctx->group_id[1],
                 gz = ctx->group_id[2];
  const uint32_t group_linear =
      (gz * ctx->grid[1] + gy) * ctx->grid[0] + gx;
  const uint32_t lanes =
      ctx->group_size[0] * ctx->group_size[1] * ctx->group_size[2];
  for (uint32_t lz = 0; lz < ctx->group_size[2]; ++lz)
    for (uint32_t ly = 0; ly < ctx->group_size[1]; ++ly)
      for (uint32_t lx = 0; lx < ctx->group_size[0]; ++lx) {
        uint32_t lane_linear =
            (lz * ctx->group_size[1] + ly) * ctx->group_size[0] + lx;
        out[group_linear * lanes + lane_linear] =
            gx | gy << 6 | gz << 12 | lx << 18 | ly << 22 | lz << 26;
      }
  if (group_linear == 0) {
    uint32_t total = ctx->grid[0] * ctx->grid[1] * ctx->grid[2] * lanes;
    out[total + 0] = ctx->grid[0];
    out[total + 1] = ctx->grid[1];
    out[total + 2] = ctx->grid[2];
    out[total + 3] = ctx->group_size[0];
    out[total + 4] = ctx->group_size[1];
    out[total + 5] = ctx->group_size[2];
  }
}

// device_ordinal(uint32* out): out[0] = the launching device's ordinal.
TESSERA_CPU_KERNEL(device_ordinal) {
  Ptr<uint32_t>(ctx, 0)[0] = ctx->device_ordinal;
}
