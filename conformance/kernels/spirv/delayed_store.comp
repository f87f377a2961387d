#version 450
// delayed_store(uint32* dst, uint32 value, uint32 us): keeps the device busy
// for an iteration count derived from `us`, then stores value.
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Dst { uint dst[]; };
layout(push_constant) uniform Args { uint value; uint us; } args;
void main() {
  uint64_t limit = uint64_t(args.us) * (kSpinPerMs / 1000u);
  uint sink = 0u;
  for (uint64_t it = 0; it < limit; ++it) sink += atomicOr(dst[0], 0u);
  atomicExchange(dst[0], args.value + (sink & 0u));
}
