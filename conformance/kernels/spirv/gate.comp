#version 450
// gate(uint32* flag, uint32* timed_out, uint32 limit_ms): waits until the
// host sets flag[0] != 0 (a host-visible buffer); gives up after an
// iteration bound derived from limit_ms and sets timed_out[0] = 1.
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Flag { uint flag[]; };
layout(set = 0, binding = 1) coherent buffer TimedOut { uint timed_out[]; };
layout(push_constant) uniform Args { uint limit_ms; } args;
void main() {
  uint64_t limit = uint64_t(args.limit_ms) * kSpinPerMs;
  for (uint64_t it = 0; atomicOr(flag[0], 0u) == 0u; ++it) {
    if (it >= limit) {
      atomicExchange(timed_out[0], 1u);
      return;
    }
  }
}
