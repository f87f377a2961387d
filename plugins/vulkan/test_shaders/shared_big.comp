#version 450
// 256 KiB of shared memory: more than any device's
// maxComputeSharedMemorySize (lavapipe 32 KiB, large GPUs up to 228 KiB);
// Executable_Load must refuse it with a message naming the limit.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { float v[]; };
shared float big[65536];
void main() {
  uint l = gl_LocalInvocationID.x;
  for (uint i = l; i < 65536; i += 64) big[i] = float(i);
  barrier();
  v[l] = big[65535 - l];
}
