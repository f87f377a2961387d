#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
// Uses Int64Atomics on a buffer: every invocation adds 2^32 to v[0], so the
// result needs all 64 bits.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint64_t v[]; };
void main() { atomicAdd(v[0], uint64_t(1) << 32); }
