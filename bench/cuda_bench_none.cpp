// Built where cuda.h is not found: no CUDA benchmarks (cuda_bench.cpp).
#include "bench_env.hpp"

namespace tessera_bench {
void RegisterCudaBenchmarks(const RegisterOptions&) {}
}  // namespace tessera_bench
