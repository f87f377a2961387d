// tessera-streams-demo: the main job until the IR lands.
//
// Creates a Runtime (TESSERA_BACKEND picks the backend; unset, the automatic
// choice of docs/runtime.md), allocates device buffers and pinned host
// memory, copies host->device asynchronously, and runs two kernels on TWO
// streams joined by an event:
//
//   stream A:  record(start)  copy x->dx  scale(dx *= 2)      record(x_ready)
//   stream B:  copy y->dy     wait(x_ready)  saxpy(dy = a*dx + dy)
//              copy dy->out   record(done)
//
// then checks `out` against a host reference and prints what it did and how
// long it took (event elapsed time and wall clock).  Exit status 0 only when
// the result is verified.
//
// Usage: tessera-streams-demo [KERNELS.so] [--elements N]
//   KERNELS.so: the demo kernel library (default: the one built with this
//   binary, libtessera_demo_kernels.so in the build tree).
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace {

using tessera::KernelArg;
using tessera::Status;

constexpr const char* kProgram = "tessera-streams-demo";

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "%s: %s: %s\n", kProgram, what.c_str(),
               status.ToString().c_str());
  return 1;
}

#define DEMO_CHECK(expr, what)               \
  do {                                       \
    ::tessera::Status _st = (expr);          \
    if (!_st.ok()) return Fail((what), _st); \
  } while (0)

#define DEMO_ASSIGN(lhs, expr, what)                      \
  auto lhs##_or = (expr);                                 \
  if (!lhs##_or.ok()) return Fail((what), lhs##_or.status()); \
  auto lhs = std::move(lhs##_or).value()

// Frees pinned host memory on every exit path.
class PinnedArray {
 public:
  PinnedArray(const tessera::Runtime& runtime) : runtime_(runtime) {}
  ~PinnedArray() {
    if (data_) runtime_.pinned_free(data_).IgnoreError();
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  Status Allocate(size_t count) {
    auto p = runtime_.pinned_malloc(count * sizeof(float));
    if (!p.ok()) return p.status();
    data_ = static_cast<float*>(p.value());
    return Status::Ok();
  }
  float* data() const { return data_; }

 private:
  tessera::Runtime runtime_;
  float* data_ = nullptr;
};

std::string DefaultKernelPath() {
#ifdef TESSERA_DEMO_KERNELS_PATH
  return TESSERA_DEMO_KERNELS_PATH;
#else
  return "";
#endif
}

bool FileExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: %s [KERNELS.so] [--elements N]\n"
               "  KERNELS.so   demo kernel library (default: %s)\n"
               "  --elements N number of floats per buffer (default 4194304)\n"
               "Environment: TESSERA_BACKEND, TESSERA_PLUGIN_PATH, "
               "TESSERA_VISIBLE_DEVICES, TESSERA_LOG=debug "
               "(docs/runtime.md)\n",
               kProgram, DefaultKernelPath().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernel_path;
  uint64_t n = uint64_t{1} << 22;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      Usage(stdout);
      return 0;
    } else if (arg == "--elements" && i + 1 < argc) {
      char* end = nullptr;
      n = std::strtoull(argv[++i], &end, 10);
      if (!end || *end || n == 0) {
        std::fprintf(stderr, "%s: --elements wants a positive integer\n", kProgram);
        return 1;
      }
    } else if (!arg.empty() && arg[0] != '-' && kernel_path.empty()) {
      kernel_path = arg;
    } else {
      Usage(stderr);
      return 1;
    }
  }
  if (kernel_path.empty()) kernel_path = DefaultKernelPath();
  if (!FileExists(kernel_path)) {
    std::fprintf(stderr,
                 "%s: kernel library not found: '%s'\n"
                 "  pass the path of libtessera_demo_kernels.so as the first "
                 "argument\n",
                 kProgram, kernel_path.c_str());
    return 1;
  }

  // ---- runtime, backend and device
  const auto wall_start = std::chrono::steady_clock::now();
  DEMO_ASSIGN(runtime, tessera::Runtime::Create(), "creating the runtime");
  std::string plugin_path = "?";
  for (const auto& c : runtime.candidates())
    if (c.name == runtime.backend() && c.state == tessera::PluginState::kLoaded)
      plugin_path = c.path;
  std::printf("backend : %s (%s)\n", runtime.backend().c_str(),
              plugin_path.c_str());
  if (runtime.devices().empty())
    return Fail("selecting a device",
                Status(tessera::StatusCode::kUnavailable,
                       "backend " + runtime.backend() + " has no device"));
  const tessera::Device device = runtime.devices().front();
  const tessera::DeviceInfo& info = device.info();
  std::printf("device  : %s [%s, %s, %u compute units, %s]\n",
              info.name.c_str(), info.vendor.c_str(),
              tessera::DeviceTypeName(info.type), info.compute_units,
              tessera::FormatBytes(info.total_memory).c_str());

  std::string format;
  std::string formats;
  for (const std::string& f : info.executable_formats) {
    formats += (formats.empty() ? "" : ",") + f;
    if (format.empty() && f.rfind("elf", 0) == 0) format = f;
  }
  if (format.empty())
    return Fail("choosing an executable format",
                Status(tessera::StatusCode::kUnsupported,
                       "this demo's kernels are native CPU objects, but "
                       "backend " + runtime.backend() + " accepts only '" +
                       formats + "'; run it with TESSERA_BACKEND=cpu"));

  DEMO_ASSIGN(exe, device.load_executable(format, kernel_path),
              "loading " + kernel_path);
  DEMO_ASSIGN(scale, exe.kernel("scale"), "looking up kernel 'scale'");
  DEMO_ASSIGN(saxpy, exe.kernel("saxpy"), "looking up kernel 'saxpy'");
  std::printf("kernels : scale, saxpy from %s (%s)\n", kernel_path.c_str(),
              format.c_str());

  // ---- memory
  const uint64_t bytes = n * sizeof(float);
  PinnedArray hx(runtime), hy(runtime), hout(runtime);
  DEMO_CHECK(hx.Allocate(n), "pinned_malloc(x)");
  DEMO_CHECK(hy.Allocate(n), "pinned_malloc(y)");
  DEMO_CHECK(hout.Allocate(n), "pinned_malloc(out)");
  for (uint64_t i = 0; i < n; ++i) {
    hx.data()[i] = static_cast<float>(i % 1000) * 0.25f;
    hy.data()[i] = static_cast<float>((i * 7) % 13) - 6.0f;
    hout.data()[i] = std::nanf("");
  }
  DEMO_ASSIGN(dx, device.allocate(bytes, TS_BUFFER_DEVICE), "allocating dx");
  DEMO_ASSIGN(dy, device.allocate(bytes, TS_BUFFER_DEVICE), "allocating dy");
  std::printf("memory  : 3 x %s pinned host, 2 x %s device\n",
              tessera::FormatBytes(bytes).c_str(),
              tessera::FormatBytes(bytes).c_str());

  // ---- two streams joined by an event
  DEMO_ASSIGN(stream_a, device.create_stream(), "creating stream A");
  DEMO_ASSIGN(stream_b, device.create_stream(), "creating stream B");
  DEMO_ASSIGN(start, device.create_event(), "creating event start");
  DEMO_ASSIGN(x_ready, device.create_event(), "creating event x_ready");
  DEMO_ASSIGN(done, device.create_event(), "creating event done");

  const float s = 2.0f;
  const float a = 3.0f;
  const uint32_t lanes = 256;
  const uint64_t groups64 = (n + lanes - 1) / lanes;
  if (groups64 > UINT32_MAX)
    return Fail("sizing the grid", Status(tessera::StatusCode::kOutOfRange,
                                          "too many elements"));
  const TsDim3 grid{static_cast<uint32_t>(groups64), 1, 1};
  const TsDim3 group{lanes, 1, 1};

  const auto issue_start = std::chrono::steady_clock::now();
  DEMO_CHECK(stream_a.record(start), "A: record(start)");
  DEMO_CHECK(stream_a.copy_async(dx, hx.data(), bytes), "A: copy x -> dx");
  DEMO_CHECK(stream_a.launch(scale, grid, group,
                             {KernelArg::buffer(dx), KernelArg::scalar(s),
                              KernelArg::scalar(n)}),
             "A: launch scale");
  DEMO_CHECK(stream_a.record(x_ready), "A: record(x_ready)");

  DEMO_CHECK(stream_b.copy_async(dy, hy.data(), bytes), "B: copy y -> dy");
  DEMO_CHECK(stream_b.wait(x_ready), "B: wait(x_ready)");
  DEMO_CHECK(stream_b.launch(saxpy, grid, group,
                             {KernelArg::buffer(dy), KernelArg::buffer(dx),
                              KernelArg::scalar(a), KernelArg::scalar(n)}),
             "B: launch saxpy");
  DEMO_CHECK(stream_b.copy_async(hout.data(), dy, bytes), "B: copy dy -> out");
  DEMO_CHECK(stream_b.record(done), "B: record(done)");
  const auto issue_end = std::chrono::steady_clock::now();
  DEMO_CHECK(stream_b.synchronize(), "B: synchronize");
  const auto sync_end = std::chrono::steady_clock::now();

  std::printf("stream A: record(start), copy x -> dx, scale dx *= %.1f, "
              "record(x_ready)\n", s);
  std::printf("stream B: copy y -> dy, wait(x_ready), saxpy dy = %.1f*dx + dy, "
              "copy dy -> out, record(done)\n", a);

  auto elapsed = tessera::Event::elapsed_ms(start, done);
  if (!elapsed.ok()) return Fail("elapsed_ms(start, done)", elapsed.status());

  // ---- verify against the host reference
  uint64_t mismatches = 0;
  uint64_t first_bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const float expect = a * (s * hx.data()[i]) + hy.data()[i];
    const float got = hout.data()[i];
    if (!(std::fabs(got - expect) <= 1e-6f * std::fabs(expect) + 1e-6f)) {
      if (mismatches++ == 0) first_bad = i;
    }
  }
  const auto wall_end = std::chrono::steady_clock::now();

  std::printf("timing  : %.3f ms device (event start -> done), "
              "%.3f ms to issue, %.3f ms issue + synchronize, "
              "%.3f ms wall clock in all\n",
              elapsed.value(), Ms(issue_end - issue_start),
              Ms(sync_end - issue_start), Ms(wall_end - wall_start));
  if (mismatches != 0) {
    const float expect = a * (s * hx.data()[first_bad]) + hy.data()[first_bad];
    std::fprintf(stderr,
                 "%s: FAILED: %llu of %llu elements differ from the host "
                 "reference; first at %llu: got %g, expected %g\n",
                 kProgram, static_cast<unsigned long long>(mismatches),
                 static_cast<unsigned long long>(n),
                 static_cast<unsigned long long>(first_bad),
                 static_cast<double>(hout.data()[first_bad]),
                 static_cast<double>(expect));
    return 1;
  }
  std::printf("verified: %llu elements of out = %.1f*(%.1f*x) + y match the "
              "host reference\n",
              static_cast<unsigned long long>(n), a, s);

  DEMO_CHECK(stream_a.destroy(), "destroying stream A");
  DEMO_CHECK(stream_b.destroy(), "destroying stream B");
  return 0;
}
