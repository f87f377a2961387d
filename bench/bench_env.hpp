// What every tessera-bench benchmark shares: one Runtime on the cpu backend,
// its first device, a stream and the empty kernel.
//
// Created on first use (outside any timed region) and kept for the whole run,
// so no benchmark pays for plugin loading or thread-pool start-up.  If
// creation fails, every benchmark that needs it is skipped with the Status
// message, and the process exits non-zero (see main.cpp).
#ifndef TESSERA_BENCH_BENCH_ENV_HPP_
#define TESSERA_BENCH_BENCH_ENV_HPP_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "tessera/runtime.hpp"

namespace tessera_bench {

constexpr uint64_t kMiB = 1024ull * 1024ull;

struct BenchEnv {
  tessera::Status status;  // why the rest is unusable, when !status.ok()
  tessera::Runtime runtime;
  tessera::Device device;
  tessera::Stream stream;  // a non-default stream for eager launches
  tessera::Executable executable;
  tessera::Kernel empty_kernel;
  std::string kernel_path;
};

// The shared environment; created on the first call.  Thread-safe.
BenchEnv& Env();

// Returns the environment, or skips the benchmark with the creation error
// and returns nullptr.
BenchEnv* EnvOrSkip(benchmark::State& state);

// Skips the benchmark with `status` when it is not OK; returns status.ok().
bool CheckOrSkip(benchmark::State& state, const tessera::Status& status,
                 const char* what);

// The smallest launch: one group of one lane, no arguments.
inline tessera::Status LaunchEmpty(const BenchEnv& env,
                                   const tessera::Stream& stream) {
  static const std::vector<tessera::KernelArg> kNoArgs;
  return stream.launch(env.empty_kernel, TsDim3{1, 1, 1}, TsDim3{1, 1, 1},
                       kNoArgs);
}

// Registration hooks, one per source file, called by main() in this order.
struct RegisterOptions {
  bool set_repetitions = true;  // false when --benchmark_repetitions given
  // --benchmark_min_time in seconds, or 0 for each benchmark's default.  It
  // is always applied per benchmark (MinTime) so that the per-node graph
  // benchmarks, whose manual time is 1/nodes of the wall time, can scale it.
  double min_time_s = 0;
};
void RegisterLaunchBenchmarks(const RegisterOptions& options);
void RegisterCallBenchmarks(const RegisterOptions& options);
void RegisterCopyBenchmarks(const RegisterOptions& options);
void RegisterProgramBenchmarks(const RegisterOptions& options);
// cuda_bench.cpp: Tessera on the cuda plugin against the raw driver API.
// Built where cuda.h is found (TESSERA_BENCH_HAVE_CUDA); without a driver
// the benchmarks skip with "not available: ...".
void RegisterCudaBenchmarks(const RegisterOptions& options);

// Applies the run-time defaults: repetitions (so the JSON carries medians)
// unless given on the command line, and a minimum time per repetition:
// options.min_time_s when set, else `default_min_time_s`; both are divided
// by `time_divisor` for benchmarks whose reported time is a fraction of the
// wall time they take (per-node manual time).
benchmark::internal::Benchmark* Configure(benchmark::internal::Benchmark* b,
                                          const RegisterOptions& options,
                                          double default_min_time_s,
                                          double time_divisor = 1.0);

}  // namespace tessera_bench

#endif  // TESSERA_BENCH_BENCH_ENV_HPP_
