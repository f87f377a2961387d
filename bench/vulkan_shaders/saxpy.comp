#version 450
// saxpy/*/16M: y = a * x + y on n floats, four per lane (vec4 loads and
// stores: 16M floats are 16384 groups, under maxComputeWorkGroupCount.x).
// n must be a multiple of 4; lanes past n/4 do nothing.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { vec4 x[]; };
layout(set = 0, binding = 1) buffer Y { vec4 y[]; };
layout(push_constant) uniform Args { float a; uint n; } args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < args.n / 4u) y[i] = args.a * x[i] + y[i];
}
