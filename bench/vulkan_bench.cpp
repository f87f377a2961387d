// Tessera on Vulkan against raw Vulkan, in one run (issue 5):
//
//   dispatch_small/{tessera_vulkan,raw_vulkan}   per dispatch, kSmallDispatches
//       small kernels in order on one stream, then one wait.  Raw: one command
//       buffer (bind once; push + dispatch + barrier each), one submit, one
//       fence wait.
//   submit_wait/{...}      one tiny dispatch + wait for it.  Raw: record it,
//       vkQueueSubmit with a fence, vkWaitForFences.
//   copy/{...}/64MiB       device buffer -> device buffer + wait (bytes/s).
//       Raw: vkCmdCopyBuffer, submit, fence wait.
//   saxpy/{...}/16M        y = a*x + y on 16M floats + wait (bytes/s: 12 per
//       element).
//   saxpy/tessera_vulkan_tile_ir/16M   the same, but the kernel is
//       examples/saxpy.mlir (Tile IR, sized to 16M) compiled by Tessera's
//       own SPIR-V code generator (tessera::spv::compileForVulkan), against
//       the same raw reference: what Tessera's generated code costs.
//
// Otherwise both sides use the same SPIR-V (bench/vulkan_shaders, compiled at
// build time), the same physical device (the first with a compute queue) and
// memory of the same kind; every raw submission ends with the host barrier a
// Tessera stream adds, and consecutive raw operations are separated by the
// full barrier a Tessera stream keeps between them, so both do the same work.
#include "vulkan_bench.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gemm_bench.hpp"
#include "vulkan_raw.hpp"
#if defined(TESSERA_BENCH_HAVE_IR)
#include "ir_compile.hpp"
#endif

namespace tessera_bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSmallDispatches = 256;  // per iteration of dispatch_small
constexpr uint32_t kSmallLanes = 64;   // small.comp's LocalSize
constexpr uint64_t kCopyBytes = 64 * kMiB;
constexpr uint32_t kSaxpyN = 16u << 20;           // 16M floats
constexpr uint32_t kSaxpyGroup = 256;             // saxpy.comp's LocalSize
// saxpy.comp takes four floats per lane (vec4).
constexpr uint32_t kSaxpyGridX = kSaxpyN / 4 / kSaxpyGroup;
constexpr uint32_t kSaxpyGridY = 1;
static_assert(kSaxpyGridX * kSaxpyGroup * 4 == kSaxpyN, "the grid covers n");

std::string ShaderDir() {
  if (const char* env = std::getenv("TESSERA_BENCH_VULKAN_SHADERS"); env && *env) return env;
#ifdef TESSERA_BENCH_VULKAN_SHADER_DIR
  return TESSERA_BENCH_VULKAN_SHADER_DIR;
#else
  return "";
#endif
}

// The SPIR-V words of bench/vulkan_shaders/<name>.comp, or empty.
std::vector<uint32_t> LoadSpirv(const std::string& name, std::string* error) {
  const std::string path = ShaderDir() + "/" + name + ".spv";
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (bytes.empty() || bytes.size() % 4) {
    *error = "not available: cannot read " + path +
             " (built from bench/vulkan_shaders with glslangValidator; "
             "TESSERA_BENCH_VULKAN_SHADERS overrides the folder)";
    return {};
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

// Every skip for a missing Vulkan starts with "not available: ", on both
// sides, so a machine without Vulkan reads the same in every Vulkan
// benchmark (and main.cpp does not count it as a failure).
std::string NotAvailable(const std::string& why) {
  if (why.rfind("not available", 0) == 0) return why;
  return "not available: " + why;
}

// ------------------------------------------------------------- Tessera side

struct VulkanEnv {
  tessera::Status status;
  tessera::Runtime runtime;
  tessera::Device device;
  tessera::Stream stream;  // a non-default stream
  tessera::Executable small_exe, saxpy_exe;
  tessera::Kernel small, saxpy;
};

tessera::Status LoadKernel(const tessera::Device& device, const char* name,
                           tessera::Executable* exe, tessera::Kernel* kernel) {
  std::string error;
  std::vector<uint32_t> words = LoadSpirv(name, &error);
  if (words.empty()) return tessera::Status(tessera::StatusCode::kUnavailable, error);
  auto e = device.load_executable("spirv", words.data(), words.size() * 4);
  if (!e.ok()) return e.status();
  *exe = std::move(e).value();
  auto k = exe->kernel(name);
  if (!k.ok()) return k.status();
  *kernel = std::move(k).value();
  return tessera::Status();
}

void CreateVulkanEnv(VulkanEnv& env) {
  tessera::RuntimeOptions options;
  options.backend = "vulkan";
  auto runtime = tessera::Runtime::Create(options);
  if (!runtime.ok()) {
    env.status = runtime.status();
    return;
  }
  env.runtime = std::move(runtime).value();
  if (env.runtime.devices().empty()) {
    env.status = tessera::Status(tessera::StatusCode::kUnavailable,
                                 "the vulkan backend reported no device");
    return;
  }
  env.device = env.runtime.devices().front();
  auto stream = env.device.create_stream();
  if (!stream.ok()) {
    env.status = stream.status();
    return;
  }
  env.stream = std::move(stream).value();
  env.status = LoadKernel(env.device, "small", &env.small_exe, &env.small);
  if (env.status.ok()) env.status = LoadKernel(env.device, "saxpy", &env.saxpy_exe, &env.saxpy);
}

VulkanEnv* VulkanEnvOrSkip(benchmark::State& state) {
  static VulkanEnv* env = [] {
    auto* e = new VulkanEnv;  // leaked, like Env()
    CreateVulkanEnv(*e);
    return e;
  }();
  if (!env->status.ok()) {
    // No driver / no loader: "not available"; anything else is a failure.
    const std::string why = env->status.code() == tessera::StatusCode::kUnavailable
                                ? NotAvailable(env->status.message())
                                : env->status.ToString();
    state.SkipWithError(why.c_str());
    return nullptr;
  }
  return env;
}

bool Ok(benchmark::State& state, const tessera::Status& s, const char* what) {
  return CheckOrSkip(state, s, what);
}

tessera::StatusOr<tessera::Buffer> Allocate(VulkanEnv& env, uint64_t size) {
  return env.device.allocate(size, TS_BUFFER_DEVICE);
}

void BM_DispatchSmallTessera(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  auto b = Allocate(*env, kSmallLanes * 4);
  if (!Ok(state, b.status(), "allocate")) return;
  tessera::Buffer buffer = std::move(b).value();
  if (!Ok(state, tessera::memset(buffer, 0, 0, kSmallLanes * 4), "memset")) return;
  const uint32_t one = 1;
  const std::vector<tessera::KernelArg> args = {tessera::KernelArg::buffer(buffer),
                                                tessera::KernelArg::scalar(one)};
  const tessera::Stream& s = env->stream;
  auto run = [&]() -> tessera::Status {
    for (int i = 0; i < kSmallDispatches; ++i) {
      tessera::Status st = s.launch(env->small, {1, 1, 1}, {kSmallLanes, 1, 1}, args);
      if (!st.ok()) return st;
    }
    return s.synchronize();
  };
  if (!Ok(state, run(), "warm-up")) return;
  uint64_t rounds = 1;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    tessera::Status st = run();
    const auto t1 = Clock::now();
    if (!Ok(state, st, "launches + synchronize")) break;
    ++rounds;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kSmallDispatches);
  }
  // Every dispatch added 1 to every lane: check once, outside the timing.
  std::vector<uint32_t> h(kSmallLanes);
  if (tessera::copy(h.data(), buffer, kSmallLanes * 4).ok() &&
      h[kSmallLanes - 1] != rounds * kSmallDispatches)
    state.SkipWithError("dispatch_small/tessera_vulkan: wrong result");
  state.SetItemsProcessed(state.iterations());
  state.counters["dispatches_per_submit"] = kSmallDispatches;
  buffer.destroy().IgnoreError();
}

void BM_SubmitWaitTessera(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  auto b = Allocate(*env, kSmallLanes * 4);
  if (!Ok(state, b.status(), "allocate")) return;
  tessera::Buffer buffer = std::move(b).value();
  const uint32_t one = 1;
  const std::vector<tessera::KernelArg> args = {tessera::KernelArg::buffer(buffer),
                                                tessera::KernelArg::scalar(one)};
  const tessera::Stream& s = env->stream;
  if (!Ok(state, s.synchronize(), "synchronize")) return;
  for (auto _ : state) {
    tessera::Status st = s.launch(env->small, {1, 1, 1}, {kSmallLanes, 1, 1}, args);
    if (st.ok()) st = s.synchronize();
    if (!Ok(state, st, "launch + synchronize")) break;
  }
  state.SetItemsProcessed(state.iterations());
  buffer.destroy().IgnoreError();
}

void BM_CopyTessera(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  auto a = Allocate(*env, kCopyBytes), b = Allocate(*env, kCopyBytes);
  if (!Ok(state, a.status(), "allocate(64 MiB)") || !Ok(state, b.status(), "allocate(64 MiB)"))
    return;
  tessera::Buffer src = std::move(a).value(), dst = std::move(b).value();
  const tessera::Stream& s = env->stream;
  // Touch both buffers' pages once (and warm up).
  if (!Ok(state, s.memset_async(src, 0, 0x5a, kCopyBytes), "memset_async")) return;
  if (!Ok(state, s.memset_async(dst, 0, 0, kCopyBytes), "memset_async")) return;
  if (!Ok(state, s.copy_async(dst, src, kCopyBytes), "copy_async")) return;
  if (!Ok(state, s.synchronize(), "synchronize")) return;
  for (auto _ : state) {
    tessera::Status st = s.copy_async(dst, src, kCopyBytes);
    if (st.ok()) st = s.synchronize();
    if (!Ok(state, st, "copy_async + synchronize")) break;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kCopyBytes));
  src.destroy().IgnoreError();
  dst.destroy().IgnoreError();
}

// The saxpy benchmarks on the runtime: x = 1, y = 0, then per iteration
// `launch(x, y, alpha)` + synchronize, so after k launches y = k * alpha;
// checked outside the timing (every element, or the last one).
void RunSaxpy(benchmark::State& state, VulkanEnv* env, const char* name, bool check_all,
              const std::function<tessera::Status(const tessera::Buffer&, const tessera::Buffer&, float)>& launch) {
  const uint64_t bytes = uint64_t{kSaxpyN} * 4;
  auto a = Allocate(*env, bytes), b = Allocate(*env, bytes);
  if (!Ok(state, a.status(), "allocate(64 MiB)") || !Ok(state, b.status(), "allocate(64 MiB)"))
    return;
  tessera::Buffer x = std::move(a).value(), y = std::move(b).value();
  const tessera::Stream& s = env->stream;
  if (!Ok(state, s.memset_async(y, 0, 0, bytes), "memset_async")) return;
  std::vector<float> host(kSaxpyN, 1.0f);
  if (!Ok(state, s.synchronize(), "synchronize")) return;
  if (!Ok(state, tessera::copy(x, host.data(), bytes), "copy")) return;
  const float alpha = 2.0f;
  auto once = [&] {
    tessera::Status st = launch(x, y, alpha);
    return st.ok() ? s.synchronize() : st;
  };
  if (!Ok(state, once(), "warm-up launch + synchronize")) return;
  float launches = 1;
  for (auto _ : state) {
    if (!Ok(state, once(), "launch + synchronize")) break;
    launches += 1;
  }
  bool wrong;
  if (check_all) {
    wrong = tessera::copy(host.data(), y, bytes).ok() &&
            std::any_of(host.begin(), host.end(), [&](float v) { return v != launches * alpha; });
  } else {
    float last = 0;
    wrong = tessera::copy(&last, tessera::MemoryRef(y, bytes - 4), 4).ok() && last != launches * alpha;
  }
  if (wrong) state.SkipWithError((std::string(name) + ": wrong result").c_str());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(3 * bytes));
  x.destroy().IgnoreError();
  y.destroy().IgnoreError();
}

void BM_SaxpyTessera(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  RunSaxpy(state, env, "saxpy/tessera_vulkan", /*check_all=*/false,
           [&](const tessera::Buffer& x, const tessera::Buffer& y, float alpha) {
             const std::vector<tessera::KernelArg> args = {
                 tessera::KernelArg::buffer(x), tessera::KernelArg::buffer(y),
                 tessera::KernelArg::scalar(alpha), tessera::KernelArg::scalar(kSaxpyN)};
             return env->stream.launch(env->saxpy, {kSaxpyGridX, kSaxpyGridY, 1}, {kSaxpyGroup, 1, 1},
                                       args);
           });
}

// saxpy/tessera_vulkan_tile_ir/16M: examples/saxpy.mlir (65536 floats, 64
// groups of 128 lanes, 8 floats per lane) with its sizes changed to 16M
// floats and 16384 groups -- the kernel's code is untouched -- compiled once
// by tessera::spv::compileForVulkan and run like saxpy/tessera_vulkan/16M.
#if defined(TESSERA_BENCH_HAVE_IR)
// Replaces every `from` in `text` by `to`; returns how many.
int ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  int n = 0;
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size())) {
    text->replace(at, from.size(), to);
    ++n;
  }
  return n;
}

tessera::Status SaxpyTileIrKernel(const tessera::Device& device, tessera::Executable* exe,
                                  tessera::Kernel* kernel, uint32_t grid[3], uint32_t group[3]) {
  std::string path = TESSERA_BENCH_EXAMPLES_DIR "/saxpy.mlir";
  if (const char* d = std::getenv("TESSERA_BENCH_EXAMPLES"); d && *d)
    path = std::string(d) + "/saxpy.mlir";
  std::ifstream f(path);
  if (!f) return tessera::Status(tessera::StatusCode::kNotFound, "cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  const int memrefs = ReplaceAll(&text, "memref<65536xf32>", "memref<16777216xf32>");
  const int grids = ReplaceAll(&text, "tessera_tile.grid = array<i64: 64>",
                               "tessera_tile.grid = array<i64: 16384>");
  if (memrefs == 0 || grids != 1)
    return tessera::Status(tessera::StatusCode::kFailedPrecondition,
                           path + " no longer has memref<65536xf32> arguments and a grid of 64 "
                                  "groups: update BM_SaxpyTesseraTileIr");
  SpirvKernel k;
  std::string error;
  if (!CompileTileIRForVulkan(text, "saxpy", &k, &error))
    return tessera::Status(tessera::StatusCode::kInternal, path + ": " + error);
  if (uint64_t{k.grid[0]} * k.group[0] * 8 != kSaxpyN)
    return tessera::Status(tessera::StatusCode::kInternal,
                           "the compiled saxpy does not cover 16M floats at 8 per lane");
  auto e = device.load_executable("spirv", k.words.data(), k.words.size() * 4);
  if (!e.ok()) return e.status();
  *exe = std::move(e).value();
  auto kk = exe->kernel(k.name);
  if (!kk.ok()) return kk.status();
  *kernel = std::move(kk).value();
  for (int i = 0; i < 3; ++i) grid[i] = k.grid[i], group[i] = k.group[i];
  return tessera::Status();
}

void BM_SaxpyTesseraTileIr(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  tessera::Executable exe;
  tessera::Kernel kernel;
  uint32_t grid[3], group[3];
  if (!Ok(state, SaxpyTileIrKernel(env->device, &exe, &kernel, grid, group),
          "examples/saxpy.mlir -> SPIR-V"))
    return;
  RunSaxpy(state, env, "saxpy/tessera_vulkan_tile_ir", /*check_all=*/true,
           [&](const tessera::Buffer& x, const tessera::Buffer& y, float alpha) {
             // The kernel's arguments in its signature's order: (%a: f32, %x, %y).
             const std::vector<tessera::KernelArg> args = {tessera::KernelArg::scalar(alpha),
                                                           tessera::KernelArg::buffer(x),
                                                           tessera::KernelArg::buffer(y)};
             return env->stream.launch(kernel, {grid[0], grid[1], grid[2]},
                                       {group[0], group[1], group[2]}, args);
           });
}
#else
void BM_SaxpyTesseraTileIr(benchmark::State& state) {
  state.SkipWithError("not available: tessera-bench was built without the IR (TESSERA_BUILD_IR)");
}
#endif

// gemm_f32/{tessera_vulkan,raw_vulkan}/1024: C = A B, 1024^3 f32.  The
// Tessera side is a Graph IR matmul compiled by the vulkan plugin's
// compiler (CompileProgramImage, the default GPU schedule) and run as a
// program; the reference is bench/vulkan_shaders/gemm.comp, a hand-tiled
// GLSL GEMM (128 x 128 tiles, 8 x 8 register blocks, shared-memory K slices,
// vec4 accesses), dispatched with raw Vulkan.  Both are checked once on
// 1024 sampled elements against a double-precision dot product.
constexpr uint32_t kGemmN = 1024;
constexpr uint32_t kGemmTile = 128;  // gemm.comp: a workgroup computes kGemmTile^2 of C

std::vector<float> GemmInput(unsigned seed) {
  std::vector<float> v(size_t{kGemmN} * kGemmN);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>((x >> 9) % 2001) / 1000.0f - 1.0f;  // [-1, 1]
  }
  return v;
}

// "" when `c` matches A B at 1024 sampled elements, else what differs.
std::string GemmCheck(const float* c, const std::vector<float>& a, const std::vector<float>& b) {
  const size_t n = kGemmN;
  uint32_t x = 12345;
  for (int s = 0; s < 1024; ++s) {
    x = x * 1664525u + 1013904223u;
    size_t i = (x >> 8) % n, j = (x >> 20) % n;
    double want = 0, mag = 0;
    for (size_t k = 0; k < n; ++k) {
      want += double(a[i * n + k]) * b[k * n + j];
      mag += std::abs(double(a[i * n + k]) * b[k * n + j]);
    }
    if (std::abs(c[i * n + j] - want) > 1e-5 * mag + 1e-6)
      return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(c[i * n + j]) +
             ", expected " + std::to_string(want);
  }
  return "";
}

void SetGemmItems(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 2 * int64_t{kGemmN} * kGemmN *
                          kGemmN);
}

#if defined(TESSERA_BENCH_HAVE_IR)
void BM_GemmTesseraVulkan(benchmark::State& state) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  IrProgram prog;
  std::string error;
  if (!CompileGraphIR(GemmProgram(kGemmN), env->device, {}, &prog, &error)) {
    state.SkipWithError(("gemm -> vulkan: " + error).c_str());
    return;
  }
  const uint64_t bytes = uint64_t{kGemmN} * kGemmN * 4;
  std::vector<tessera::Buffer> bufs;
  for (int i = 0; i < 3; ++i) {
    auto b = Allocate(*env, bytes);
    if (!Ok(state, b.status(), "allocate(4 MiB)")) return;
    bufs.push_back(std::move(b).value());
  }
  const std::vector<float> a = GemmInput(1), b = GemmInput(2);
  if (!Ok(state, tessera::copy(bufs[0], a.data(), bytes), "copy A") ||
      !Ok(state, tessera::copy(bufs[1], b.data(), bytes), "copy B"))
    return;
  const std::vector<tessera::KernelArg> args = {tessera::KernelArg::buffer(bufs[0]),
                                                tessera::KernelArg::buffer(bufs[1]),
                                                tessera::KernelArg::buffer(bufs[2])};
  auto once = [&] {
    tessera::Status st = prog.program.Run(env->stream, args);
    return st.ok() ? env->stream.synchronize() : st;
  };
  if (!Ok(state, once(), "Program::Run + synchronize")) return;
  std::vector<float> c(size_t{kGemmN} * kGemmN);
  if (!Ok(state, tessera::copy(c.data(), bufs[2], bytes), "copy C")) return;
  if (std::string why = GemmCheck(c.data(), a, b); !why.empty()) {
    state.SkipWithError(("gemm_f32/tessera_vulkan: wrong result: " + why).c_str());
    return;
  }
  for (auto _ : state)
    if (!Ok(state, once(), "Program::Run + synchronize")) break;
  SetGemmItems(state);
}
#else
void BM_GemmTesseraVulkan(benchmark::State& state) {
  state.SkipWithError("not available: tessera-bench was built without the IR (TESSERA_BUILD_IR)");
}
#endif

// overlap/{serial,overlapped}/tessera_vulkan: kOverlapLaunches saxpy
// launches on 4M floats and host work that lasts as long as they do (a
// sleep, measured once: a busy host would take the cores lavapipe computes
// on).  serial: launches, synchronize, host work.  overlapped: launches,
// host work, synchronize.  With the device working while the host does, the
// overlapped time approaches half the serial one; a runtime that holds the
// launches until synchronize makes both equal (compare.py prints the ratio).
constexpr int kOverlapLaunches = 4;
constexpr uint32_t kOverlapN = 4u << 20;

void BM_OverlapTessera(benchmark::State& state, bool overlapped) {
  VulkanEnv* env = VulkanEnvOrSkip(state);
  if (!env) return;
  const uint64_t bytes = uint64_t{kOverlapN} * 4;
  auto a = Allocate(*env, bytes), b = Allocate(*env, bytes);
  if (!Ok(state, a.status(), "allocate") || !Ok(state, b.status(), "allocate")) return;
  tessera::Buffer x = std::move(a).value(), y = std::move(b).value();
  const tessera::Stream& s = env->stream;
  if (!Ok(state, s.memset_async(x, 0, 0, bytes), "memset_async")) return;
  if (!Ok(state, s.memset_async(y, 0, 0, bytes), "memset_async")) return;
  const float alpha = 2.0f;
  const uint32_t n = kOverlapN;
  const std::vector<tessera::KernelArg> args = {
      tessera::KernelArg::buffer(x), tessera::KernelArg::buffer(y),
      tessera::KernelArg::scalar(alpha), tessera::KernelArg::scalar(n)};
  auto launches = [&]() -> tessera::Status {
    for (int i = 0; i < kOverlapLaunches; ++i) {
      tessera::Status st = s.launch(env->saxpy, {n / 4 / kSaxpyGroup, 1, 1},
                                    {kSaxpyGroup, 1, 1}, args);
      if (!st.ok()) return st;
    }
    return tessera::Status();
  };
  // The host work: as long as the device work alone (median of 3).
  std::vector<double> alone;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    tessera::Status st = launches();
    if (st.ok()) st = s.synchronize();
    if (!Ok(state, st, "launches + synchronize")) return;
    alone.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(alone.begin(), alone.end());
  const auto host_work = std::chrono::duration<double>(alone[1]);
  for (auto _ : state) {
    tessera::Status st = launches();
    if (st.ok() && !overlapped) st = s.synchronize();
    std::this_thread::sleep_for(host_work);
    if (st.ok() && overlapped) st = s.synchronize();
    if (!Ok(state, st, "launches + host work + synchronize")) break;
  }
  state.counters["host_work_ms"] = alone[1] * 1e3;
  x.destroy().IgnoreError();
  y.destroy().IgnoreError();
}

// ------------------------------------------------------------- raw side

#if defined(TESSERA_BENCH_HAVE_VULKAN)

rawvk::Context* RawOrSkip(benchmark::State& state) {
  rawvk::Context& c = rawvk::Raw();
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return nullptr;
  }
  return &c;
}

bool RawOk(benchmark::State& state, bool ok, const std::string& error) {
  if (!ok) state.SkipWithError(error.c_str());
  return ok;
}

// Makes the submission's writes visible to the host, as a Tessera stream
// does at the end of every submitted batch.
void HostBarrier(rawvk::Context& c) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  c.vkCmdPipelineBarrier(c.cb,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// Owns the raw objects of one benchmark.
struct RawScope {
  rawvk::Context& c;
  std::vector<rawvk::Buffer> buffers;
  std::vector<rawvk::Kernel> kernels;
  explicit RawScope(rawvk::Context& ctx) : c(ctx) {}
  ~RawScope() {
    c.vkDeviceWaitIdle(c.device);
    for (auto& k : kernels) rawvk::DestroyKernel(c, k);
    for (auto& b : buffers) rawvk::DestroyBuffer(c, b);
  }
  rawvk::Buffer* Buffer(uint64_t size, std::string* error) {
    rawvk::Buffer b;
    bool ok = rawvk::CreateBuffer(c, size, &b, error);
    buffers.push_back(b);
    return ok ? &buffers.back() : nullptr;
  }
};

void BM_DispatchSmallRaw(benchmark::State& state) {
  rawvk::Context* c = RawOrSkip(state);
  if (!c) return;
  std::string error;
  std::vector<uint32_t> spv = LoadSpirv("small", &error);
  if (!RawOk(state, !spv.empty(), error)) return;
  RawScope scope(*c);
  scope.buffers.reserve(1);
  rawvk::Buffer* buffer = scope.Buffer(kSmallLanes * 4, &error);
  if (!RawOk(state, buffer != nullptr, error)) return;
  if (buffer->mapped) std::memset(buffer->mapped, 0, kSmallLanes * 4);
  scope.kernels.emplace_back();
  rawvk::Kernel& k = scope.kernels.back();
  if (!RawOk(state, rawvk::CreateKernel(*c, spv, "small", {buffer}, 4, &k, &error), error))
    return;
  const uint32_t one = 1;
  auto run = [&]() -> bool {
    if (!rawvk::Begin(*c, &error)) return false;
    rawvk::Bind(*c, k);
    for (int i = 0; i < kSmallDispatches; ++i) {
      if (i) rawvk::Barrier(*c);
      rawvk::Dispatch(*c, k, &one, 1, 1, 1);
    }
    HostBarrier(*c);
    return rawvk::EndSubmitWait(*c, &error);
  };
  if (!RawOk(state, run(), error)) return;
  uint64_t rounds = 1;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    bool ok = run();
    const auto t1 = Clock::now();
    if (!RawOk(state, ok, error)) break;
    ++rounds;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kSmallDispatches);
  }
  if (buffer->mapped &&
      static_cast<const uint32_t*>(buffer->mapped)[kSmallLanes - 1] != rounds * kSmallDispatches)
    state.SkipWithError("dispatch_small/raw_vulkan: wrong result");
  state.SetItemsProcessed(state.iterations());
  state.counters["dispatches_per_submit"] = kSmallDispatches;
}

void BM_SubmitWaitRaw(benchmark::State& state) {
  rawvk::Context* c = RawOrSkip(state);
  if (!c) return;
  std::string error;
  std::vector<uint32_t> spv = LoadSpirv("small", &error);
  if (!RawOk(state, !spv.empty(), error)) return;
  RawScope scope(*c);
  scope.buffers.reserve(1);
  rawvk::Buffer* buffer = scope.Buffer(kSmallLanes * 4, &error);
  if (!RawOk(state, buffer != nullptr, error)) return;
  scope.kernels.emplace_back();
  rawvk::Kernel& k = scope.kernels.back();
  if (!RawOk(state, rawvk::CreateKernel(*c, spv, "small", {buffer}, 4, &k, &error), error))
    return;
  const uint32_t one = 1;
  for (auto _ : state) {
    bool ok = rawvk::Begin(*c, &error);
    if (ok) {
      rawvk::Bind(*c, k);
      rawvk::Dispatch(*c, k, &one, 1, 1, 1);
      HostBarrier(*c);
      ok = rawvk::EndSubmitWait(*c, &error);
    }
    if (!RawOk(state, ok, error)) break;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CopyRaw(benchmark::State& state) {
  rawvk::Context* c = RawOrSkip(state);
  if (!c) return;
  std::string error;
  RawScope scope(*c);
  scope.buffers.reserve(2);
  rawvk::Buffer* src = scope.Buffer(kCopyBytes, &error);
  if (!RawOk(state, src != nullptr, error)) return;
  rawvk::Buffer* dst = scope.Buffer(kCopyBytes, &error);
  if (!RawOk(state, dst != nullptr, error)) return;
  auto copy_once = [&]() -> bool {
    if (!rawvk::Begin(*c, &error)) return false;
    VkBufferCopy region{0, 0, kCopyBytes};
    c->vkCmdCopyBuffer(c->cb, src->buffer, dst->buffer, 1, &region);
    HostBarrier(*c);
    return rawvk::EndSubmitWait(*c, &error);
  };
  // Touch both buffers' pages once (and warm up), as the Tessera side does.
  if (src->mapped) std::memset(src->mapped, 0x5a, kCopyBytes);
  if (dst->mapped) std::memset(dst->mapped, 0, kCopyBytes);
  if (!RawOk(state, copy_once(), error)) return;
  for (auto _ : state)
    if (!RawOk(state, copy_once(), error)) break;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kCopyBytes));
}

void BM_SaxpyRaw(benchmark::State& state) {
  rawvk::Context* c = RawOrSkip(state);
  if (!c) return;
  std::string error;
  std::vector<uint32_t> spv = LoadSpirv("saxpy", &error);
  if (!RawOk(state, !spv.empty(), error)) return;
  const uint64_t bytes = uint64_t{kSaxpyN} * 4;
  RawScope scope(*c);
  scope.buffers.reserve(2);
  rawvk::Buffer* x = scope.Buffer(bytes, &error);
  if (!RawOk(state, x != nullptr, error)) return;
  rawvk::Buffer* y = scope.Buffer(bytes, &error);
  if (!RawOk(state, y != nullptr, error)) return;
  if (x->mapped) {
    float* xf = static_cast<float*>(x->mapped);
    for (uint32_t i = 0; i < kSaxpyN; ++i) xf[i] = 1.0f;
  }
  if (y->mapped) std::memset(y->mapped, 0, bytes);
  scope.kernels.emplace_back();
  rawvk::Kernel& k = scope.kernels.back();
  if (!RawOk(state, rawvk::CreateKernel(*c, spv, "saxpy", {x, y}, 8, &k, &error), error))
    return;
  struct {
    float a;
    uint32_t n;
  } push{2.0f, kSaxpyN};
  auto once = [&]() -> bool {
    if (!rawvk::Begin(*c, &error)) return false;
    rawvk::Bind(*c, k);
    rawvk::Dispatch(*c, k, &push, kSaxpyGridX, kSaxpyGridY, 1);
    HostBarrier(*c);
    return rawvk::EndSubmitWait(*c, &error);
  };
  if (!RawOk(state, once(), error)) return;
  float launches = 1;
  for (auto _ : state) {
    if (!RawOk(state, once(), error)) break;
    launches += 1;
  }
  if (y->mapped && static_cast<const float*>(y->mapped)[kSaxpyN - 1] != launches * push.a)
    state.SkipWithError("saxpy/raw_vulkan: wrong result");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(3 * bytes));
}

void BM_GemmRaw(benchmark::State& state) {
  rawvk::Context* c = RawOrSkip(state);
  if (!c) return;
  std::string error;
  std::vector<uint32_t> spv = LoadSpirv("gemm", &error);
  if (!RawOk(state, !spv.empty(), error)) return;
  const uint64_t bytes = uint64_t{kGemmN} * kGemmN * 4;
  RawScope scope(*c);
  scope.buffers.reserve(3);  // Buffer() returns pointers into it
  rawvk::Buffer* bufs[3];
  for (auto& p : bufs) {
    p = scope.Buffer(bytes, &error);
    if (!RawOk(state, p != nullptr, error)) return;
  }
  if (!RawOk(state, bufs[0]->mapped && bufs[1]->mapped && bufs[2]->mapped,
             "gemm_f32/raw_vulkan: device memory is not host-visible (the reference fills it by mapping)"))
    return;
  const std::vector<float> a = GemmInput(1), b = GemmInput(2);
  std::memcpy(bufs[0]->mapped, a.data(), bytes);
  std::memcpy(bufs[1]->mapped, b.data(), bytes);
  scope.kernels.emplace_back();
  rawvk::Kernel& k = scope.kernels.back();
  if (!RawOk(state, rawvk::CreateKernel(*c, spv, "gemm", {bufs[0], bufs[1], bufs[2]}, 12, &k, &error), error))
    return;
  const uint32_t push[3] = {kGemmN, kGemmN, kGemmN};
  auto once = [&]() -> bool {
    if (!rawvk::Begin(*c, &error)) return false;
    rawvk::Bind(*c, k);
    rawvk::Dispatch(*c, k, push, kGemmN / kGemmTile, kGemmN / kGemmTile, 1);
    HostBarrier(*c);
    return rawvk::EndSubmitWait(*c, &error);
  };
  if (!RawOk(state, once(), error)) return;
  if (std::string why = GemmCheck(static_cast<const float*>(bufs[2]->mapped), a, b); !why.empty()) {
    state.SkipWithError(("gemm_f32/raw_vulkan: wrong result: " + why).c_str());
    return;
  }
  for (auto _ : state)
    if (!RawOk(state, once(), error)) break;
  SetGemmItems(state);
}

#else  // built without <vulkan/vulkan.h>

void BM_RawUnavailable(benchmark::State& state) {
  state.SkipWithError(rawvk::Availability().c_str());
}
#define BM_DispatchSmallRaw BM_RawUnavailable
#define BM_SubmitWaitRaw BM_RawUnavailable
#define BM_CopyRaw BM_RawUnavailable
#define BM_SaxpyRaw BM_RawUnavailable
#define BM_GemmRaw BM_RawUnavailable

#endif

}  // namespace

void RegisterVulkanBenchmarks(const RegisterOptions& o) {
  using benchmark::RegisterBenchmark;
  // Per-dispatch manual time is 1/kSmallDispatches of the wall time.
  Configure(RegisterBenchmark("dispatch_small/tessera_vulkan", BM_DispatchSmallTessera), o,
            0.2, kSmallDispatches)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("dispatch_small/raw_vulkan", BM_DispatchSmallRaw), o, 0.2,
            kSmallDispatches)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("submit_wait/tessera_vulkan", BM_SubmitWaitTessera), o, 0.2)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("submit_wait/raw_vulkan", BM_SubmitWaitRaw), o, 0.2)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("copy/tessera_vulkan/64MiB", BM_CopyTessera), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("copy/raw_vulkan/64MiB", BM_CopyRaw), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("saxpy/tessera_vulkan/16M", BM_SaxpyTessera), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("saxpy/raw_vulkan/16M", BM_SaxpyRaw), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("saxpy/tessera_vulkan_tile_ir/16M", BM_SaxpyTesseraTileIr), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("gemm_f32/tessera_vulkan/1024", BM_GemmTesseraVulkan), o, 0.5)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("gemm_f32/raw_vulkan/1024", BM_GemmRaw), o, 0.5)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("overlap/serial/tessera_vulkan", BM_OverlapTessera, false), o,
            0.5)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("overlap/overlapped/tessera_vulkan", BM_OverlapTessera, true), o,
            0.5)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace tessera_bench
