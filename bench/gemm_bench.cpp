// fp32 GEMM and the fused MLP compiled from Graph IR by the Tessera cpu
// code generator, against OpenBLAS (cblas_sgemm) with the same thread count,
// measured in the same run; and the compile time of examples/mlp.mlir.
//
//   gemm_f32/tessera_cpu/{1024,2048}   C = A B (Graph IR matmul, compiled)
//   gemm_f32/openblas/{1024,2048}      cblas_sgemm, openblas_set_num_threads
//   gemm_f32/tessera_cpu_tuned/N       with the schedule TESSERA_BENCH_TUNED
//                                      names for N ("1024:tile-k=128;...")
//   gemm_bf16/tessera_cpu/2048         bf16 x bf16 -> f32 (widened while packing),
//                                      compared with gemm_f32/openblas/2048
//   mlp_f32/tessera_cpu/512            examples/mlp.mlir (fused)
//   mlp_f32/openblas_unfused/512       sgemm, bias pass, relu pass, sgemm, bias pass
//   compile/tessera_cpu/mlp            examples/mlp.mlir, cold (no cache)
//   compile_warm/tessera_cpu/mlp       the same, warm (in-memory cache hit)
//   fma_peak/{avx512,avx2}             the machine's f32 FMA peak on the same
//                                      threads: the ceiling a GEMM's FLOP/s is
//                                      a fraction of
//
// Both implementations use the runtime's worker count: the cpu plugin's
// threads (TESSERA_CPU_THREADS, default: all cores) and as many OpenBLAS
// threads.  items_per_second is FLOP/s (2 M N K per matmul).
#include "gemm_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "ir_compile.hpp"

#if TESSERA_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera_bench {
namespace {

unsigned Threads() {
  if (const char* t = std::getenv("TESSERA_CPU_THREADS"); t && *t) {
    // A whole number from 1 to 1024, as the cpu plugin reads the same
    // variable; anything else is the machine's cores (said on stderr).
    char* end = nullptr;
    const long n = std::strtol(t, &end, 10);
    if (end != t && *end == 0 && n >= 1 && n <= 1024) return static_cast<unsigned>(n);
    std::fprintf(stderr, "TESSERA_CPU_THREADS=%s is not a count from 1 to 1024: using every core\n", t);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

#if TESSERA_BENCH_HAVE_OPENBLAS
void Sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, A, K,
              B, N, 0.f, C, N);
}
// Kernel sets of OpenBLAS's DYNAMIC_ARCH builds that use neither AVX2 nor
// AVX-512: what it falls back to for a CPU it does not know.
bool IsGenericOpenBlasCore(const std::string& core) {
  for (const char* c : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge",
                        "Barcelona", "Bobcat", "Opteron", "Katmai", "Coppermine", "Northwood", "Banias"})
    if (core == c) return true;
  return false;
}

void SetBlasThreads() {
  static bool done = [] {
    openblas_set_num_threads(static_cast<int>(Threads()));
    return true;
  }();
  (void)done;
}
#endif

// C = A B on n x n matrices of `in`, result `out` (MLIR element types).

// bf16 <-> f32 on the bits (round to nearest even; the inputs are finite).
uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
float FromBf16(uint16_t h) {
  uint32_t u = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The schedule TESSERA_BENCH_TUNED gives size `n` ("N:SCHEDULE;..."), or "".
std::string TunedSchedule(int n) {
  const char* env = std::getenv("TESSERA_BENCH_TUNED");
  if (!env) return "";
  std::stringstream entries(env);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    const size_t colon = entry.find(':');
    if (colon != std::string::npos && entry.substr(0, colon) == std::to_string(n)) return entry.substr(colon + 1);
  }
  return "";
}

std::string MlpProgram(std::string* error) {
  std::string path = TESSERA_BENCH_EXAMPLES_DIR "/mlp.mlir";
  if (const char* d = std::getenv("TESSERA_BENCH_EXAMPLES"); d && *d)
    path = std::string(d) + "/mlp.mlir";
  std::ifstream f(path);
  if (!f) {
    *error = "cannot read " + path;
    return "";
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A compiled, loaded program with its device buffers (kept for the run).
struct Loaded {
  IrProgram prog;
  std::vector<tessera::Buffer> buffers;
  std::vector<tessera::KernelArg> args;
  std::string error;
  bool verified = false;

  float* host(size_t i) const {
    return static_cast<float*>(buffers[i].host_pointer());
  }
  // Argument i as floats (bf16 buffers widened).
  std::vector<float> floats(size_t i) const {
    size_t n = 1;
    for (int64_t d : prog.shapes[i]) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    if (prog.dtypes[i] == "bf16") {
      auto* p = static_cast<const uint16_t*>(buffers[i].host_pointer());
      for (size_t k = 0; k < n; ++k) v[k] = FromBf16(p[k]);
    } else {
      std::copy(host(i), host(i) + n, v.begin());
    }
    return v;
  }
  tessera::Status run(const tessera::Stream& s) const {
    tessera::Status st = prog.program.Run(s, args);
    return st.ok() ? s.synchronize() : st;
  }
};

// Compiles (through the cache) and loads `text` once per process.
Loaded* Load(benchmark::State& state, BenchEnv* env, const std::string& text, const std::string& schedule = "") {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[schedule + "\n" + text];
  if (!slot) {
    slot = std::make_unique<Loaded>();
    Loaded& l = *slot;
    IrCompileOptions options;
    options.schedule = schedule;
    if (!CompileGraphIR(text, env->device, options, &l.prog, &l.error)) {
    } else {
      // KernelArg::buffer keeps a pointer to the Buffer: no reallocation.
      l.buffers.reserve(l.prog.shapes.size());
      for (size_t i = 0; i < l.prog.shapes.size() && l.error.empty(); ++i) {
        size_t n = 1;
        for (int64_t d : l.prog.shapes[i]) n *= static_cast<size_t>(d);
        const bool bf16 = l.prog.dtypes[i] == "bf16";
        auto buf = env->device.allocate(n * (bf16 ? sizeof(uint16_t) : sizeof(float)));
        if (!buf.ok()) { l.error = buf.status().ToString(); break; }
        l.buffers.push_back(*buf);
        float* p = l.host(i);
        if (!p) { l.error = "cpu buffer without a host pointer"; break; }
        auto v = Random(n, 17 + static_cast<unsigned>(i));
        if (bf16) {
          auto* h = reinterpret_cast<uint16_t*>(p);
          for (size_t k = 0; k < n; ++k) h[k] = ToBf16(v[k]);
        } else {
          std::copy(v.begin(), v.end(), p);
        }
        l.args.push_back(tessera::KernelArg::buffer(l.buffers.back()));
      }
    }
  }
  if (!slot->error.empty()) {
    state.SkipWithError(slot->error.c_str());
    return nullptr;
  }
  return slot.get();
}

double MaxRelError(const float* got, const std::vector<float>& want) {
  double err = 0, ref = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max<double>(err, std::fabs(got[i] - want[i]));
    ref = std::max<double>(ref, std::fabs(want[i]));
  }
  return err / ref;
}

// `in` x `in` -> f32; bf16 operands are checked against cblas_sgemm of
// their (exact) f32 values.
void BM_GemmTessera(benchmark::State& state, int n, const char* in, const std::string& schedule) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  Loaded* l = Load(state, env, GemmProgram(n, in), schedule);
  if (!l) return;
  if (!CheckOrSkip(state, l->run(env->stream), "launch + synchronize")) return;
#if TESSERA_BENCH_HAVE_OPENBLAS
  if (!l->verified) {
    SetBlasThreads();
    std::vector<float> want(static_cast<size_t>(n) * n);
    Sgemm(n, n, n, l->floats(0).data(), l->floats(1).data(), want.data());
    double e = MaxRelError(l->host(2), want);
    if (e > 1e-4) {
      state.SkipWithError(("result differs from cblas_sgemm: relative error " +
                           std::to_string(e)).c_str());
      return;
    }
    l->verified = true;
  }
#endif
  for (auto _ : state) {
    tessera::Status s = l->run(env->stream);
    if (!s.ok()) { CheckOrSkip(state, s, "launch + synchronize"); break; }
  }
  state.SetItemsProcessed(state.iterations() * 2 * int64_t(n) * n * n);
  state.counters["groups"] = l->prog.grid[0] * l->prog.grid[1] * l->prog.grid[2];
}

// The fused MLP's reference, unfused: what a framework calling BLAS does.
struct Mlp {
  int B = 512, D = 1024, H = 4096;
};

#if TESSERA_BENCH_HAVE_OPENBLAS
void MlpUnfused(const Mlp& m, const float* x, const float* w1, const float* b1,
                const float* w2, const float* b2, float* h, float* y) {
  Sgemm(m.B, m.H, m.D, x, w1, h);
  for (int i = 0; i < m.B; ++i)  // bias pass
    for (int j = 0; j < m.H; ++j) h[size_t(i) * m.H + j] += b1[j];
  for (size_t i = 0; i < size_t(m.B) * m.H; ++i) h[i] = std::max(h[i], 0.f);  // relu pass
  Sgemm(m.B, m.D, m.H, h, w2, y);
  for (int i = 0; i < m.B; ++i)
    for (int j = 0; j < m.D; ++j) y[size_t(i) * m.D + j] += b2[j];
}
#endif

void BM_MlpTessera(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  std::string err, text = MlpProgram(&err);
  if (text.empty()) { state.SkipWithError(err.c_str()); return; }
  Loaded* l = Load(state, env, text);
  if (!l) return;
  if (!CheckOrSkip(state, l->run(env->stream), "launch + synchronize")) return;
  Mlp m;
#if TESSERA_BENCH_HAVE_OPENBLAS
  if (!l->verified) {
    SetBlasThreads();
    std::vector<float> h(size_t(m.B) * m.H), y(size_t(m.B) * m.D);
    MlpUnfused(m, l->host(0), l->host(1), l->host(2), l->host(3), l->host(4), h.data(), y.data());
    double e = MaxRelError(l->host(5), y);
    if (e > 1e-4) {
      state.SkipWithError(("result differs from the OpenBLAS MLP: relative error " +
                           std::to_string(e)).c_str());
      return;
    }
    l->verified = true;
  }
#endif
  for (auto _ : state) {
    tessera::Status s = l->run(env->stream);
    if (!s.ok()) { CheckOrSkip(state, s, "launch + synchronize"); break; }
  }
  state.SetItemsProcessed(state.iterations() * 2 * int64_t(m.B) * m.D * m.H * 2);
  state.counters["groups"] = l->prog.grid[0] * l->prog.grid[1] * l->prog.grid[2];
}

// An elementwise tree, y = relu(a * b + c) * d - a on 2048 x 2048 f32:
// memory-bound, so what fusion saves is passes over memory.  The Tessera
// program is one schedule tile (one loop nest, y stored once); the
// references run on as many threads as the cpu plugin: one loop per op
// with a temporary each (what eager frameworks do) and one hand-fused loop.
constexpr int kChainN = 2048;
std::string ChainProgram() {
  std::string t = "tensor<" + std::to_string(kChainN) + "x" + std::to_string(kChainN) + "xf32>";
  std::string tt = t + ", " + t;
  return "func.func @chain(%a: " + t + ", %b: " + t + ", %c: " + t + ", %d: " + t + ") -> " + t + " {\n" +
         "  %m = tessera_graph.mul %a, %b : " + tt + "\n" +
         "  %s = tessera_graph.add %m, %c : " + tt + "\n" +
         "  %r = tessera_graph.relu %s : " + t + "\n" +
         "  %p = tessera_graph.mul %r, %d : " + tt + "\n" +
         "  %y = tessera_graph.sub %p, %a : " + tt + "\n" +
         "  return %y : " + t + "\n}\n";
}

// body(begin, end) on [0, n) split over Threads() threads.
template <typename Fn>
void Parallel(size_t n, Fn body) {
  unsigned t = Threads();
  std::vector<std::thread> ts;
  for (unsigned i = 0; i < t; ++i)
    ts.emplace_back([&, i] { body(n * i / t, n * (i + 1) / t); });
  for (auto& th : ts) th.join();
}

struct ChainData {
  size_t n = size_t(kChainN) * kChainN;
  std::vector<float> a = Random(n, 1), b = Random(n, 2), c = Random(n, 3), d = Random(n, 4);
  std::vector<float> t1 = std::vector<float>(n), t2 = t1, t3 = t1, t4 = t1, y = t1;
};

// The references are written for the compiler to vectorize: restrict
// pointers hoisted out of the loops (std::vector members would be reloaded
// every iteration, as they may alias), and -O3 on this file (CMakeLists).
void ChainFused(ChainData& x) {
  const float *__restrict a = x.a.data(), *__restrict b = x.b.data(), *__restrict c = x.c.data(),
              *__restrict d = x.d.data();
  float* __restrict y = x.y.data();
  Parallel(x.n, [=](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) y[i] = std::max(a[i] * b[i] + c[i], 0.f) * d[i] - a[i];
  });
}
void ChainUnfused(ChainData& x) {
  const float *__restrict a = x.a.data(), *__restrict b = x.b.data(), *__restrict c = x.c.data(),
              *__restrict d = x.d.data();
  float *__restrict t1 = x.t1.data(), *__restrict t2 = x.t2.data(), *__restrict t3 = x.t3.data(),
        *__restrict t4 = x.t4.data(), *__restrict y = x.y.data();
  Parallel(x.n, [=](size_t lo, size_t hi) { for (size_t i = lo; i < hi; ++i) t1[i] = a[i] * b[i]; });
  Parallel(x.n, [=](size_t lo, size_t hi) { for (size_t i = lo; i < hi; ++i) t2[i] = t1[i] + c[i]; });
  Parallel(x.n, [=](size_t lo, size_t hi) { for (size_t i = lo; i < hi; ++i) t3[i] = std::max(t2[i], 0.f); });
  Parallel(x.n, [=](size_t lo, size_t hi) { for (size_t i = lo; i < hi; ++i) t4[i] = t3[i] * d[i]; });
  Parallel(x.n, [=](size_t lo, size_t hi) { for (size_t i = lo; i < hi; ++i) y[i] = t4[i] - a[i]; });
}

void BM_ChainTessera(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  Loaded* l = Load(state, env, ChainProgram());
  if (!l) return;
  if (!CheckOrSkip(state, l->run(env->stream), "launch + synchronize")) return;
  if (!l->verified) {
    ChainData x;
    x.a = l->floats(0), x.b = l->floats(1), x.c = l->floats(2), x.d = l->floats(3);
    ChainFused(x);
    double e = MaxRelError(l->host(4), x.y);
    if (e > 1e-6) {
      state.SkipWithError(("result differs from the C++ loop: relative error " + std::to_string(e)).c_str());
      return;
    }
    l->verified = true;
  }
  for (auto _ : state) {
    tessera::Status s = l->run(env->stream);
    if (!s.ok()) { CheckOrSkip(state, s, "launch + synchronize"); break; }
  }
  state.SetBytesProcessed(state.iterations() * int64_t(5) * 4 * kChainN * kChainN);
  state.counters["groups"] = l->prog.grid[0] * l->prog.grid[1] * l->prog.grid[2];
}

void BM_ChainCpp(benchmark::State& state, bool fused) {
  static ChainData x;
  for (auto _ : state) fused ? ChainFused(x) : ChainUnfused(x);
  state.SetBytesProcessed(state.iterations() * int64_t(5) * 4 * kChainN * kChainN);
}

#if TESSERA_BENCH_HAVE_OPENBLAS
void BM_GemmOpenBLAS(benchmark::State& state, int n) {
  SetBlasThreads();
  size_t nn = size_t(n) * n;
  auto a = Random(nn, 17), b = Random(nn, 18);
  std::vector<float> c(nn);
  Sgemm(n, n, n, a.data(), b.data(), c.data());  // warm-up: threads, pages
  for (auto _ : state) {
    Sgemm(n, n, n, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.SetItemsProcessed(state.iterations() * 2 * int64_t(n) * n * n);
  state.counters["threads"] = Threads();
}

void BM_MlpOpenBLASUnfused(benchmark::State& state) {
  SetBlasThreads();
  Mlp m;
  auto x = Random(size_t(m.B) * m.D, 17), w1 = Random(size_t(m.D) * m.H, 18),
       b1 = Random(m.H, 19), w2 = Random(size_t(m.H) * m.D, 20), b2 = Random(m.D, 21);
  std::vector<float> h(size_t(m.B) * m.H), y(size_t(m.B) * m.D);
  MlpUnfused(m, x.data(), w1.data(), b1.data(), w2.data(), b2.data(), h.data(), y.data());
  for (auto _ : state) {
    MlpUnfused(m, x.data(), w1.data(), b1.data(), w2.data(), b2.data(), h.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * 2 * int64_t(m.B) * m.D * m.H * 2);
  state.counters["threads"] = Threads();
}
#endif

// Compile time of examples/mlp.mlir, Graph IR text -> a loaded program: cold
// (no cache: every pass, LLVM -O3, lld in process) and warm (the cache
// answers); through the program layer and the plugin boundary (program:
// graph-to-schedule, bytecode, the cpu plugin's compiler part, Program
// creation) or by the cpu code generator called directly (direct: the
// compile before the plugin boundary).
void BM_Compile(benchmark::State& state, bool warm, bool direct) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  std::string err, text = MlpProgram(&err);
  if (text.empty()) { state.SkipWithError(err.c_str()); return; }
  IrCompileOptions opts;
  opts.use_cache = warm;
  char dir[] = "/tmp/tessera-bench-cacheXXXXXX";
  if (!mkdtemp(dir)) { state.SkipWithError("mkdtemp failed"); return; }
  opts.cache_dir = dir;
  IrProgram p;
  double ms = 0;
  bool hit = false;
  auto compile = [&]() -> bool {
    if (direct) return CompileGraphIRDirect(text, opts, &ms, &hit, &err);
    bool ok = CompileGraphIR(text, env->device, opts, &p, &err);
    hit = p.cache_hit;
    ms = p.compile_ms;
    return ok;
  };
  if (warm && !compile()) {  // fill the cache
    state.SkipWithError(err.c_str());
    return;
  }
  // Manual time: the compile alone (the program path also loads the
  // kernels on the device afterwards, which the direct path does not).
  double handoff_ms = 0, handoff_bytes = 0;
  for (auto _ : state) {
    if (!compile()) { state.SkipWithError(err.c_str()); break; }
    if (hit != warm) { state.SkipWithError("unexpected cache behaviour"); break; }
    state.SetIterationTime(ms / 1e3);
    handoff_ms += p.handoff_ms;
    handoff_bytes = p.handoff_bytes;
  }
  // The plugin boundary: bytecode written by the core and read by the
  // plugin, per compile (zero on the direct path and on cache hits).
  if (!direct && state.iterations() > 0) {
    state.counters["handoff_ms"] = handoff_ms / static_cast<double>(state.iterations());
    state.counters["handoff_bytes"] = handoff_bytes;
  }
  std::string rm = std::string("rm -rf '") + dir + "'";
  if (std::system(rm.c_str()) != 0) {}
}

#if defined(__x86_64__)
// 12 independent FMA chains per thread: more than the 2 pipes x 4 cycles of
// latency a core needs in flight.  x = x * m + c with 0 < m < 1 stays finite.
// Built for the ISA by attribute, picked at run time (__builtin_cpu_supports).
__attribute__((target("avx512f"))) float FmaChains512(int64_t iters) {
  __m512 x[12];
  for (int k = 0; k < 12; ++k) x[k] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) x[k] = _mm512_fmadd_ps(x[k], m, c);
  __m512 s = x[0];
  for (int k = 1; k < 12; ++k) s = _mm512_add_ps(s, x[k]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  return lanes[0] + lanes[15];
}
__attribute__((target("avx2,fma"))) float FmaChains256(int64_t iters) {
  __m256 x[12];
  for (int k = 0; k < 12; ++k) x[k] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(k));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) x[k] = _mm256_fmadd_ps(x[k], m, c);
  __m256 s = x[0];
  for (int k = 1; k < 12; ++k) s = _mm256_add_ps(s, x[k]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return lanes[0] + lanes[7];
}

// The f32 FMA peak of Threads() threads (the GEMMs' count): FLOP/s counts
// an FMA as 2, as the GEMMs' 2 M N K does.
void BM_FmaPeak(benchmark::State& state, int lanes) {
  if (lanes == 16 ? !__builtin_cpu_supports("avx512f") : !__builtin_cpu_supports("fma")) {
    state.SkipWithError(lanes == 16 ? "no AVX-512F on this CPU" : "no FMA3 on this CPU");
    return;
  }
  const unsigned threads = Threads();
  constexpr int64_t kIters = int64_t{1} << 21;
  for (auto _ : state) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sink[t] = lanes == 16 ? FmaChains512(kIters) : FmaChains256(kIters); });
    for (std::thread& t : pool) t.join();
    benchmark::DoNotOptimize(sink.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(threads) * kIters * 12 * lanes * 2);
  state.counters["threads"] = threads;
}
#endif

}  // namespace

void UseBestOpenBlasKernels(char** argv) {
#if TESSERA_BENCH_HAVE_OPENBLAS && defined(__x86_64__)
  const std::string core = openblas_get_corename();
  if (const char* detected = std::getenv("TESSERA_BENCH_OPENBLAS_DETECTED")) {
    // The second start: say what was replaced (compare.py prints it).
    benchmark::AddCustomContext("openblas_core", core + " (OPENBLAS_CORETYPE; OpenBLAS detected " +
                                                     detected + ")");
    return;
  }
  benchmark::AddCustomContext("openblas_core", core);
  if (std::getenv("OPENBLAS_CORETYPE") || !IsGenericOpenBlasCore(core)) return;
  const char* best = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    best = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    best = "Haswell";
  if (!best) return;  // the generic kernels are the best this CPU runs
  std::fprintf(stderr,
               "tessera-bench: OpenBLAS does not know this CPU and chose its %s kernels; "
               "running again with OPENBLAS_CORETYPE=%s (set OPENBLAS_CORETYPE to choose)\n",
               core.c_str(), best);
  setenv("OPENBLAS_CORETYPE", best, 1);
  setenv("TESSERA_BENCH_OPENBLAS_DETECTED", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "tessera-bench: re-executing failed (%s); the OpenBLAS references use %s\n",
               std::strerror(errno), core.c_str());
#else
  (void)argv;
#endif
}

std::string GemmProgram(int n, const std::string& in, const std::string& out) {
  std::ostringstream s;
  std::string dims = "tensor<" + std::to_string(n) + "x" + std::to_string(n) + "x";
  std::string t = dims + in + ">", r = dims + out + ">";
  s << "func.func @gemm(%a: " << t << ", %b: " << t << ") -> " << r << " {\n"
    << "  %c = tessera_graph.matmul %a, %b : " << t << ", " << t << " -> " << r << "\n"
    << "  return %c : " << r << "\n}\n";
  return s.str();
}

void RegisterGemmBenchmarks(const RegisterOptions& options) {
  auto real = [&](benchmark::internal::Benchmark* b, double min_time) {
    Configure(b, options, min_time)->UseRealTime()->Unit(benchmark::kMillisecond);
  };
#if TESSERA_BENCH_HAVE_IR
  const bool have_ir = true;
#else
  const bool have_ir = false;
#endif
  if (have_ir) {
    // Issue 18's sizes: powers of two and an odd one (1000: no tile divides
    // it, the remainder tiles and slivers are measured too).
    for (int n : {1000, 1024, 2048, 4096}) {
      real(benchmark::RegisterBenchmark(("gemm_f32/tessera_cpu/" + std::to_string(n)).c_str(),
                                        BM_GemmTessera, n, "f32", std::string()), 0.5);
      // A tuned schedule (tessera-run --autotune's choice for this size),
      // given as TESSERA_BENCH_TUNED="1024:tile-k=128 micro-m=8;2048:...".
      if (const std::string tuned = TunedSchedule(n); !tuned.empty())
        real(benchmark::RegisterBenchmark(("gemm_f32/tessera_cpu_tuned/" + std::to_string(n)).c_str(),
                                          BM_GemmTessera, n, "f32", tuned), 0.5);
#if TESSERA_BENCH_HAVE_OPENBLAS
      real(benchmark::RegisterBenchmark(("gemm_f32/openblas/" + std::to_string(n)).c_str(),
                                        BM_GemmOpenBLAS, n), 0.5);
#endif
    }
    // bf16 operands, f32 accumulation and result; compared with the f32
    // OpenBLAS GEMM of the same size: the same arithmetic (bf16 values are
    // exact in f32) on twice the operand bytes.
    real(benchmark::RegisterBenchmark("gemm_bf16/tessera_cpu/2048", BM_GemmTessera, 2048, "bf16", std::string()),
         0.5);
#if defined(__x86_64__)
    real(benchmark::RegisterBenchmark("fma_peak/avx512", BM_FmaPeak, 16), 0.5);
    real(benchmark::RegisterBenchmark("fma_peak/avx2", BM_FmaPeak, 8), 0.5);
#endif
    real(benchmark::RegisterBenchmark("mlp_f32/tessera_cpu/512", BM_MlpTessera), 0.5);
#if TESSERA_BENCH_HAVE_OPENBLAS
    real(benchmark::RegisterBenchmark("mlp_f32/openblas_unfused/512", BM_MlpOpenBLASUnfused), 0.5);
#endif
    // Fusion of an elementwise tree (bytes/s count the 4 inputs and the
    // output once: the traffic of the fused loop).
    real(benchmark::RegisterBenchmark("chain_f32/tessera_cpu/4M", BM_ChainTessera), 0.5);
    real(benchmark::RegisterBenchmark("chain_f32/cpp_fused/4M", BM_ChainCpp, true), 0.5);
    real(benchmark::RegisterBenchmark("chain_f32/cpp_unfused/4M", BM_ChainCpp, false), 0.5);
    // Cold compiles take long: few iterations, 3 repetitions.  tessera_cpu
    // goes through the program layer and the plugin; direct_cpu is its
    // reference (the same code generator called in process).
    for (bool direct : {false, true}) {
      const std::string impl = direct ? "direct_cpu" : "tessera_cpu";
      auto* cold = benchmark::RegisterBenchmark(("compile/" + impl + "/mlp").c_str(), BM_Compile, false, direct);
      cold->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
      if (options.set_repetitions) cold->Repetitions(5)->ReportAggregatesOnly(true);
      Configure(benchmark::RegisterBenchmark(("compile_warm/" + impl + "/mlp").c_str(), BM_Compile, true, direct),
                options, 0.2)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace tessera_bench
