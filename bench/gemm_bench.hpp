// GEMM / MLP / compile-time benchmarks of the Tessera IR cpu code generator
// against OpenBLAS (gemm_bench.cpp).
#ifndef TESSERA_BENCH_GEMM_BENCH_HPP_
#define TESSERA_BENCH_GEMM_BENCH_HPP_

#include <string>

#include "bench_env.hpp"

namespace tessera_bench {
void RegisterGemmBenchmarks(const RegisterOptions& options);

// The Graph IR text of `C = A B` on n x n matrices (`in` operands, `out`
// result; MLIR element type spellings): the GEMM every backend's benchmark
// compiles.
std::string GemmProgram(int n, const std::string& in = "f32", const std::string& out = "f32");

// OpenBLAS (0.3.21, Debian 12) picks its kernels by the CPU's model number
// and falls back to SSE3 ones ("Prescott") on CPUs newer than itself, such
// as Emerald Rapids: about 7x below its AVX-512 kernels, no reference for a
// ratio.  It reads OPENBLAS_CORETYPE in its library constructor, before
// main, so when it chose generic kernels on a CPU with AVX2 or AVX-512 (and
// the user did not set OPENBLAS_CORETYPE) this re-executes the bench with
// the best core for the CPU's features.  Records the core in the benchmark
// context ("openblas_core").  Call first in main, with main's argv.
void UseBestOpenBlasKernels(char** argv);
}  // namespace tessera_bench

#endif  // TESSERA_BENCH_GEMM_BENCH_HPP_
