#version 450
// atomic_add(uint32* counters, uint32 scope, uint32 iters): every lane adds
// 1 `iters` times with an atomic of the given scope (atomics.cpp):
//   0 tile: counters[global_lane]; 1 group: a shared counter published by
//   lane 0 after a barrier to counters[group]; 2 device: counters[0];
//   3 mesh: counters[0] in host-visible memory.
layout(local_size_x = 64) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Counters { uint counters[]; };
layout(push_constant) uniform Args { uint scope; uint iters; } args;
shared uint group_counter[16];  // 64 bytes, as the elf-native launch asks
void main() {
  uint lane = gl_LocalInvocationIndex;
  uint g = linear_group();
  if (args.scope == 1u) {
    if (lane == 0u) group_counter[0] = 0u;
    barrier();
  }
  for (uint k = 0u; k < args.iters; ++k) {
    if (args.scope == 0u) atomicAdd(counters[g * 64u + lane], 1u);
    else if (args.scope == 1u) atomicAdd(group_counter[0], 1u);
    else atomicAdd(counters[0], 1u);
  }
  if (args.scope == 1u) {
    barrier();
    if (lane == 0u) counters[g] = group_counter[0];
  }
}
