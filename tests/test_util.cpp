#include "test_util.hpp"

#include <cstdio>

namespace tessera::testing {

namespace {
// The suite must not depend on the developer's shell: clear the variables
// that change selection before any test runs.  Tests that exercise them set
// them explicitly with ScopedEnv.
struct ClearSelectionEnvironment {
  ClearSelectionEnvironment() {
    for (const char* name :
         {"TESSERA_BACKEND", "TESSERA_PLUGIN_PATH", "TESSERA_VISIBLE_DEVICES",
          "TESSERA_VALIDATE", "TESSERA_TRACE", "TESSERA_TRACE_CLOCK",
          "TESSERA_TRACE_MAX_EVENTS", "TESSERA_FAULT", "TESSERA_CPU_DEVICES",
          "TESSERA_CPU_THREADS"})
      ::unsetenv(name);
  }
} clear_selection_environment;
}  // namespace

StatusOr<Runtime> CreateCpuRuntime(int devices, int threads,
                                   RuntimeOptions options) {
  auto& cpu = options.plugin_options["cpu"];
  cpu.push_back(OptionValue::Int("devices", devices));
  if (threads > 0) cpu.push_back(OptionValue::Int("threads", threads));
  return Runtime::Create(options);
}

std::string NativeFormat(const Device& device) {
  const auto& formats = device.info().executable_formats;
  for (const std::string& f : formats)
    if (f == "elf-native") return f;
  return formats.empty() ? std::string("elf-native") : formats.front();
}

std::vector<float> Iota(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

void CpuTest::SetUp() {
  auto rt = CreateCpuRuntime(NumDevices(), NumThreads());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  runtime_ = std::move(rt).value();
  ASSERT_EQ(runtime_.devices().size(), static_cast<size_t>(NumDevices()));
  for (const Device& d : runtime_.devices()) {
    auto exe = d.load_executable(NativeFormat(d), TESSERA_TEST_KERNELS_PATH);
    ASSERT_TRUE(exe.ok()) << "loading " << TESSERA_TEST_KERNELS_PATH << ": "
                          << exe.status().ToString();
    executables_.push_back(std::move(exe).value());
  }
}

void CpuTest::TearDown() {
  if (runtime_.valid()) {
    for (const Device& d : runtime_.devices()) {
      Status s = d.synchronize();
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
}

Kernel CpuTest::kernel(const std::string& name, size_t i) {
  auto k = executables_.at(i).kernel(name);
  EXPECT_TRUE(k.ok()) << name << ": " << k.status().ToString();
  return k.ok() ? std::move(k).value() : Kernel();
}

Buffer CpuTest::Alloc(uint64_t bytes, TsBufferKind kind, size_t i) {
  auto b = device(i).allocate(bytes, kind);
  EXPECT_TRUE(b.ok()) << "allocate " << bytes << ": " << b.status().ToString();
  return b.ok() ? std::move(b).value() : Buffer();
}

Stream CpuTest::NewStream(StreamOptions options, size_t i) {
  auto s = device(i).create_stream(options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : Stream();
}

Event CpuTest::NewEvent(uint32_t flags, size_t i) {
  auto e = device(i).create_event(flags);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : Event();
}

}  // namespace tessera::testing
