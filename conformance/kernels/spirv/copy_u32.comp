#version 450
// copy_u32(uint32* dst, const uint32* src, uint64 n): dst[i] = src[i].
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(set = 0, binding = 1) coherent buffer Src { uint src[]; };
layout(push_constant) uniform Args { uint64_t n; } args;
void main() {
  uint i = linear_index();
  if (uint64_t(i) < args.n) dst[i] = atomicOr(src[i], 0u);
}
