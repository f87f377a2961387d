#version 450
// mul_add_u32(uint32* x, uint32 m, uint32 a, uint64 n): x[i] = x[i]*m + a.
layout(local_size_x = 64) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Args { uint m; uint a; uint64_t n; } args;
void main() {
  uint i = linear_index();
  if (uint64_t(i) < args.n) x[i] = x[i] * args.m + args.a;
}
