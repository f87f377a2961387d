#version 450
// y[i] = a * x[i] + y[i]; buffers at set 0 bindings 0, 1; scalars as push constants.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Args { float a; uint n; } args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < args.n) y[i] = args.a * x[i] + y[i];
}
