// Tessera on the cuda plugin against the raw CUDA driver API, in one run
// (issue 12's measurements):
//
//   launch_roundtrip/{tessera_cuda,raw_cuda}   one launch of an empty kernel
//       (1 group of 1 lane) on a created stream + synchronize of that stream.
//       Raw: cuLaunchKernel + cuStreamSynchronize.
//   launch_async/{tessera_cuda,raw_cuda}       per launch, 256 launches in a
//       row then one synchronize.
//   copy/{tessera_cuda,raw_cuda}_h2d_pinned/64MiB   pinned host -> device +
//       synchronize (bytes/s).  Raw: cuMemHostAlloc + cuMemcpyHtoDAsync.
//   compile/tessera_cuda_sm90a/{tiled_gemm,mlp}   examples/<name>.mlir ->
//       cubins (Tile IR -> NVVM -> PTX -> ptxas) in a warm process (the first
//       compile, which loads the compiler part and initializes LLVM, is not
//       timed; the cuda compiler keeps no cache).  Needs no GPU.
//   compile/tessera_cuda_sm90a/gemm_bf16_4096     the same for the sm_90a
//       GEMM (TMA + wgmma) of bench/programs/gemm_bf16.mlir.
//   compile/tessera_cuda_sm90a/attention_bf16_512  the same for the sm_90a
//       attention kernel of bench/programs/attention_bf16.mlir.
//   all_reduce/{tessera_cuda,raw_nccl}/64MiB/1dev   a sum all_reduce of 16M
//       f32 in place on device 0 (a communicator of one rank: the cost of
//       the call path around NCCL), + synchronize.  Tessera: the cuda
//       plugin's NCCL path (not deterministic); raw: libnccl.so.2
//       dlopen'ed by the benchmark, ncclCommInitAll + ncclAllReduce.
//
// Both sides run the same PTX (kEmptyPtx), on device 0's primary context.
// libcuda.so.1 is dlopen'ed by both: without a driver every cuda benchmark
// skips with "not available: ..." (main.cpp does not count that as a
// failure).  Built where cuda.h is found.
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <cuda.h>

#include "bench_env.hpp"
#if defined(TESSERA_BENCH_HAVE_IR)
#include "tessera/program_compiler.hpp"
#endif

namespace tessera_bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kAsyncLaunches = 256;
constexpr uint64_t kCopyBytes = 64 * kMiB;

constexpr char kEmptyPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry empty()\n{\n\tret;\n}\n";

std::string NotAvailable(const std::string& why) {
  if (why.rfind("not available", 0) == 0) return why;
  return "not available: " + why;
}

// ------------------------------------------------------------- raw driver

struct RawCuda {
  std::string error;  // why it is unusable
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  CUfunction empty = nullptr;

  template <typename F>
  bool Get(void* lib, F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) error = std::string("libcuda.so.1 has no ") + name;
    return f != nullptr;
  }
  bool Check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) error = std::string(what) + " failed: CUresult " + std::to_string(r);
    return r == CUDA_SUCCESS;
  }
  RawCuda() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      error = NotAvailable(e ? e : "libcuda.so.1 cannot be opened");
      return;
    }
    if (!Get(lib, cuInit, "cuInit") || !Get(lib, cuDeviceGet, "cuDeviceGet") ||
        !Get(lib, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") ||
        !Get(lib, cuCtxSetCurrent, "cuCtxSetCurrent") ||
        !Get(lib, cuModuleLoadData, "cuModuleLoadData") ||
        !Get(lib, cuModuleGetFunction, "cuModuleGetFunction") ||
        !Get(lib, cuStreamCreate, "cuStreamCreate") ||
        !Get(lib, cuStreamSynchronize, "cuStreamSynchronize") ||
        !Get(lib, cuLaunchKernel, "cuLaunchKernel") || !Get(lib, cuMemAlloc, "cuMemAlloc_v2") ||
        !Get(lib, cuMemHostAlloc, "cuMemHostAlloc") ||
        !Get(lib, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"))
      return;
    CUdevice dev = 0;
    CUmodule module = nullptr;
    if (!Check(cuInit(0), "cuInit")) {
      error = NotAvailable(error);
      return;
    }
    if (!Check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !Check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        !Check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
        !Check(cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate") ||
        !Check(cuModuleLoadData(&module, kEmptyPtx), "cuModuleLoadData") ||
        !Check(cuModuleGetFunction(&empty, module, "empty"), "cuModuleGetFunction"))
      return;
  }
};

RawCuda* RawOrSkip(benchmark::State& state) {
  static RawCuda* raw = new RawCuda;  // leaked, like Env()
  if (!raw->error.empty()) {
    state.SkipWithError(raw->error.c_str());
    return nullptr;
  }
  raw->cuCtxSetCurrent(raw->ctx);  // this thread
  return raw;
}

// ------------------------------------------------------------- Tessera side

struct CudaEnv {
  tessera::Status status;
  tessera::Runtime runtime;
  tessera::Device device;
  tessera::Stream stream;
  tessera::Executable exe;
  tessera::Kernel empty;
};

CudaEnv* CudaEnvOrSkip(benchmark::State& state) {
  static CudaEnv* env = [] {
    auto* e = new CudaEnv;  // leaked, like Env()
    tessera::RuntimeOptions options;
    options.backend = "cuda";
    auto runtime = tessera::Runtime::Create(options);
    if (!runtime.ok()) {
      e->status = runtime.status();
      return e;
    }
    e->runtime = std::move(runtime).value();
    if (e->runtime.devices().empty()) {
      e->status = tessera::Status(tessera::StatusCode::kUnavailable, "the cuda backend has no device");
      return e;
    }
    e->device = e->runtime.devices().front();
    auto stream = e->device.create_stream();
    if (!stream.ok()) {
      e->status = stream.status();
      return e;
    }
    e->stream = std::move(stream).value();
    auto exe = e->device.load_executable("ptx", kEmptyPtx, sizeof(kEmptyPtx));
    if (!exe.ok()) {
      e->status = exe.status();
      return e;
    }
    e->exe = std::move(exe).value();
    auto k = e->exe.kernel("empty");
    if (!k.ok()) {
      e->status = k.status();
      return e;
    }
    e->empty = std::move(k).value();
    return e;
  }();
  if (!env->status.ok()) {
    const std::string why = env->status.code() == tessera::StatusCode::kUnavailable
                                ? NotAvailable(env->status.message())
                                : env->status.ToString();
    state.SkipWithError(why.c_str());
    return nullptr;
  }
  return env;
}

const std::vector<tessera::KernelArg> kNoArgs;

void BM_LaunchRoundtripTessera(benchmark::State& state) {
  CudaEnv* env = CudaEnvOrSkip(state);
  if (!env) return;
  for (auto _ : state) {
    tessera::Status s = env->stream.launch(env->empty, {1, 1, 1}, {1, 1, 1}, kNoArgs);
    if (s.ok()) s = env->stream.synchronize();
    if (!CheckOrSkip(state, s, "launch + synchronize")) break;
  }
}

void BM_LaunchRoundtripRaw(benchmark::State& state) {
  RawCuda* raw = RawOrSkip(state);
  if (!raw) return;
  for (auto _ : state) {
    CUresult r = raw->cuLaunchKernel(raw->empty, 1, 1, 1, 1, 1, 1, 0, raw->stream, nullptr, nullptr);
    if (r == CUDA_SUCCESS) r = raw->cuStreamSynchronize(raw->stream);
    if (r != CUDA_SUCCESS) {
      state.SkipWithError(("cuLaunchKernel + cuStreamSynchronize: CUresult " + std::to_string(r)).c_str());
      break;
    }
  }
}

void BM_LaunchAsyncTessera(benchmark::State& state) {
  CudaEnv* env = CudaEnvOrSkip(state);
  if (!env) return;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    tessera::Status s;
    for (int i = 0; i < kAsyncLaunches && s.ok(); ++i)
      s = env->stream.launch(env->empty, {1, 1, 1}, {1, 1, 1}, kNoArgs);
    if (s.ok()) s = env->stream.synchronize();
    const auto t1 = Clock::now();
    if (!CheckOrSkip(state, s, "launches + synchronize")) break;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kAsyncLaunches);
  }
}

void BM_LaunchAsyncRaw(benchmark::State& state) {
  RawCuda* raw = RawOrSkip(state);
  if (!raw) return;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < kAsyncLaunches && r == CUDA_SUCCESS; ++i)
      r = raw->cuLaunchKernel(raw->empty, 1, 1, 1, 1, 1, 1, 0, raw->stream, nullptr, nullptr);
    if (r == CUDA_SUCCESS) r = raw->cuStreamSynchronize(raw->stream);
    const auto t1 = Clock::now();
    if (r != CUDA_SUCCESS) {
      state.SkipWithError(("cuLaunchKernel x256: CUresult " + std::to_string(r)).c_str());
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kAsyncLaunches);
  }
}

void BM_CopyH2DTessera(benchmark::State& state) {
  CudaEnv* env = CudaEnvOrSkip(state);
  if (!env) return;
  auto pinned = env->runtime.pinned_malloc(kCopyBytes);
  if (!CheckOrSkip(state, pinned.status(), "pinned_malloc(64 MiB)")) return;
  void* host = pinned.value();
  std::memset(host, 0x5a, kCopyBytes);
  auto b = env->device.allocate(kCopyBytes, TS_BUFFER_DEVICE);
  if (!CheckOrSkip(state, b.status(), "allocate(64 MiB)")) return;
  tessera::Buffer buffer = std::move(b).value();
  auto once = [&] {
    tessera::Status s = env->stream.copy_async(tessera::MemoryRef(buffer), host, kCopyBytes);
    return s.ok() ? env->stream.synchronize() : s;
  };
  if (CheckOrSkip(state, once(), "warm-up copy"))
    for (auto _ : state)
      if (!CheckOrSkip(state, once(), "copy_async + synchronize")) break;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kCopyBytes));
  buffer.destroy().IgnoreError();
  env->runtime.pinned_free(host).IgnoreError();
}

void BM_CopyH2DRaw(benchmark::State& state) {
  RawCuda* raw = RawOrSkip(state);
  if (!raw) return;
  static void* host = nullptr;  // kept: one allocation for the run
  static CUdeviceptr dev = 0;
  if (!host && (raw->cuMemHostAlloc(&host, kCopyBytes, 0) != CUDA_SUCCESS ||
                raw->cuMemAlloc(&dev, kCopyBytes) != CUDA_SUCCESS)) {
    state.SkipWithError("cuMemHostAlloc / cuMemAlloc (64 MiB) failed");
    return;
  }
  std::memset(host, 0x5a, kCopyBytes);
  auto once = [&] {
    CUresult r = raw->cuMemcpyHtoDAsync(dev, host, kCopyBytes, raw->stream);
    return r == CUDA_SUCCESS ? raw->cuStreamSynchronize(raw->stream) : r;
  };
  once();
  for (auto _ : state)
    if (once() != CUDA_SUCCESS) {
      state.SkipWithError("cuMemcpyHtoDAsync + cuStreamSynchronize failed");
      break;
    }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kCopyBytes));
}

// NCCL for the raw side, dlopen'ed here (never by the core).
struct RawNccl {
  std::string error;
  void* comm = nullptr;
  CUdeviceptr data = 0;
  int (*allreduce)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  RawNccl(RawCuda* raw, size_t bytes) {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      error = NotAvailable(e ? e : "libnccl.so.2 cannot be opened");
      return;
    }
    auto init = reinterpret_cast<int (*)(void**, int, const int*)>(dlsym(lib, "ncclCommInitAll"));
    allreduce = reinterpret_cast<decltype(allreduce)>(dlsym(lib, "ncclAllReduce"));
    const int devs[1] = {0};
    if (!init || !allreduce) error = "libnccl.so.2 lacks ncclCommInitAll or ncclAllReduce";
    else if (init(&comm, 1, devs) != 0) error = "ncclCommInitAll failed";
    else if (raw->cuMemAlloc(&data, bytes) != CUDA_SUCCESS) error = "cuMemAlloc failed";
  }
};

constexpr uint64_t kAllReduceBytes = 64 * kMiB;

void BM_AllReduceTessera(benchmark::State& state) {
  CudaEnv* env = CudaEnvOrSkip(state);
  if (!env) return;
  auto comm = env->runtime.create_communicator({env->device});
  if (!CheckOrSkip(state, comm.status(), "create_communicator")) return;
  auto b = env->device.allocate(kAllReduceBytes);
  if (!CheckOrSkip(state, b.status(), "allocate(64 MiB)")) return;
  const std::vector<tessera::Buffer> bufs = {*b};
  const std::vector<tessera::Stream> streams = {env->stream};
  auto once = [&] {
    tessera::Status s = comm->all_reduce(bufs, bufs, kAllReduceBytes / 4, TS_DTYPE_F32, TS_REDUCE_SUM, streams, false);
    return s.ok() ? env->stream.synchronize() : s;
  };
  if (CheckOrSkip(state, once(), "warm-up all_reduce"))
    for (auto _ : state)
      if (!CheckOrSkip(state, once(), "all_reduce + synchronize")) break;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kAllReduceBytes));
}

void BM_AllReduceRawNccl(benchmark::State& state) {
  RawCuda* raw = RawOrSkip(state);
  if (!raw) return;
  static RawNccl* nccl = new RawNccl(raw, kAllReduceBytes);  // leaked, like Env()
  if (!nccl->error.empty()) {
    state.SkipWithError(nccl->error.c_str());
    return;
  }
  void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(nccl->data));
  auto once = [&] {
    const int r = nccl->allreduce(p, p, kAllReduceBytes / 4, /*ncclFloat32=*/7, /*ncclSum=*/0, nccl->comm, raw->stream);
    return r == 0 && raw->cuStreamSynchronize(raw->stream) == CUDA_SUCCESS;
  };
  once();
  for (auto _ : state)
    if (!once()) {
      state.SkipWithError("ncclAllReduce + cuStreamSynchronize failed");
      break;
    }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kAllReduceBytes));
}

#if defined(TESSERA_BENCH_HAVE_IR)
void BM_CompileCuda(benchmark::State& state, const char* example) {
  tessera::ProgramCompileOptions options;
  options.target = "cuda:sm_90a";
  // "gemm_bf16_4096" is a function of bench/programs/gemm_bf16.mlir,
  // "attention_bf16_512" of bench/programs/attention_bf16.mlir; the others
  // are examples.
  std::string path = std::string(TESSERA_BENCH_EXAMPLES_DIR) + "/" + example + ".mlir";
  for (const char* program : {"gemm_bf16", "attention_bf16"})
    if (std::string(example).rfind(program, 0) == 0) {
      options.function = example;
      path = std::string(TESSERA_BENCH_EXAMPLES_DIR) + "/../bench/programs/" + program + ".mlir";
    }
  const tessera::ProgramSource source = tessera::ProgramSource::File(path);
  auto once = [&]() { return tessera::CompileProgramImage(source, options).status(); };
  if (!CheckOrSkip(state, once(), "first compile (untimed)")) return;
  for (auto _ : state)
    if (!CheckOrSkip(state, once(), "compile")) break;
}
#endif

}  // namespace

void RegisterCudaBenchmarks(const RegisterOptions& o) {
#if defined(TESSERA_BENCH_HAVE_IR)
  for (const char* example : {"tiled_gemm", "mlp", "gemm_bf16_4096", "attention_bf16_512"})
    Configure(benchmark::RegisterBenchmark(
                  (std::string("compile/tessera_cuda_sm90a/") + example).c_str(), BM_CompileCuda, example),
              o, 0.5)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#endif
  using benchmark::RegisterBenchmark;
  Configure(RegisterBenchmark("launch_roundtrip/tessera_cuda", BM_LaunchRoundtripTessera), o, 0.2)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("launch_roundtrip/raw_cuda", BM_LaunchRoundtripRaw), o, 0.2)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("launch_async/tessera_cuda", BM_LaunchAsyncTessera), o, 0.2, kAsyncLaunches)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("launch_async/raw_cuda", BM_LaunchAsyncRaw), o, 0.2, kAsyncLaunches)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("copy/tessera_cuda_h2d_pinned/64MiB", BM_CopyH2DTessera), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("copy/raw_cuda_h2d_pinned/64MiB", BM_CopyH2DRaw), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("all_reduce/tessera_cuda/64MiB/1dev", BM_AllReduceTessera), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("all_reduce/raw_nccl/64MiB/1dev", BM_AllReduceRawNccl), o, 0.3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace tessera_bench
