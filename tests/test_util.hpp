// Shared helpers of the Tessera test suite.
//
// CpuTest is the fixture most tests use: a Runtime on the cpu backend with a
// chosen number of devices (TESSERA_CPU_DEVICES), created with
// read_environment = false so the developer's shell does not change what is
// tested, plus the test-kernel executable loaded on every device.
#ifndef TESSERA_TESTS_TEST_UTIL_HPP_
#define TESSERA_TESTS_TEST_UTIL_HPP_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/runtime.hpp"
#include "tessera/status.hpp"

// ---------------------------------------------------------- status macros
#define TS_EXPECT_OK(expr)                                  \
  do {                                                      \
    ::tessera::Status _s = ::tessera::testing::ToStatus(expr); \
    EXPECT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)
#define TS_ASSERT_OK(expr)                                  \
  do {                                                      \
    ::tessera::Status _s = ::tessera::testing::ToStatus(expr); \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)
#define TS_CONCAT_I_(a, b) a##b
#define TS_CONCAT_(a, b) TS_CONCAT_I_(a, b)
#define TS_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  TS_ASSERT_OK_AND_ASSIGN_I_(TS_CONCAT_(_ts_or_, __LINE__), lhs, expr)
#define TS_ASSERT_OK_AND_ASSIGN_I_(tmp, lhs, expr)                      \
  auto tmp = (expr);                                                    \
  ASSERT_TRUE(tmp.ok()) << #expr << ": " << tmp.status().ToString(); \
  lhs = std::move(tmp).value()
// Expects a failed status with `code`.
#define TS_EXPECT_CODE(expr, code_)                                        \
  do {                                                                     \
    ::tessera::Status _s = ::tessera::testing::ToStatus(expr);             \
    EXPECT_EQ(_s.code(), ::tessera::StatusCode::code_)                     \
        << #expr << " returned " << _s.ToString();                         \
  } while (0)

// Expects `text` (a std::string) to contain `part`.
#define TS_EXPECT_CONTAINS(text, part)                                    \
  EXPECT_NE(std::string(text).find(part), std::string::npos)              \
      << "expected to find \"" << (part) << "\" in: " << (text)

namespace tessera::testing {

inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const StatusOr<T>& s) {
  return s.status();
}

// Sets (or, with nullopt, unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value)
      : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Options for a runtime on `plugin` (backend `backend`; empty: `plugin`
// alone, e.g. "cuda,cpu" to test the fall-through) that ignores the
// environment, with string values of the plugin's client options.
inline RuntimeOptions PluginOptions(const std::string& plugin,
                                    const std::vector<std::pair<std::string, std::string>>& values = {},
                                    const std::string& backend = "") {
  RuntimeOptions options;
  options.backend = backend.empty() ? plugin : backend;
  options.read_environment = false;
  for (const auto& [name, value] : values)
    options.plugin_options[plugin].push_back(OptionValue::String(name, value));
  return options;
}

// Options for a cpu runtime that ignores the environment.
inline RuntimeOptions CpuOptions() {
  RuntimeOptions options;
  options.backend = "cpu";
  options.read_environment = false;
  return options;
}

// Creates a cpu runtime with `devices` devices (the cpu plugin's option
// "devices") and, when `threads` > 0, that many worker threads ("threads").
StatusOr<Runtime> CreateCpuRuntime(int devices = 1, int threads = 0,
                                   RuntimeOptions options = CpuOptions());

// The executable format to load the test kernels with.
std::string NativeFormat(const Device& device);

std::vector<float> Iota(size_t n, float start = 0.0f, float step = 1.0f);

// Copies `n` values of T out of / into memory with a synchronous copy.
template <typename T>
std::vector<T> Download(const Buffer& buffer, size_t n, uint64_t offset = 0) {
  std::vector<T> out(n);
  Status s = copy(out.data(), MemoryRef(buffer, offset), n * sizeof(T));
  EXPECT_TRUE(s.ok()) << "download: " << s.ToString();
  return out;
}
template <typename T>
void Upload(const Buffer& buffer, const std::vector<T>& values,
            uint64_t offset = 0) {
  Status s = copy(MemoryRef(buffer, offset), values.data(),
                  values.size() * sizeof(T));
  EXPECT_TRUE(s.ok()) << "upload: " << s.ToString();
}

// A gate for the `gate` test kernel: work queued behind it stays pending
// until the test calls open().  If the runtime makes the test wait for the
// gated work before open() (a bug: a deadlock), the kernel gives up after
// `limit_ms` and timed_out() becomes true, so the test fails, never hangs.
class HostGate {
 public:
  explicit HostGate(uint32_t limit_ms = 10000) : limit_ms_(limit_ms) {}
  ~HostGate() { open(); }
  std::vector<KernelArg> args() const {
    return {KernelArg::scalar(reinterpret_cast<uint64_t>(&flag_)),
            KernelArg::scalar(reinterpret_cast<uint64_t>(&timed_out_)),
            KernelArg::scalar(limit_ms_)};
  }
  void open() { __atomic_store_n(&flag_, 1u, __ATOMIC_RELEASE); }
  bool timed_out() const {
    return __atomic_load_n(&timed_out_, __ATOMIC_ACQUIRE) != 0;
  }

 private:
  alignas(64) mutable uint32_t flag_ = 0;
  alignas(64) mutable uint32_t timed_out_ = 0;
  uint32_t limit_ms_;
};

// Fixture: a cpu runtime with NumDevices() devices and the test kernels.
class CpuTest : public ::testing::Test {
 protected:
  virtual int NumDevices() const { return 1; }
  virtual int NumThreads() const { return 0; }

  void SetUp() override;
  void TearDown() override;

  const Device& device(size_t i = 0) const { return runtime_.devices().at(i); }
  // A kernel of the test-kernel executable on device i (fails the test if
  // it is missing).
  Kernel kernel(const std::string& name, size_t i = 0);
  Buffer Alloc(uint64_t bytes, TsBufferKind kind = TS_BUFFER_DEVICE,
               size_t i = 0);
  Stream NewStream(StreamOptions options = {}, size_t i = 0);
  Event NewEvent(uint32_t flags = 0, size_t i = 0);

  // Launch helpers over n elements, 32 lanes per group.
  static TsDim3 Groups(uint32_t n, uint32_t lanes = 32) {
    return {(n + lanes - 1) / lanes, 1, 1};
  }
  static TsDim3 Lanes(uint32_t lanes = 32) { return {lanes, 1, 1}; }

  Runtime runtime_;
  std::vector<Executable> executables_;  // per device
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TEST_UTIL_HPP_
