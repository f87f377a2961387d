// Copy bandwidth: pinned host memory <-> device buffer through a stream,
// against std::memcpy of the same size in the same run.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "bench_env.hpp"

namespace tessera_bench {
namespace {

constexpr uint64_t kCopyBytes = 64 * kMiB;

enum class Direction { kHostToDevice, kDeviceToHost };

// Owns a pinned host allocation of the runtime.
struct PinnedMemory {
  tessera::Runtime runtime;
  void* pointer = nullptr;
  ~PinnedMemory() {
    if (pointer) runtime.pinned_free(pointer).IgnoreError();
  }
};

void BM_CopyPinned(benchmark::State& state, Direction direction) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;

  PinnedMemory host;
  host.runtime = env->runtime;
  auto pinned = env->runtime.pinned_malloc(kCopyBytes);
  if (!CheckOrSkip(state, pinned.status(), "pinned_malloc(64 MiB)")) return;
  host.pointer = pinned.value();
  std::memset(host.pointer, 0x5a, kCopyBytes);  // fault every page in

  auto buffer_or = env->device.allocate(kCopyBytes, TS_BUFFER_DEVICE);
  if (!CheckOrSkip(state, buffer_or.status(), "allocate(64 MiB)")) return;
  tessera::Buffer buffer = std::move(buffer_or).value();

  const tessera::Stream& stream = env->stream;
  auto copy_once = [&]() -> tessera::Status {
    tessera::Status s =
        direction == Direction::kHostToDevice
            ? stream.copy_async(tessera::MemoryRef(buffer), host.pointer,
                                kCopyBytes)
            : stream.copy_async(host.pointer, tessera::MemoryRef(buffer),
                                kCopyBytes);
    if (!s.ok()) return s;
    return stream.synchronize();
  };
  // Untimed warm-up: touches the device buffer's pages too.
  if (!CheckOrSkip(state, copy_once(), "warm-up copy_async + synchronize"))
    return;

  for (auto _ : state) {
    tessera::Status s = copy_once();
    if (!s.ok()) {
      CheckOrSkip(state, s, "copy_async + synchronize");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kCopyBytes));
  buffer.destroy().IgnoreError();
}

void BM_CopyH2DPinned(benchmark::State& state) {
  BM_CopyPinned(state, Direction::kHostToDevice);
}
void BM_CopyD2HPinned(benchmark::State& state) {
  BM_CopyPinned(state, Direction::kDeviceToHost);
}

// copy/memcpy: the reference, one std::memcpy between two pre-faulted,
// page-aligned host buffers of the same size, on the calling thread.
void BM_CopyMemcpy(benchmark::State& state) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> src(std::aligned_alloc(4096, kCopyBytes));
  std::unique_ptr<void, Free> dst(std::aligned_alloc(4096, kCopyBytes));
  if (!src || !dst) {
    state.SkipWithError("aligned_alloc(64 MiB) failed");
    return;
  }
  std::memset(src.get(), 0x5a, kCopyBytes);
  std::memset(dst.get(), 0, kCopyBytes);
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(dst.get());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kCopyBytes));
}

}  // namespace

void RegisterCopyBenchmarks(const RegisterOptions& o) {
  using benchmark::RegisterBenchmark;
  Configure(RegisterBenchmark("copy/tessera_cpu_h2d_pinned/64MiB",
                              BM_CopyH2DPinned), o, 0.25)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("copy/tessera_cpu_d2h_pinned/64MiB",
                              BM_CopyD2HPinned), o, 0.25)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  Configure(RegisterBenchmark("copy/memcpy/64MiB", BM_CopyMemcpy), o, 0.25)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace tessera_bench
