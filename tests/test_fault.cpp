// TESSERA_FAULT / RuntimeOptions::fault_injection (docs/runtime.md, "Fault
// injection"): the Nth allocation, copy, launch or compile fails with a
// clean error, the runtime stays usable for the next call, and a lost
// device fails every call that gives it work while its objects can still be
// released.  That nothing leaks is checked in test_lifecycle.cpp
// (LifecycleTest.FaultsLeakNothing: the plugin counts its live objects) and
// by LeakSanitizer (scripts/sanitize.sh address).
#include <sys/resource.h>

#include <new>

#include "plugin_support.hpp"
#include "test_util.hpp"

#include "tessera/compiler.hpp"

namespace tessera {
namespace {

using testing::CpuOptions;
using testing::CreateCpuRuntime;
using testing::Download;
using testing::NativeFormat;
using testing::ScopedEnv;
using testing::Upload;

StatusOr<Runtime> FaultyRuntime(const std::string& faults) {
  RuntimeOptions options = CpuOptions();
  options.fault_injection = faults;
  return CreateCpuRuntime(1, 0, options);
}

TEST(FaultTest, ThirdAllocationFails) {
  auto rt = FaultyRuntime("alloc:3");
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const Device& dev = rt->devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(Buffer a, dev.allocate(256));
  TS_ASSERT_OK_AND_ASSIGN(Buffer b, dev.allocate(256));
  auto c = dev.allocate(256);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  TS_EXPECT_CONTAINS(c.status().ToString(), "injected failure of alloc call 3");
  TS_EXPECT_CONTAINS(c.status().ToString(), "alloc:3");
  // The next allocation, and the buffers made before, work.
  TS_ASSERT_OK_AND_ASSIGN(Buffer d, dev.allocate(256));
  Upload(d, testing::Iota(64));
  TS_ASSERT_OK(copy(MemoryRef(a), MemoryRef(d), 256));
  EXPECT_EQ(Download<float>(a, 64), testing::Iota(64));
}

TEST(FaultTest, SeveralCallsOfOneKindFail) {
  // "alloc:1,alloc:3": the second entry replaced the first.
  auto rt = FaultyRuntime("alloc:1,alloc:3");
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const Device& dev = rt->devices().at(0);
  EXPECT_FALSE(dev.allocate(256).ok()) << "call 1";
  TS_ASSERT_OK_AND_ASSIGN(Buffer b, dev.allocate(256));
  auto c = dev.allocate(256);
  ASSERT_FALSE(c.ok()) << "call 3";
  TS_EXPECT_CONTAINS(c.status().ToString(), "injected failure of alloc call 3");
  TS_ASSERT_OK_AND_ASSIGN(Buffer d, dev.allocate(256));
}

TEST(FaultTest, PinnedMallocCountsAsAnAllocation) {
  auto rt = FaultyRuntime("alloc:1");
  ASSERT_TRUE(rt.ok());
  auto p = rt->pinned_malloc(4096);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kResourceExhausted);
  TS_ASSERT_OK_AND_ASSIGN(void* q, rt->pinned_malloc(4096));
  EXPECT_TRUE(rt->is_pinned(q, 4096));
  TS_EXPECT_OK(rt->pinned_free(q));
}

TEST(FaultTest, SecondCopyFails) {
  auto rt = FaultyRuntime("copy:2");
  ASSERT_TRUE(rt.ok());
  const Device& dev = rt->devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(Buffer buf, dev.allocate(64 * 4));
  std::vector<float> ones(64, 1.0f), twos(64, 2.0f), out(64, 0.0f);
  TS_ASSERT_OK(copy(MemoryRef(buf), ones.data(), 256));           // copy 1
  Status second = copy(MemoryRef(buf), twos.data(), 256);          // copy 2
  EXPECT_EQ(second.code(), StatusCode::kInternal);
  TS_EXPECT_CONTAINS(second.ToString(), "injected failure of copy call 2");
  TS_ASSERT_OK(copy(out.data(), MemoryRef(buf), 256));            // copy 3
  EXPECT_EQ(out, ones);  // the failed copy wrote nothing
  // Asynchronous copies and memsets count too.
  auto rt2 = FaultyRuntime("copy:1");
  ASSERT_TRUE(rt2.ok());
  TS_ASSERT_OK_AND_ASSIGN(Buffer b2, rt2->devices()[0].allocate(256));
  Stream s = rt2->devices()[0].default_stream();
  TS_EXPECT_CODE(s.memset_async(b2, 0, 0, 256), kInternal);
  TS_EXPECT_OK(s.memset_async(b2, 0, 0, 256));
  TS_EXPECT_OK(s.synchronize());
}

TEST(FaultTest, SecondLaunchFails) {
  auto rt = FaultyRuntime("launch:2");
  ASSERT_TRUE(rt.ok());
  const Device& dev = rt->devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(Executable exe,
                          dev.load_executable(NativeFormat(dev), TESSERA_TEST_KERNELS_PATH));
  TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe.kernel("fill"));
  constexpr uint32_t n = 64;
  TS_ASSERT_OK_AND_ASSIGN(Buffer x, dev.allocate(n * 4));
  TS_ASSERT_OK_AND_ASSIGN(Buffer y, dev.allocate(n * 4));
  TS_ASSERT_OK_AND_ASSIGN(Stream s, dev.create_stream());
  auto launch = [&](const Buffer& b, float v) {
    return s.launch(fill, {2, 1, 1}, {32, 1, 1},
                    {KernelArg::buffer(b), KernelArg::scalar(v), KernelArg::scalar(n)});
  };
  TS_ASSERT_OK(launch(x, 1.0f));
  Status second = launch(x, 2.0f);
  EXPECT_EQ(second.code(), StatusCode::kInternal);
  TS_EXPECT_CONTAINS(second.ToString(), "injected failure of launch call 2");
  TS_ASSERT_OK(launch(y, 3.0f));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(x, n), std::vector<float>(n, 1.0f));
  EXPECT_EQ(Download<float>(y, n), std::vector<float>(n, 3.0f));
}

TEST(FaultTest, FirstCompileFails) {
  auto rt = FaultyRuntime("compile:1");
  ASSERT_TRUE(rt.ok());
  const Device& dev = rt->devices().at(0);
  auto compiler = Compiler::ForDevice(dev);
  if (!compiler.ok()) GTEST_SKIP() << compiler.status().ToString();
  CompileRequest request;
  request.target = compiler->targets().front().name;
  request.module = "not a module";
  auto first = compiler->Compile(request, &dev);
  ASSERT_FALSE(first.ok());
  TS_EXPECT_CONTAINS(first.status().ToString(), "injected failure of compile call 1");
  // The second reaches the plugin, which judges the module itself.
  auto second = compiler->Compile(request, &dev);
  if (!second.ok())
    EXPECT_EQ(second.status().ToString().find("injected"), std::string::npos)
        << second.status().ToString();
}

TEST(FaultTest, DeviceLost) {
  auto rt = FaultyRuntime("device_lost:4");
  ASSERT_TRUE(rt.ok());
  const Device& dev = rt->devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(Buffer a, dev.allocate(256));   // device call 1
  TS_ASSERT_OK_AND_ASSIGN(Stream s, dev.create_stream());  // 2
  TS_ASSERT_OK_AND_ASSIGN(Event e, dev.create_event());    // 3
  // Lost from call 4 on: everything that gives the device work fails.
  auto b = dev.allocate(256);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kAborted);
  TS_EXPECT_CONTAINS(b.status().ToString(), "the device was lost");
  std::vector<float> host(64);
  TS_EXPECT_CODE(copy(MemoryRef(a), host.data(), 256), kAborted);
  TS_EXPECT_CODE(s.memset_async(a, 0, 0, 256), kAborted);
  TS_EXPECT_CODE(e.record(s), kAborted);
  TS_EXPECT_CODE(s.wait(e), kAborted);
  TS_EXPECT_CODE(s.synchronize(), kAborted);
  TS_EXPECT_CODE(dev.synchronize(), kAborted);
  TS_EXPECT_CODE(dev.create_stream(), kAborted);
  TS_EXPECT_CODE(dev.load_executable(NativeFormat(dev), TESSERA_TEST_KERNELS_PATH), kAborted);
  TS_EXPECT_CODE(rt->pinned_malloc(64), kAborted);
  // Releasing still works, and a new runtime is fine.
  TS_EXPECT_OK(a.destroy());
  TS_EXPECT_OK(s.destroy());
  TS_EXPECT_OK(e.destroy());
  auto fresh = CreateCpuRuntime(1);
  ASSERT_TRUE(fresh.ok());
  TS_EXPECT_OK(fresh->devices()[0].allocate(256));
}

TEST(FaultTest, FromTheEnvironment) {
  {
    ScopedEnv env("TESSERA_FAULT", "alloc:1");
    RuntimeOptions options;
    options.backend = "cpu";
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    auto a = rt->devices()[0].allocate(64);
    ASSERT_FALSE(a.ok());
    TS_EXPECT_CONTAINS(a.status().ToString(), "TESSERA_FAULT=alloc:1");
    TS_EXPECT_OK(rt->devices()[0].allocate(64));
  }
  {
    // read_environment = false ignores it.
    ScopedEnv env("TESSERA_FAULT", "alloc:1");
    auto rt = CreateCpuRuntime(1);
    ASSERT_TRUE(rt.ok());
    TS_EXPECT_OK(rt->devices()[0].allocate(64));
  }
}

TEST(FaultTest, BadSpecificationsAreErrors) {
  for (const char* spec : {"alloc", "alloc:0", "alloc:x", "launch:-1", "explode:1",
                           "device_lost:", "copy:1,bogus"}) {
    auto rt = FaultyRuntime(spec);
    ASSERT_FALSE(rt.ok()) << spec;
    EXPECT_EQ(rt.status().code(), StatusCode::kInvalidArgument) << spec;
    TS_EXPECT_CONTAINS(rt.status().ToString(), "RuntimeOptions::fault_injection=");
  }
  auto several = FaultyRuntime("alloc:2,launch:1,device_lost:100");
  EXPECT_TRUE(several.ok()) << several.status().ToString();
}

// A plugin entry that runs out of host memory (std::bad_alloc inside its
// guard) says what the user weighs and what to do, not only "out of host
// memory": the memory this process holds, the machine's, the address-space
// limit when one is set.
TEST(PluginGuardTest, OutOfHostMemorySaysWhatTheProcessHoldsAndWhatToDo) {
  TsError* e = plugin_support::guard("cpu", "Kernel_Launch", []() -> TsError* { throw std::bad_alloc(); });
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, TS_ERROR_RESOURCE_EXHAUSTED);
  TS_EXPECT_CONTAINS(e->message, "cpu: Kernel_Launch: out of host memory (this process holds ");
  TS_EXPECT_CONTAINS(e->message, "resident of the machine's ");
  TS_EXPECT_CONTAINS(e->message, "free buffers or other host memory");
  rlimit as{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &as), 0);
  if (as.rlim_cur != RLIM_INFINITY) {
    TS_EXPECT_CONTAINS(e->message, "ulimit -v");
  }
  TsError_Destroy_Args destroy{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};  // knows the static fallback
  EXPECT_EQ(plugin_support::Error_Destroy(&destroy), nullptr);
}

}  // namespace
}  // namespace tessera
