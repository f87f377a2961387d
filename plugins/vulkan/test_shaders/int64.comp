#version 450
#extension GL_ARB_gpu_shader_int64 : require
// Uses the Int64 capability: loads only where the device has shaderInt64.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint64_t v[]; };
void main() { v[0] = v[0] * 3ul; }
