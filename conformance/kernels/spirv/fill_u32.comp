#version 450
// fill_u32(uint32* x, uint32 value, uint64 n): x[i] = value.
layout(local_size_x = 64) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer X { uint x[]; };
layout(push_constant) uniform Args { uint value; uint64_t n; } args;
void main() {
  uint i = linear_index();
  if (uint64_t(i) < args.n) x[i] = args.value;
}
