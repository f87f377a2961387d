#version 450
// shuffle_xor / shuffle_down(uint32* out, const uint32* in, uint32 sg,
// uint32 p) with real subgroup operations (GL_KHR_shader_subgroup_shuffle*):
//   xor:  out[i] = in[subgroup_base(i) + ((i % sg) ^ p)]
//   down: out[i] = in[subgroup_base(i) + (i % sg + p)] if inside, else in[i]
// sg is DeviceInfo::subgroup_size; the shader uses gl_SubgroupSize.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
layout(local_size_x = 128) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer Out { uint out_[]; };
layout(set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(push_constant) uniform Args { uint sg; uint p; } args;
void main() {
  uint i = linear_index();
  uint v = in_[i];
#ifdef SHUFFLE_XOR
  out_[i] = subgroupShuffleXor(v, args.p);
#else
  uint r = subgroupShuffleDown(v, args.p);
  out_[i] = gl_SubgroupInvocationID + args.p < gl_SubgroupSize ? r : v;
#endif
}
