// Shared by the SPIR-V conformance kernels (compiled with glslangValidator,
// one module per kernel, entry point renamed to the kernel's name).
//
// Launch ABI of the Vulkan plugin (plugins/vulkan/executable.cpp): buffer
// arguments in order are the storage buffers of set 0, bindings 0..n-1;
// scalar arguments in order are the members of the push-constant block.
// The group size is the shader's LocalSize (Kernel::info().required_group_size).
// Include this file AFTER the layout(local_size_x = ...) declaration:
// gl_WorkGroupSize is a constant, (1,1,1) before it.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// Element i of a 1-D launch is group_linear_id * lanes + lane, over a 3-D
// grid of groups (as kernel_util.h's LinearGroup).  Index arithmetic is
// 32-bit (storage buffers index with 32 bits anyway); the uint64 scalars
// of the ABI are compared as uint64.
uint linear_group() {
  return gl_WorkGroupID.x +
         gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}
uint lanes() { return gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z; }
uint linear_index() { return linear_group() * lanes() + gl_LocalInvocationIndex; }

// Spin loops: Vulkan shaders have no clock here, so a time limit in
// milliseconds becomes an iteration bound (a safety net, never a timing).
const uint kSpinPerMs = 20000u;
