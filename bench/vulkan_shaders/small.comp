#version 450
// dispatch_small / submit_wait: the smallest useful kernel, one group of 64
// lanes that reads and writes one buffer and takes one scalar:
// data[i] += value.  Buffer at set 0 binding 0, the scalar as a push constant.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Args { uint value; } args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  data[i] += args.value;
}
