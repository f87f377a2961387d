#version 450
// log_stream(uint32* log, uint32 id, uint32 capacity, uint32 spin): log[0]
// counts completions; completion k writes id into log[1 + k].  Loops `spin`
// iterations first so that a launch is not free.
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Log { uint log_[]; };
layout(push_constant) uniform Args { uint id; uint capacity; uint spin; } args;
void main() {
  uint sink = 0u;
  for (uint i = 0u; i < args.spin; ++i) sink += atomicOr(log_[0], 0u);
  uint k = atomicAdd(log_[0], 1u + (sink & 0u));
  if (k < args.capacity) log_[1u + k] = args.id;
}
