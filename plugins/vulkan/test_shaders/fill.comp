#version 450
// data[i] = value + i for i < n.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) writeonly buffer Data { uint data[]; };
layout(push_constant) uniform Args { uint value; uint n; } args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < args.n) data[i] = args.value + i;
}
