#version 450
// group_reduce_f32(float* out, const float* in, uint64 n): group g reduces
// in[g*L .. g*L+L) (zero past n) into out[g] with the fixed tree of
// reduce.cpp (L = 256 here, the shader's group size).
layout(local_size_x = 256) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer Out { float out_[]; };
layout(set = 0, binding = 1) readonly buffer In { float in_[]; };
layout(push_constant) uniform Args { uint64_t n; } args;
shared float partial[256];
void main() {
  uint lane = gl_LocalInvocationIndex;
  uint g = linear_group();
  uint i = g * 256u + lane;
  partial[lane] = uint64_t(i) < args.n ? in_[i] : 0.0;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (lane < s) partial[lane] = partial[lane] + partial[lane + s];
    barrier();
  }
  if (lane == 0u) out_[g] = partial[0];
}
