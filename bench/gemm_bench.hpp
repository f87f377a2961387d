// GEMM / MLP / compile-time benchmarks of the Tessera IR cpu code generator
// against OpenBLAS (gemm_bench.cpp).
#ifndef TESSERA_BENCH_GEMM_BENCH_HPP_
#define TESSERA_BENCH_GEMM_BENCH_HPP_

#include "bench_env.hpp"

namespace tessera_bench {
void RegisterGemmBenchmarks(const RegisterOptions& options);
}  // namespace tessera_bench

#endif  // TESSERA_BENCH_GEMM_BENCH_HPP_
