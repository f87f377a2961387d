#version 450
#extension GL_KHR_shader_subgroup_shuffle_relative : require
// Uses GroupNonUniformShuffleRelative: dst[i] = src[i + 1] within the
// subgroup, or src[i] for the subgroup's last lane (Tile IR's shuffle down
// rule).  The pipeline needs full subgroups for the subgroup-local ids to
// line up with the global ones (64 is a multiple of any subgroup size <= 64).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float src[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float dst[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float v = src[i];
  float d = subgroupShuffleDown(v, 1);
  dst[i] = gl_SubgroupInvocationID + 1 < gl_SubgroupSize ? d : v;
}
