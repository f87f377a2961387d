#version 450
// Per-group sum of 256 elements through shared memory and barriers:
// out[group] = sum(in[group*256 .. group*256+255]) (zero past n).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer In { float src[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float dst[]; };
layout(push_constant) uniform Args { uint n; } args;
shared float partial[256];
void main() {
  uint lid = gl_LocalInvocationID.x;
  uint gid = gl_GlobalInvocationID.x;
  partial[lid] = gid < args.n ? src[gid] : 0.0;
  barrier();
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier();
  }
  if (lid == 0) dst[gl_WorkGroupID.x] = partial[0];
}
