// Attention (FlashAttention form) of the Tessera IR cpu code generator
// against OpenBLAS + a softmax pass (attention_bench.cpp).
#ifndef TESSERA_BENCH_ATTENTION_BENCH_HPP_
#define TESSERA_BENCH_ATTENTION_BENCH_HPP_

#include "bench_env.hpp"

namespace tessera_bench {
void RegisterAttentionBenchmarks(const RegisterOptions& options);
}  // namespace tessera_bench

#endif  // TESSERA_BENCH_ATTENTION_BENCH_HPP_
