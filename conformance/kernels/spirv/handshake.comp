#version 450
// handshake(uint32* flags, uint32 me, uint32 limit_ms, uint32* seen): sets
// flags[me] = 1, then waits (bounded) for flags[1 - me]; seen[me] = 1 when
// the partner was seen.
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Flags { uint flags[]; };
layout(set = 0, binding = 1) coherent buffer Seen { uint seen[]; };
layout(push_constant) uniform Args { uint me; uint limit_ms; } args;
void main() {
  atomicExchange(flags[args.me], 1u);
  uint64_t limit = uint64_t(args.limit_ms) * kSpinPerMs;
  for (uint64_t it = 0; atomicOr(flags[1u - args.me], 0u) == 0u; ++it)
    if (it >= limit) return;
  // Checked again: llvmpipe ends a loop after 65535 iterations whatever its
  // condition, and that must not count as having seen the other kernel.
  if (atomicOr(flags[1u - args.me], 0u) != 0u) atomicExchange(seen[args.me], 1u);
}
