#version 450
#extension GL_EXT_shader_atomic_float : require
// Uses AtomicFloat32AddEXT (VK_EXT_shader_atomic_float): every invocation
// adds 0.5 to v[0].
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { float v[]; };
void main() { atomicAdd(v[0], 0.5); }
