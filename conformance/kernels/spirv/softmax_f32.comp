#version 450
// softmax_f32(float* out, const float* in, uint32 rows, uint32 cols): one
// group of L = 64 lanes per row, the regions of softmax.cpp.
#define L 64u
layout(local_size_x = 64) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer Out { float out_[]; };
layout(set = 0, binding = 1) readonly buffer In { float in_[]; };
layout(push_constant) uniform Args { uint rows; uint cols; } args;
shared float partial[L + 2u];  // [L]: row max, [L + 1]: row sum
void main() {
  uint lane = gl_LocalInvocationIndex;
  uint row = linear_group();
  if (row >= args.rows) return;  // uniform per group
  uint cols = args.cols;
  uint base = row * cols;
  float m = -1.0 / 0.0;
  for (uint c = lane; c < cols; c += L) m = max(m, in_[base + c]);
  partial[lane] = m;
  barrier();
  if (lane == 0u) {
    float mx = partial[0];
    for (uint l = 1u; l < L; ++l) mx = max(mx, partial[l]);
    partial[L] = mx;
  }
  barrier();
  float row_max = partial[L];
  float s = 0.0;
  for (uint c = lane; c < cols; c += L) s += exp(in_[base + c] - row_max);
  barrier();  // every lane has read partial[L] before partial[lane] changes
  partial[lane] = s;
  barrier();
  if (lane == 0u) {
    float t = 0.0;
    for (uint l = 0u; l < L; ++l) t += partial[l];
    partial[L + 1u] = t;
  }
  barrier();
  float row_sum = partial[L + 1u];
  for (uint c = lane; c < cols; c += L) out_[base + c] = exp(in_[base + c] - row_max) / row_sum;
}
