// Tiled GEMM through shared memory: C[M x N] = A[M x K] * B[K x N], row-major
// f32.  A group of T x T lanes (group_size = {T, T, 1}) computes one T x T
// tile of C; grid = {ceil(N/T), ceil(M/T), 1}.  For each k tile the group
// stages a T x T tile of A and of B in shared memory (one lane loop), passes
// a barrier, accumulates (second lane loop, accumulators in a per-lane array
// that lives across barriers), and passes a barrier.  k runs in ascending
// order for every element, as in the host reference.
//
// gemm_f32(float* C, const float* A, const float* B, uint32 M, uint32 N,
//          uint32 K); shared memory: 2*T*T floats.
#include <vector>

#include "kernel_util.h"

using namespace cts_kernels;

TESSERA_CPU_KERNEL(gemm_f32) {
  float* C = Ptr<float>(ctx, 0);
  const float* A = Ptr<const float>(ctx, 1);
  const float* B = Ptr<const float>(ctx, 2);
  const uint32_t M = Arg<uint32_t>(ctx, 3);
  const uint32_t N = Arg<uint32_t>(ctx, 4);
  const uint32_t K = Arg<uint32_t>(ctx, 5);
  const uint32_t T = ctx->group_size[0];  // == group_size[1]
  const uint32_t row0 = ctx->group_id[1] * T, col0 = ctx->group_id[0] * T;
  float* As = static_cast<float*>(ctx->shared_memory);
  float* Bs = As + T * T;
  std::vector<float> acc(T * T, 0.0f);  // lane-private across barriers
  for (uint32_t k0 = 0; k0 < K; k0 += T) {
    for (uint32_t ly = 0; ly < T; ++ly)
      for (uint32_t lx = 0; lx < T; ++lx) {
        const uint32_t ar = row0 + ly, ac = k0 + lx;
        As[ly * T + lx] = (ar < M && ac < K) ? A[uint64_t(ar) * K + ac] : 0.0f;
        const uint32_t br = k0 + ly, bc = col0 + lx;
        Bs[ly * T + lx] = (br < K && bc < N) ? B[uint64_t(br) * N + bc] : 0.0f;
      }
    // barrier
    const uint32_t kmax = K - k0 < T ? K - k0 : T;
    for (uint32_t ly = 0; ly < T; ++ly)
      for (uint32_t lx = 0; lx < T; ++lx) {
        float a = acc[ly * T + lx];
        for (uint32_t kk = 0; kk < kmax; ++kk) a += As[ly * T + kk] * Bs[kk * T + lx];
        acc[ly * T + lx] = a;
      }
    // barrier
  }
  for (uint32_t ly = 0; ly < T; ++ly)
    for (uint32_t lx = 0; lx < T; ++lx) {
      const uint32_t r = row0 + ly, c = col0 + lx;
      if (r < M && c < N) C[uint64_t(r) * N + c] = acc[ly * T + lx];
    }
}
