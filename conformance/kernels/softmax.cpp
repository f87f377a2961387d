// Row softmax: one group per row, L lanes striding over the columns.
//   region 0: lane max over its columns -> shared[lane];     barrier
//   region 1: lane 0 folds shared[] into the row max (fixed order); barrier
//   region 2: lane sum of exp(x - max) -> shared[lane];     barrier
//   region 3: lane 0 folds the sums;                         barrier
//   region 4: out = exp(x - max) / sum
// softmax_f32(float* out, const float* in, uint32 rows, uint32 cols);
// shared memory: (L + 2) floats.
#include <math.h>

#include "kernel_util.h"

using namespace cts_kernels;

TESSERA_CPU_KERNEL(softmax_f32) {
  float* out = Ptr<float>(ctx, 0);
  const float* in = Ptr<const float>(ctx, 1);
  const uint32_t rows = Arg<uint32_t>(ctx, 2);
  const uint32_t cols = Arg<uint32_t>(ctx, 3);
  const uint32_t L = Lanes(ctx);
  const uint64_t row = LinearGroup(ctx);
  if (row >= rows) return;
  const float* x = in + row * cols;
  float* y = out + row * cols;
  float* shared = static_cast<float*>(ctx->shared_memory);
  float* row_max = shared + L;
  float* row_sum = shared + L + 1;
  for (uint32_t lane = 0; lane < L; ++lane) {
    float m = -INFINITY;
    for (uint32_t c = lane; c < cols; c += L) m = fmaxf(m, x[c]);
    shared[lane] = m;
  }
  for (uint32_t lane = 0; lane < L; ++lane)
    if (lane == 0) {
      float m = shared[0];
      for (uint32_t l = 1; l < L; ++l) m = fmaxf(m, shared[l]);
      *row_max = m;
    }
  for (uint32_t lane = 0; lane < L; ++lane) {
    float s = 0.0f;
    for (uint32_t c = lane; c < cols; c += L) s += expf(x[c] - *row_max);
    shared[lane] = s;
  }
  for (uint32_t lane = 0; lane < L; ++lane)
    if (lane == 0) {
      float s = 0.0f;
      for (uint32_t l = 0; l < L; ++l) s += shared[l];
      *row_sum = s;
    }
  for (uint32_t lane = 0; lane < L; ++lane)
    for (uint32_t c = lane; c < cols; c += L)
      y[c] = expf(x[c] - *row_max) / *row_sum;
}
