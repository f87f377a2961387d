#version 450
// count(uint32* counter, uint32 slot): counter[slot] += 1 per group
// (device-scope atomic; one lane per group).
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) buffer Counter { uint counter[]; };
layout(push_constant) uniform Args { uint slot; } args;
void main() { atomicAdd(counter[args.slot], 1u); }
