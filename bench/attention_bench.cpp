// Attention O = softmax(Q K^T / sqrt(d)) V, head dim 64, compiled from Graph
// IR by the Tessera cpu code generator (tessera_schedule.flash_attention:
// online softmax over key/value blocks, no score matrix), against the
// unfused OpenBLAS version with the same thread count, in the same run.
//
//   attention_f32/tessera_cpu/{1000,1024,2048}        Graph IR, K^T as col_major
//   attention_f32/openblas_unfused/{1000,1024,2048}   S = cblas_sgemm(Q, K^T) with
//       the scale as alpha, a plain row softmax pass over S (rows split over
//       the same number of threads), O = cblas_sgemm(P, V)
//
// Both read the same K storage (K row-major, which is what the col_major
// K^T argument is).  items_per_second is FLOP/s counted as the two matmuls,
// 4 S^2 d (exp and the softmax are not counted).
#include "attention_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ir_compile.hpp"

#if TESSERA_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace tessera_bench {
namespace {

constexpr int kHeadDim = 64;

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

// The example's form (examples/flash_attention.mlir) at sequence length s.
std::string AttentionProgram(int s) {
  std::string S = std::to_string(s), D = std::to_string(kHeadDim);
  std::string q = "tensor<" + S + "x" + D + "xf32>", ss = "tensor<" + S + "x" + S + "xf32>";
  std::string kt = "tensor<" + D + "x" + S + "xf32>";
  std::string ktc = "tensor<" + D + "x" + S + "xf32, #tessera_graph.layout<col_major>>";
  std::ostringstream o;
  o << "func.func @attention(%q: " << q << ", %kt: " << ktc << ", %v: " << q << ") -> " << q << " {\n"
    << "  %scale = arith.constant dense<" << 1.0 / std::sqrt(double(kHeadDim)) << "> : tensor<" << S << "xf32>\n"
    << "  %k_t = tessera_graph.convert_layout %kt : " << ktc << " -> " << kt << "\n"
    << "  %s0 = tessera_graph.matmul %q, %k_t : " << q << ", " << kt << " -> " << ss << "\n"
    << "  %s = tessera_graph.mul %s0, %scale : " << ss << ", tensor<" << S << "xf32>\n"
    << "  %p = tessera_graph.softmax %s dim = 1 : " << ss << "\n"
    << "  %o = tessera_graph.matmul %p, %v : " << ss << ", " << q << " -> " << q << "\n"
    << "  return %o : " << q << "\n}\n";
  return o.str();
}

#if TESSERA_BENCH_HAVE_OPENBLAS
void SetBlasThreads() {
  static bool done = [] {
    openblas_set_num_threads(static_cast<int>(Threads()));
    return true;
  }();
  (void)done;
}

// What a framework calling BLAS does: the full S x S score matrix.
void AttentionUnfused(int s, const float* q, const float* k, const float* v, float* scores,
                      float* o) {
  const int d = kHeadDim;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s, s, d,
              static_cast<float>(1.0 / std::sqrt(double(d))), q, d, k, d, 0.f, scores, s);
  auto rowsOf = [&](int r0, int r1) {
    for (int i = r0; i < r1; ++i) {
      float* row = scores + size_t(i) * s;
      float mx = -INFINITY, sum = 0.f;
      for (int j = 0; j < s; ++j) mx = std::max(mx, row[j]);
      for (int j = 0; j < s; ++j) sum += row[j] = std::exp(row[j] - mx);
      float inv = 1.f / sum;
      for (int j = 0; j < s; ++j) row[j] *= inv;
    }
  };
  unsigned t = Threads();
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < t; ++w)
    pool.emplace_back(rowsOf, int(s * uint64_t(w) / t), int(s * uint64_t(w + 1) / t));
  rowsOf(0, int(s / t));
  for (auto& th : pool) th.join();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, d, s, 1.f, scores, s, v, d, 0.f, o, d);
}
#endif

struct Loaded {
  IrProgram prog;
  std::vector<tessera::Buffer> buffers;
  std::vector<tessera::KernelArg> args;
  std::string error;
  bool verified = false;

  float* host(size_t i) const { return static_cast<float*>(buffers[i].host_pointer()); }
  tessera::Status run(const tessera::Stream& s) const {
    tessera::Status st = prog.program.Run(s, args);
    return st.ok() ? s.synchronize() : st;
  }
};

Loaded* Load(benchmark::State& state, BenchEnv* env, int s) {
  static std::map<int, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[s];
  if (!slot) {
    slot = std::make_unique<Loaded>();
    Loaded& l = *slot;
    if (!CompileGraphIR(AttentionProgram(s), env->device, {}, &l.prog, &l.error)) {
    } else {
      l.buffers.reserve(l.prog.shapes.size());  // KernelArg keeps &Buffer
      for (size_t i = 0; i < l.prog.shapes.size(); ++i) {
        size_t n = 1;
        for (int64_t dim : l.prog.shapes[i]) n *= static_cast<size_t>(dim);
        auto buf = env->device.allocate(n * sizeof(float));
        if (!buf.ok()) { l.error = buf.status().ToString(); break; }
        l.buffers.push_back(*buf);
        float* p = l.host(i);
        if (!p) { l.error = "cpu buffer without a host pointer"; break; }
        auto v = Random(n, 17 + static_cast<unsigned>(i));
        std::copy(v.begin(), v.end(), p);
        l.args.push_back(tessera::KernelArg::buffer(l.buffers.back()));
      }
      if (l.error.empty() && l.buffers.size() != 4)
        l.error = "expected 4 buffers (q, kt, v, o), got " + std::to_string(l.buffers.size());
    }
  }
  if (!slot->error.empty()) {
    state.SkipWithError(slot->error.c_str());
    return nullptr;
  }
  return slot.get();
}

void BM_AttentionTessera(benchmark::State& state, int s) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  Loaded* l = Load(state, env, s);
  if (!l) return;
  if (!CheckOrSkip(state, l->run(env->stream), "launch + synchronize")) return;
#if TESSERA_BENCH_HAVE_OPENBLAS
  if (!l->verified) {  // against the unfused reference, once
    SetBlasThreads();
    std::vector<float> scores(size_t(s) * s), want(size_t(s) * kHeadDim);
    AttentionUnfused(s, l->host(0), l->host(1), l->host(2), scores.data(), want.data());
    double err = 0, ref = 1;
    for (size_t i = 0; i < want.size(); ++i) {
      err = std::max<double>(err, std::fabs(l->host(3)[i] - want[i]));
      ref = std::max<double>(ref, std::fabs(want[i]));
    }
    if (err / ref > 1e-4) {
      state.SkipWithError(("result differs from the OpenBLAS attention: relative error " +
                           std::to_string(err / ref)).c_str());
      return;
    }
    l->verified = true;
  }
#endif
  for (auto _ : state) {
    tessera::Status st = l->run(env->stream);
    if (!st.ok()) { CheckOrSkip(state, st, "launch + synchronize"); break; }
  }
  state.SetItemsProcessed(state.iterations() * 4 * int64_t(s) * s * kHeadDim);
  state.counters["groups"] = l->prog.grid[0] * l->prog.grid[1] * l->prog.grid[2];
}

#if TESSERA_BENCH_HAVE_OPENBLAS
void BM_AttentionOpenBLASUnfused(benchmark::State& state, int s) {
  SetBlasThreads();
  size_t n = size_t(s) * kHeadDim;
  auto q = Random(n, 17), k = Random(n, 18), v = Random(n, 19);
  std::vector<float> scores(size_t(s) * s), o(n);
  AttentionUnfused(s, q.data(), k.data(), v.data(), scores.data(), o.data());  // warm-up
  for (auto _ : state) {
    AttentionUnfused(s, q.data(), k.data(), v.data(), scores.data(), o.data());
    benchmark::DoNotOptimize(o.data());
  }
  state.SetItemsProcessed(state.iterations() * 4 * int64_t(s) * s * kHeadDim);
  state.counters["threads"] = Threads();
}
#endif

}  // namespace

void RegisterAttentionBenchmarks(const RegisterOptions& options) {
#if TESSERA_BENCH_HAVE_IR
  auto real = [&](benchmark::internal::Benchmark* b) {
    Configure(b, options, 0.5)->UseRealTime()->Unit(benchmark::kMillisecond);
  };
  // 1000: a sequence that fits no block (a partial query and key block).
  for (int s : {1000, 1024, 2048}) {
    real(benchmark::RegisterBenchmark(("attention_f32/tessera_cpu/" + std::to_string(s)).c_str(),
                                      BM_AttentionTessera, s));
#if TESSERA_BENCH_HAVE_OPENBLAS
    real(benchmark::RegisterBenchmark(
        ("attention_f32/openblas_unfused/" + std::to_string(s)).c_str(),
        BM_AttentionOpenBLASUnfused, s));
#endif
  }
#else
  (void)options;
#endif
}

}  // namespace tessera_bench
