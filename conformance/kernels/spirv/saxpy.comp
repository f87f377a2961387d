#version 450
// saxpy(float* y, const float* x, float a, uint64 n): y[i] = a*x[i] + y[i].
layout(local_size_x = 128) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) buffer Y { float y[]; };
layout(set = 0, binding = 1) readonly buffer X { float x[]; };
layout(push_constant) uniform Args { float a; uint64_t n; } args;
void main() {
  uint i = linear_index();
  if (uint64_t(i) < args.n) y[i] = args.a * x[i] + y[i];
}
