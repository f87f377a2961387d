#include "bench_env.hpp"

#include <cstdlib>
#include <mutex>

namespace tessera_bench {
namespace {

// Repetitions per benchmark: the JSON then carries mean, median, stddev and
// cv, and compare.py reads the medians.
constexpr int kRepetitions = 5;

// The kernel library built next to this binary (CMake passes its path);
// TESSERA_BENCH_KERNELS overrides it, e.g. for an installed copy.
std::string KernelLibraryPath() {
  if (const char* env = std::getenv("TESSERA_BENCH_KERNELS"); env && *env)
    return env;
#ifdef TESSERA_BENCH_KERNELS_PATH
  return TESSERA_BENCH_KERNELS_PATH;
#else
  return "";
#endif
}

// The native shared-object format of the device, "elf-..." on the cpu plugin.
std::string NativeFormat(const tessera::DeviceInfo& info) {
  for (const std::string& f : info.executable_formats)
    if (f.rfind("elf", 0) == 0) return f;
  return "";
}

void Create(BenchEnv& env) {
  tessera::RuntimeOptions options;
  options.backend = "cpu";
  auto runtime = tessera::Runtime::Create(options);
  if (!runtime.ok()) {
    env.status = runtime.status();
    env.status.Annotate("creating the cpu runtime");
    return;
  }
  env.runtime = std::move(runtime).value();
  if (env.runtime.devices().empty()) {
    env.status = tessera::Status(tessera::StatusCode::kUnavailable,
                                 "the cpu backend reported no device");
    return;
  }
  env.device = env.runtime.devices().front();

  auto stream = env.device.create_stream();
  if (!stream.ok()) {
    env.status = stream.status();
    env.status.Annotate("creating the benchmark stream");
    return;
  }
  env.stream = std::move(stream).value();

  env.kernel_path = KernelLibraryPath();
  const std::string format = NativeFormat(env.device.info());
  if (format.empty()) {
    env.status = tessera::Status(
        tessera::StatusCode::kUnsupported,
        "device " + env.device.info().name +
            " lists no native (elf-*) executable format");
    return;
  }
  auto exe = env.device.load_executable(format, env.kernel_path);
  if (!exe.ok()) {
    env.status = exe.status();
    env.status.Annotate(
        "the empty-kernel library (built with tessera-bench; "
        "TESSERA_BENCH_KERNELS overrides its path)");
    return;
  }
  env.executable = std::move(exe).value();
  auto kernel = env.executable.kernel("empty");
  if (!kernel.ok()) {
    env.status = kernel.status();
    env.status.Annotate("looking up kernel 'empty' in " + env.kernel_path);
    return;
  }
  env.empty_kernel = std::move(kernel).value();
}

}  // namespace

BenchEnv& Env() {
  // Leaked on purpose: destroying the runtime during static destruction
  // would race with the benchmark library's own teardown.
  static BenchEnv* env = [] {
    auto* e = new BenchEnv;
    Create(*e);
    return e;
  }();
  return *env;
}

BenchEnv* EnvOrSkip(benchmark::State& state) {
  BenchEnv& env = Env();
  if (!env.status.ok()) {
    state.SkipWithError(env.status.ToString().c_str());
    return nullptr;
  }
  return &env;
}

bool CheckOrSkip(benchmark::State& state, const tessera::Status& status,
                 const char* what) {
  if (status.ok()) return true;
  const std::string message = std::string(what) + ": " + status.ToString();
  state.SkipWithError(message.c_str());
  return false;
}

benchmark::internal::Benchmark* Configure(benchmark::internal::Benchmark* b,
                                          const RegisterOptions& options,
                                          double default_min_time_s,
                                          double time_divisor) {
  if (options.set_repetitions)
    b->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
  const double min_time =
      options.min_time_s > 0 ? options.min_time_s : default_min_time_s;
  b->MinTime(min_time / time_divisor);
  return b;
}

}  // namespace tessera_bench
