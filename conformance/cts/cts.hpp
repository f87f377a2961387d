// The conformance test framework: what every area's tests share.
//
// One binary, compiled once, runs against whichever plugin the command line
// names (--backend NAME or --plugin FILE).  Every test derives from CtsTest,
// which
//   - creates the Runtime for the selected plugin once per test process and
//     hands each test its first device (tests needing several devices take
//     them from runtime().devices());
//   - consults the known-failures table (known_failures.cpp) before the test
//     body runs: a listed test is skipped as "expected failure: <reason>"
//     unless TESSERA_CTS_RUN_KNOWN_FAILURES=1.
// A test whose device lacks a capability skips itself with CTS_REQUIRE,
// which reports "unsupported: <capability>".  Capabilities come from
// DeviceInfo only; nothing is assumed per plugin.
//
// Lifetime: the shared Runtime lives until the gtest environment tears down
// (end of RUN_ALL_TESTS); handles a test creates die with the test.
#ifndef TESSERA_CONFORMANCE_CTS_HPP_
#define TESSERA_CONFORMANCE_CTS_HPP_

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/program.hpp"
#include "tessera/runtime.hpp"
#include "tessera/status.hpp"

namespace tessera::cts {

// --------------------------------------------------------------- config
struct Config {
  std::string backend;      // --backend
  std::string plugin_file;  // --plugin
  // --plugin-option PLUGIN.NAME=VALUE, and the defaults the runner picks
  // (the cpu plugin's 4 devices for the multi-device areas): passed to
  // Runtime::Create as RuntimeOptions::plugin_options / _defaults.
  std::map<std::string, std::vector<OptionValue>> plugin_options;
  std::map<std::string, std::vector<OptionValue>> plugin_option_defaults;
  std::string kernels_dir;  // where the shipped kernel modules are
  bool run_known_failures = false;  // TESSERA_CTS_RUN_KNOWN_FAILURES=1
};
Config& GlobalConfig();

// The Runtime of this test process, created on first use from GlobalConfig.
// Its status is kept, so every test reports the same creation error.
const StatusOr<Runtime>& SharedRuntime();
void ResetSharedRuntime();  // at the end of RUN_ALL_TESTS

// The directory holding the kernel modules shipped with the suite, resolved
// from TESSERA_CTS_KERNELS_DIR, then next to the executable, then the build
// tree.  Empty when none exists.
std::string FindKernelsDir(const std::string& argv0);

// ---------------------------------------------------------------- macros
inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const StatusOr<T>& s) {
  return s.status();
}

// Skips the current test as unsupported: "unsupported: <capability>".
#define CTS_UNSUPPORTED(capability) \
  GTEST_SKIP() << "unsupported: " << capability
#define CTS_REQUIRE(cond, capability)            \
  do {                                           \
    if (!(cond)) CTS_UNSUPPORTED(capability);    \
  } while (0)

// The status first: the report's one-line summary of a failed test is the
// first line of its message, and with ASSERT_TRUE(ok()) that line was
// gtest's "Value of: rt.ok()" instead of the reason.
#define CTS_EXPECT_OK(expr)                                              \
  do {                                                                   \
    ::tessera::Status _cts_s = ::tessera::cts::ToStatus(expr);           \
    if (!_cts_s.ok()) ADD_FAILURE() << _cts_s.ToString() << " (" << #expr << ")"; \
  } while (0)
#define CTS_ASSERT_OK(expr)                                              \
  do {                                                                   \
    ::tessera::Status _cts_s = ::tessera::cts::ToStatus(expr);           \
    if (!_cts_s.ok()) FAIL() << _cts_s.ToString() << " (" << #expr << ")"; \
  } while (0)
#define CTS_CONCAT_I_(a, b) a##b
#define CTS_CONCAT_(a, b) CTS_CONCAT_I_(a, b)
#define CTS_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  CTS_ASSERT_OK_AND_ASSIGN_I_(CTS_CONCAT_(_cts_or_, __LINE__), lhs, expr)
#define CTS_ASSERT_OK_AND_ASSIGN_I_(tmp, lhs, expr)                       \
  auto tmp = (expr);                                                      \
  if (!tmp.ok()) FAIL() << tmp.status().ToString() << " (" << #expr << ")"; \
  lhs = std::move(tmp).value()

// A misuse check: `expr` must fail, with a non-empty message.  `code_` is
// the StatusCode the ABI documents; another non-OK code is still a failure
// of the test, reported with both codes.
#define CTS_EXPECT_ERROR(expr, code_)                                     \
  do {                                                                    \
    ::tessera::Status _cts_s = ::tessera::cts::ToStatus(expr);            \
    EXPECT_FALSE(_cts_s.ok()) << #expr << " succeeded; expected "         \
                              << ::tessera::StatusCodeName(               \
                                     ::tessera::StatusCode::code_);       \
    if (!_cts_s.ok()) {                                                   \
      EXPECT_EQ(_cts_s.code(), ::tessera::StatusCode::code_)              \
          << #expr << " returned " << _cts_s.ToString();                  \
      EXPECT_FALSE(_cts_s.message().empty())                              \
          << #expr << " returned an error without a message";           \
    }                                                                     \
  } while (0)
// Like CTS_EXPECT_ERROR but any error code is accepted.
#define CTS_EXPECT_SOME_ERROR(expr)                                       \
  do {                                                                    \
    ::tessera::Status _cts_s = ::tessera::cts::ToStatus(expr);            \
    EXPECT_FALSE(_cts_s.ok()) << #expr << " succeeded; expected an error"; \
    if (!_cts_s.ok()) {                                                   \
      EXPECT_FALSE(_cts_s.message().empty())                              \
          << #expr << " returned an error without a message";           \
    }                                                                     \
  } while (0)

// Loads the suite's kernel module for the device, or skips the test as
// unsupported when the device accepts none of the formats the suite ships.
#define CTS_REQUIRE_KERNELS()                                            \
  do {                                                                   \
    std::string _cts_why;                                                \
    if (!LoadKernels(&_cts_why)) {                                       \
      if (_cts_why.rfind("unsupported: ", 0) == 0) GTEST_SKIP() << _cts_why; \
      FAIL() << _cts_why;                                                \
    }                                                                    \
  } while (0)

// A Tile IR kernel of the suite compiled for the test's device BY THE PLUGIN
// UNDER TEST (CompileTileKernel) into `var` (a TileKernel), or skips the test
// as "unsupported: compiler (...)" when the plugin compiles nothing or says
// it cannot lower the kernel; any other compile or load error fails it.
//   CTS_TILE_KERNEL(k, "saxpy", "saxpy", {{"L", "128"}});
#define CTS_TILE_KERNEL(var, ...)                                        \
  ::tessera::cts::TileKernel var;                                        \
  do {                                                                   \
    std::string _cts_why;                                                \
    if (!CompileTileKernel(__VA_ARGS__, &var, &_cts_why)) {              \
      if (_cts_why.rfind("unsupported: ", 0) == 0) GTEST_SKIP() << _cts_why; \
      FAIL() << _cts_why;                                                \
    }                                                                    \
  } while (0)

// A compiled Tile IR kernel: the kernel, and how it must be launched (the
// group size it was compiled for; the dynamic shared memory it needs).
struct TileKernel {
  Kernel kernel;
  TsDim3 group{1, 1, 1};
  uint64_t shared_memory_bytes = 0;
};

// The executable formats the suite ships kernels in, and the module file
// built for each (relative to Config::kernels_dir).  A per-kernel format
// ("spirv": one compute shader per module) ships a directory instead, with
// one module per kernel, `<file>/<kernel>.spv`, whose entry point is named
// after the kernel.
// A per-arch format ("hsaco": a code object runs on one GPU target) ships
// one module per arch, `file` with "{arch}" replaced by the device's
// compile arch; a device of another arch has none.
struct KernelModule {
  const char* format;
  const char* file;
  bool per_kernel = false;
  const char* suffix = ".spv";  // per-kernel formats: <file>/<kernel><suffix>
  const char* archs = nullptr;  // per-arch formats: the archs built, "gfx90a,gfx1100"
};
const std::vector<KernelModule>& ShippedKernelModules();
// The first shipped module whose format the device accepts, or nullptr.
const KernelModule* ShippedModuleFor(const DeviceInfo& info);
// The file to load for `kernel` from `module` (the module file itself unless
// the format is per-kernel).
std::string KernelModulePath(const KernelModule& module, const std::string& kernel);

// ---------------------------------------------------------------- fixture
// A raw table's error: its code and message, then destroyed through the
// same table; {0, ""} for NULL (success).
std::pair<int, std::string> TakeRawError(const TsPluginApi* api, TsError* error);

class CtsTest : public ::testing::Test {
 protected:
  void SetUp() override;

  Runtime& runtime() { return runtime_; }
  // What a call of the raw table (runtime().plugin_api()) returned: "" for
  // success, else "code N: message"; the error is destroyed (TakeRawError).
  std::string TakeError(TsError* error);
  tessera::Device& device() { return device_; }
  const DeviceInfo& info() const { return device_.info(); }
  // Every device of the runtime (after TESSERA_VISIBLE_DEVICES).
  const std::vector<tessera::Device>& devices() const {
    return runtime_.devices();
  }

  // Loads the kernel module on `device_index` (default: every device once,
  // lazily).  False with *why set on failure; *why starts with
  // "unsupported: " when the device takes none of the shipped formats.
  bool LoadKernels(std::string* why, size_t device_index = 0);
  // A kernel from the module loaded on `device_index` (LoadKernels first).
  StatusOr<Kernel> kernel(const std::string& name, size_t device_index = 0);

  // The Tile IR kernel `name` of the suite's source <kernels dir>/tile/
  // <file>.mlir, with every @KEY@ of it replaced by params[KEY], compiled
  // for device `device_index` by the plugin under test (its compiler part,
  // through libtessera_compiler) and loaded; cached per test (in the
  // fixture).
  // False with *why set otherwise; *why starts with "unsupported: " when
  // the plugin compiles nothing or reports the kernel UNSUPPORTED.
  bool CompileTileKernel(const std::string& file, const std::string& name,
                         const std::map<std::string, std::string>& params, TileKernel* out,
                         std::string* why, size_t device_index = 0);

  // The group size to launch `k` with: the kernel's required group size
  // where it has one (Vulkan fixes it in the shader: the SPIR-V LocalSize),
  // else `wanted`.  Tests compute their grids from what this returns.
  static TsDim3 GroupFor(const Kernel& k, TsDim3 wanted) {
    const TsDim3 r = k.info().required_group_size;
    return r.x && r.y && r.z ? r : wanted;
  }
  static uint32_t GroupFor(const Kernel& k, uint32_t wanted) {
    return GroupFor(k, TsDim3{wanted, 1, 1}).x;
  }
  // The dynamic shared memory to launch `k` with: none when the kernel has
  // a fixed group size and declares its shared memory statically (Vulkan
  // has no dynamic shared memory), else `wanted`.
  static uint64_t SharedFor(const Kernel& k, uint64_t wanted) {
    const TsDim3 r = k.info().required_group_size;
    return r.x && k.info().args_known ? 0 : wanted;
  }

  // Synchronous host <-> buffer transfers for test data.
  template <typename T>
  Status Upload(const Buffer& b, const std::vector<T>& data,
                uint64_t offset = 0) {
    if (data.empty()) return Status::Ok();
    return tessera::copy(MemoryRef(b, offset), data.data(),
                         data.size() * sizeof(T));
  }
  template <typename T>
  StatusOr<std::vector<T>> Download(const Buffer& b, size_t count,
                                    uint64_t offset = 0) {
    std::vector<T> out(count);
    if (count == 0) return out;
    Status st = tessera::copy(out.data(), MemoryRef(b, offset),
                              count * sizeof(T));
    if (!st.ok()) return st;
    return out;
  }

 private:
  Runtime runtime_;
  tessera::Device device_;
  // Per device index: the loaded module(s), by kernel name for a per-kernel
  // format, else under "".
  std::vector<std::map<std::string, Executable>> executables_;
  std::vector<const KernelModule*> modules_;  // per device index, once loaded
  // Compiled Tile IR kernels of this test (the programs keep them loaded).
  std::map<std::string, std::pair<Program, TileKernel>> tile_kernels_;
};

// Launch helpers: 1-D launch of `n` lanes in groups of `group` lanes.
inline TsDim3 Dim(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
  return TsDim3{x, y, z};
}
inline uint32_t GroupsFor(uint64_t n, uint32_t group) {
  return static_cast<uint32_t>((n + group - 1) / group);
}

// Bitwise comparison of float vectors (exactness checks).
bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b);

// Known failures (known_failures.cpp).  Returns the reason when the test
// `suite.name` is a known failure on `plugin`, else nullptr.
const char* KnownFailureReason(const std::string& plugin,
                               const std::string& test);

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_CTS_HPP_
