// Atomics at each scope of the memory model (docs/memory-model.md).
//
// atomic_add(uint32* counters, uint32 scope, uint32 iters): every lane adds 1
// `iters` times with an atomic of the given scope:
//   0 tile:   lane's own counter, counters[global_lane]
//   1 group:  a counter in shared memory, published by lane 0 after a group
//             barrier to counters[group]
//   2 device: counters[0], shared by every group of the launch
//   3 mesh:   counters[0] in host-visible memory shared with the host and
//             with launches on peer devices (system scope)
#include "kernel_util.h"

using namespace cts_kernels;

TESSERA_CPU_KERNEL(atomic_add) {
  uint32_t* counters = Ptr<uint32_t>(ctx, 0);
  const uint32_t scope = Arg<uint32_t>(ctx, 1);
  const uint32_t iters = Arg<uint32_t>(ctx, 2);
  const uint32_t L = Lanes(ctx);
  const uint64_t g = LinearGroup(ctx);
  uint32_t* shared = static_cast<uint32_t*>(ctx->shared_memory);
  if (scope == 1) {
    for (uint32_t lane = 0; lane < L; ++lane)
      if (lane == 0) __atomic_store_n(&shared[0], 0u, __ATOMIC_RELAXED);
    // barrier
  }
  for (uint32_t lane = 0; lane < L; ++lane) {
    for (uint32_t k = 0; k < iters; ++k) {
      switch (scope) {
        case 0:
          __atomic_fetch_add(&counters[g * L + lane], 1u, __ATOMIC_RELAXED);
          break;
        case 1:
          __atomic_fetch_add(&shared[0], 1u, __ATOMIC_RELAXED);
          break;
        case 2:
          __atomic_fetch_add(&counters[0], 1u, __ATOMIC_RELAXED);
          break;
        default:
          __atomic_fetch_add(&counters[0], 1u, __ATOMIC_SEQ_CST);
          break;
      }
    }
  }
  if (scope == 1) {
    // barrier
    for (uint32_t lane = 0; lane < L; ++lane)
      if (lane == 0)
        counters[g] = __atomic_load_n(&shared[0], __ATOMIC_RELAXED);
  }
}
