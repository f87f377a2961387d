#version 450
// gemm_f32(float* C, const float* A, const float* B, uint32 M, uint32 N,
// uint32 K): C = A*B, row-major; a group of T x T lanes (T = 8) computes one
// T x T tile of C through shared memory; grid = {ceil(N/T), ceil(M/T), 1};
// k runs in ascending order (gemm.cpp).
#define T 8u
layout(local_size_x = 8, local_size_y = 8) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer C_ { float C[]; };
layout(set = 0, binding = 1) readonly buffer A_ { float A[]; };
layout(set = 0, binding = 2) readonly buffer B_ { float B[]; };
layout(push_constant) uniform Args { uint M; uint N; uint K; } args;
shared float As[T * T];
shared float Bs[T * T];
void main() {
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  uint row0 = gl_WorkGroupID.y * T, col0 = gl_WorkGroupID.x * T;
  uint M = args.M, N = args.N, K = args.K;
  float acc = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += T) {
    uint ar = row0 + ly, ac = k0 + lx;
    As[ly * T + lx] = (ar < M && ac < K) ? A[ar * K + ac] : 0.0;
    uint br = k0 + ly, bc = col0 + lx;
    Bs[ly * T + lx] = (br < K && bc < N) ? B[br * N + bc] : 0.0;
    barrier();
    uint kmax = K - k0 < T ? K - k0 : T;
    for (uint kk = 0u; kk < kmax; ++kk) acc += As[ly * T + kk] * Bs[kk * T + lx];
    barrier();
  }
  uint r = row0 + ly, c = col0 + lx;
  if (r < M && c < N) C[r * N + c] = acc;
}
