// The runtime's own lifetime: it lives while any Runtime, Device or object
// handle does, and when the last one goes every plugin object is destroyed,
// then the client (Client_Destroy, exactly once), then the library.
//
// The "lifecycle" test plugin (tests/plugins/lifecycle.cpp) wraps the CPU
// plugin and reports client creation, Client_Destroy (with the number of its
// objects still alive) and its unloading to tessera_test_lifecycle_report(),
// exported by this executable.  Before the fix the runtime's device list held
// handles that shared ownership of the runtime itself, so Client_Destroy
// never ran: the Vulkan plugin's pipeline cache was never saved, its VkDevice
// never destroyed, and lavapipe's threads were still running at exit.
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"

namespace {
std::mutex g_log_mu;
std::vector<std::pair<std::string, long>> g_log;
}  // namespace

extern "C" __attribute__((visibility("default"), used)) void tessera_test_lifecycle_report(
    const char* event, long value) {
  std::lock_guard<std::mutex> lk(g_log_mu);
  g_log.emplace_back(event, value);
}

namespace tessera {
namespace {

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override { Log().clear(); }
  static std::vector<std::pair<std::string, long>>& Log() { return g_log; }
  static std::vector<std::pair<std::string, long>> Snapshot() {
    std::lock_guard<std::mutex> lk(g_log_mu);
    return g_log;
  }
  static size_t Count(const std::string& event) {
    size_t n = 0;
    for (auto& [e, v] : Snapshot()) n += e == event;
    return n;
  }
  static StatusOr<Runtime> Create() {
    RuntimeOptions options;
    options.plugin_file = TESSERA_TEST_PLUGIN_LIFECYCLE;
    options.read_environment = false;
    return Runtime::Create(options);
  }
};

TEST_F(LifecycleTest, ReportingWorks) {
  // The plugin finds the reporter in this executable (ENABLE_EXPORTS); if it
  // could not, every other test here would pass vacuously.
  {
    auto rt = Create();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    EXPECT_EQ(rt->backend(), "lifecycle");
  }
  EXPECT_EQ(Count("client_create"), 1u);
}

TEST_F(LifecycleTest, ClientDestroyedWhenTheRuntimeGoes) {
  {
    auto rt = Create();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    ASSERT_EQ(Count("client_create"), 1u);
    EXPECT_EQ(Count("client_destroy"), 0u);
  }
  EXPECT_EQ(Count("client_destroy"), 1u) << "the Runtime went, its client stayed";
}

TEST_F(LifecycleTest, LastHandleOfAnyKindDestroysTheClient) {
  Buffer buffer;
  Stream stream;
  Event event;
  Device device;
  void* pinned = nullptr;
  {
    auto rt = Create();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    device = rt->devices().at(0);
    TS_ASSERT_OK_AND_ASSIGN(buffer, device.allocate(4096));
    TS_ASSERT_OK_AND_ASSIGN(stream, device.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(event, device.create_event());
    TS_ASSERT_OK_AND_ASSIGN(pinned, rt->pinned_malloc(4096));
    TS_ASSERT_OK(stream.memset_async(buffer, 0, 7, 4096));
    TS_ASSERT_OK(stream.copy_async(pinned, buffer, 4096));
    TS_ASSERT_OK(stream.record(event));
    TS_ASSERT_OK(rt->pinned_free(pinned));  // before the handles go
  }
  // The Runtime handle is gone; the objects keep the runtime alive and usable.
  EXPECT_EQ(Count("client_destroy"), 0u);
  TS_EXPECT_OK(event.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(Buffer another, device.allocate(64));
  TS_EXPECT_OK(tessera::copy(another, buffer, 64));
  another = Buffer();
  buffer = Buffer();
  stream = Stream();
  event = Event();
  EXPECT_EQ(Count("client_destroy"), 0u) << "destroyed while a Device handle remained";
  device = Device();
  ASSERT_EQ(Count("client_destroy"), 1u) << "the last handle went, the client stayed";
  // Every object was destroyed before Client_Destroy.
  for (auto& [e, v] : Snapshot())
    if (e == "client_destroy") EXPECT_EQ(v, 0) << v << " objects alive at Client_Destroy";
}

TEST_F(LifecycleTest, ObjectsAreDestroyedBeforeTheClientAndTheLibraryLast) {
  {
    auto rt = Create();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    const Device& dev = rt->devices().at(0);
    TS_ASSERT_OK_AND_ASSIGN(Executable exe,
                            dev.load_executable(testing::NativeFormat(dev),
                                                TESSERA_TEST_KERNELS_PATH));
    TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe.kernel("fill"));
    TS_ASSERT_OK_AND_ASSIGN(Buffer buf, dev.allocate(100 * sizeof(float)));
    TS_ASSERT_OK_AND_ASSIGN(Stream s, dev.create_stream());
    TS_ASSERT_OK(s.begin_capture());
    TS_ASSERT_OK(s.launch(fill, {4, 1, 1}, {32, 1, 1},
                          {KernelArg::buffer(buf), KernelArg::scalar(1.5f),
                           KernelArg::scalar(uint32_t{100})}));
    TS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
    TS_ASSERT_OK_AND_ASSIGN(GraphExec ge, g.instantiate());
    TS_ASSERT_OK(s.launch(ge));
    TS_ASSERT_OK_AND_ASSIGN(Communicator comm, rt->create_communicator(rt->devices()));
    // Everything dropped without destroy(): the handles' destructors release
    // the objects, then the runtime goes.
  }
  auto log = Snapshot();
  size_t destroy_at = log.size(), unload_at = log.size();
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].first == "client_destroy") {
      destroy_at = i;
      EXPECT_EQ(log[i].second, 0) << log[i].second << " objects alive at Client_Destroy";
    }
    if (log[i].first == "unload" && unload_at == log.size()) unload_at = i;
  }
  ASSERT_LT(destroy_at, log.size()) << "Client_Destroy was never called";
  // The library may stay mapped (a shared object with unique symbols is
  // never unloaded), but if it goes, it goes after its client.
  if (unload_at < log.size()) EXPECT_GT(unload_at, destroy_at);
}

// Fault injection (TESSERA_FAULT) and the trace (TESSERA_TRACE, whose timing
// events are plugin objects) leave no plugin object behind: a program run
// with each fault, its calls failing where injected, then every handle
// dropped; Client_Destroy must find nothing alive.
TEST_F(LifecycleTest, FaultsAndTracingLeakNothing) {
  const std::string trace = ::testing::TempDir() + "tessera_lifecycle_trace.json";
  for (const char* faults : {"", "alloc:2", "copy:1", "launch:1", "launch:2,copy:2",
                             "device_lost:3", "device_lost:7"}) {
    for (bool traced : {false, true}) {
      SCOPED_TRACE(std::string("faults '") + faults + (traced ? "', traced" : "'"));
      Log().clear();
      {
        RuntimeOptions options;
        options.plugin_file = TESSERA_TEST_PLUGIN_LIFECYCLE;
        options.read_environment = false;
        options.fault_injection = faults;
        if (traced) options.trace_path = trace;
        auto rt = Runtime::Create(options);
        ASSERT_TRUE(rt.ok()) << rt.status().ToString();
        const Device& dev = rt->devices().at(0);
        // Every call may fail; the program goes on as a careful one would.
        auto exe = dev.load_executable(testing::NativeFormat(dev), TESSERA_TEST_KERNELS_PATH);
        auto x = dev.allocate(64 * sizeof(float));
        auto y = dev.allocate(64 * sizeof(float));
        auto a = dev.create_stream();
        auto b = dev.create_stream();
        auto e = dev.create_event();
        std::vector<float> host(64, 1.0f);
        if (x.ok()) (void)tessera::copy(MemoryRef(*x), host.data(), 256);
        if (exe.ok() && x.ok() && y.ok() && a.ok() && b.ok() && e.ok()) {
          auto fill = exe->kernel("fill");
          ASSERT_TRUE(fill.ok());
          for (int i = 0; i < 3; ++i)
            (void)a->launch(*fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(*x), KernelArg::scalar(2.0f),
                             KernelArg::scalar(uint32_t{64})});
          (void)e->record(*a);
          (void)b->wait(*e);
          (void)b->copy_async(MemoryRef(*y), MemoryRef(*x), 256);
          (void)b->synchronize();
        }
      }
      size_t destroys = 0;
      for (auto& [event, value] : Snapshot())
        if (event == "client_destroy") {
          ++destroys;
          EXPECT_EQ(value, 0) << value << " objects alive at Client_Destroy";
        }
      EXPECT_EQ(destroys, 1u);
    }
  }
  std::remove(trace.c_str());
}

}  // namespace
}  // namespace tessera
