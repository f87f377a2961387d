#version 450
#extension GL_EXT_shader_atomic_float2 : require
// Uses AtomicFloat32MinMaxEXT (VK_EXT_shader_atomic_float2) on a buffer and
// on shared memory: v[0] = max, v[1] = min of every x, v[2 + group] = the
// group's max (through a shared float).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) buffer Out { float v[]; };
shared float group_max;
void main() {
  if (gl_LocalInvocationIndex == 0) group_max = -1.0 / 0.0;
  barrier();
  float a = x[gl_GlobalInvocationID.x];
  atomicMax(v[0], a);
  atomicMin(v[1], a);
  atomicMax(group_max, a);
  barrier();
  if (gl_LocalInvocationIndex == 0) v[2 + gl_WorkGroupID.x] = group_max;
}
