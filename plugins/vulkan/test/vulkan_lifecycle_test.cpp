// Teardown and what survives it: the VkPipelineCache is written into
// TESSERA_CACHE_DIR when the runtime goes, and the next process loads it.
//
// Before the runtime's ownership cycle was fixed, Client_Destroy never ran:
// the cache file was never written (and the VkDevice never destroyed).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

extern char** environ;

namespace tessera_vk_test {
namespace {

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Builds one compute pipeline (through the device's VkPipelineCache).
void BuildPipeline(const Device& dev) {
  std::string path = ShaderPath("fill");
  if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path;
  auto exe = dev.load_executable("spirv", path);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  auto k = exe->kernel("fill");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
}

constexpr const char* kChildReport = "TESSERA_VK_TEST_CACHE_REPORT";

// Run by the test below in a child process: reports what the plugin loaded.
TEST(VulkanPipelineCache, ChildReportsWhatItLoaded) {
  const char* out = std::getenv(kChildReport);
  if (!out) GTEST_SKIP() << "a helper of WrittenAtTeardownAndLoadedByTheNextProcess";
  auto rt = CreateVulkanRuntime();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  TsVulkanDeviceStats st = Stats(*rt, rt->devices().at(0));
  std::ofstream(out) << st.pipeline_cache_loaded_bytes << "\n"
                     << st.pipeline_cache_path << "\n";
}

TEST(VulkanPipelineCache, WrittenAtTeardownAndLoadedByTheNextProcess) {
  char tmpl[] = "/tmp/tessera-vk-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ScopedEnv env("TESSERA_CACHE_DIR", dir);
  std::string cache_path;
  {
    auto rt = CreateVulkanRuntime();
    if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
      GTEST_SKIP() << rt.status().ToString();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    Device dev = rt->devices().at(0);
    TsVulkanDeviceStats st = Stats(*rt, dev);
    cache_path = st.pipeline_cache_path;
    EXPECT_EQ(st.pipeline_cache_loaded_bytes, 0u) << "a fresh cache directory had a cache";
    ASSERT_EQ(cache_path.rfind(dir + "/vulkan/", 0), 0u)
        << cache_path << " is not in TESSERA_CACHE_DIR/vulkan";
    BuildPipeline(dev);
    if (HasFatalFailure() || IsSkipped()) return;
    EXPECT_EQ(FileSize(cache_path), 0u) << "written before the runtime went";
  }
  // The runtime is gone: Client_Destroy saved the cache.
  const uint64_t size = FileSize(cache_path);
  ASSERT_GT(size, 0u) << cache_path << " was not written when the runtime was destroyed";

  // The next process loads it.
  const std::string report = dir + "/child-report.txt";
  ScopedEnv child_env(kChildReport, report);
  std::string self = "/proc/self/exe";
  std::string filter = "--gtest_filter=VulkanPipelineCache.ChildReportsWhatItLoaded";
  std::vector<char*> argv = {self.data(), filter.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  std::ifstream in(report);
  uint64_t loaded = 0;
  std::string child_path;
  in >> loaded >> child_path;
  EXPECT_EQ(child_path, cache_path);
  EXPECT_EQ(loaded, size) << "the next process did not load the cache file";

  std::remove(report.c_str());
  std::remove(cache_path.c_str());
  ::rmdir((dir + "/vulkan").c_str());
  ::rmdir(dir.c_str());
}

// Streams come and go with cross-stream waits between them.  Their timeline
// semaphores are reused, never destroyed before the device: lavapipe's
// submit thread releases the time points of a submission's waits and
// signals (under the timeline's mutex) after the host has seen the
// submission complete, and destroying a dead stream's semaphore then made it
// lock freed memory (about 1 run in 4 of the conformance events area crashed
// at teardown: a pthread_mutex_lock assertion or a SIGSEGV in
// libvulkan_lvp.so).
TEST_F(VulkanTest, DeadStreamsLendTheirTimelinesToNewOnes) {
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 64;
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  const uint64_t before = Stats(rt_, dev_).timeline_semaphores;
  for (uint32_t i = 0; i < 200; ++i) {
    auto s1 = dev_.create_stream();
    auto s2 = dev_.create_stream();
    auto e = dev_.create_event(TS_EVENT_DISABLE_TIMING);
    ASSERT_TRUE(s1.ok() && s2.ok() && e.ok());
    TS_ASSERT_OK(s1->launch(fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(a), KernelArg::scalar(i), KernelArg::scalar(n)}));
    TS_ASSERT_OK(s1->record(*e));
    TS_ASSERT_OK(s2->wait(*e));
    TS_ASSERT_OK(s2->launch(fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(b), KernelArg::scalar(i * 2), KernelArg::scalar(n)}));
    TS_ASSERT_OK(s1->destroy());  // with work pending
    TS_ASSERT_OK(s2->destroy());
    TS_ASSERT_OK(e->destroy());
    if (i % 16 == 0) TS_ASSERT_OK(dev_.synchronize());
  }
  TS_ASSERT_OK(dev_.synchronize());
  const uint64_t created = Stats(rt_, dev_).timeline_semaphores - before;
  // Destroyed streams with pending work stay alive until it completes (at
  // most 16 iterations here, two streams each); the rest are reused.
  EXPECT_LE(created, 40u) << "400 streams created " << created << " timeline semaphores";
  std::vector<uint32_t> ha(n), hb(n);
  TS_ASSERT_OK(tessera::copy(ha.data(), a, n * 4));
  TS_ASSERT_OK(tessera::copy(hb.data(), b, n * 4));
  EXPECT_EQ(ha[5], 199u + 5);
  EXPECT_EQ(hb[5], 398u + 5);
}

// Client_Destroy "waits for all work, then frees everything the client
// owns" (plugin.h).  It used to free only the host ranges and then the
// devices: every buffer, event, stream, executable, graph, graph exec and
// communicator the caller had not destroyed was still alive at
// vkDestroyDevice (VUID-vkDestroyDevice-device-00378 under the Khronos
// layer, memory leaked on a real driver).  The child below leaves one of each
// behind through the plugin's own table (some with work queued, a stream
// still capturing, an event recorded inside that capture) and destroys the
// runtime; the parent runs it under VK_LAYER_KHRONOS_validation and fails on
// any message the layer prints.
constexpr const char* kLeakChild = "TESSERA_VK_TEST_LEAK_CHILD";

#define LEAK_OK(call)                                                     \
  do {                                                                    \
    TsError* e_ = (call);                                                 \
    ASSERT_EQ(e_, nullptr) << #call << ": " << TakeError(api, e_);        \
  } while (0)

TEST(VulkanTeardown, ChildLeavesOneObjectOfEachKind) {
  if (!std::getenv(kLeakChild))
    GTEST_SKIP() << "a helper of ClientDestroyFreesWhatTheCallerLeftBehind";
  const std::string path = ShaderPath("fill");
  ASSERT_FALSE(ReadFile(path).empty()) << "no " << path;
  auto rt = CreateVulkanRuntime();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const TsPluginApi* api = rt->plugin_own_api();
  TsClient* client = rt->raw_client();
  std::vector<TsDevice*> devices;
  for (const Device& d : rt->devices()) devices.push_back(d.raw());
  TsDevice* dev = devices.at(0);
  const uint32_t n = 256;

  TsExecutable_Load_Args load{TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE};
  load.device = dev;
  load.format = "spirv";
  load.path = path.c_str();
  LEAK_OK(api->Executable_Load(&load));
  TsExecutable_GetKernel_Args gk{TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE};
  gk.executable = load.executable;
  gk.name = "fill";
  LEAK_OK(api->Executable_GetKernel(&gk));

  TsBuffer* buffers[3] = {};
  const TsBufferKind kinds[3] = {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED};
  for (int i = 0; i < 3; ++i) {
    TsBuffer_Allocate_Args ba{TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE};
    ba.device = dev;
    ba.size = n * 4;
    ba.kind = kinds[i];
    TsError* e = api->Buffer_Allocate(&ba);
    if (e && kinds[i] == TS_BUFFER_MANAGED) {  // a device without such memory
      TsErrorCode code = TS_ERROR_INTERNAL;
      const std::string m = TakeError(api, e, &code);
      ASSERT_EQ(code, TS_ERROR_UNSUPPORTED) << m;
      continue;
    }
    LEAK_OK(e);
    buffers[i] = ba.buffer;
  }

  TsStream* streams[3] = {};
  for (TsStream*& s : streams) {
    TsStream_Create_Args sc{TS_STREAM_CREATE_ARGS_STRUCT_SIZE};
    sc.device = dev;
    LEAK_OK(api->Stream_Create(&sc));
    s = sc.stream;
  }
  const uint32_t value = 7;
  TsKernelArg kargs[3] = {};
  kargs[0].kind = TS_KERNEL_ARG_BUFFER;
  kargs[0].buffer = buffers[0];
  kargs[1].kind = TS_KERNEL_ARG_SCALAR;
  kargs[1].data = &value;
  kargs[1].size = 4;
  kargs[2].kind = TS_KERNEL_ARG_SCALAR;
  kargs[2].data = &n;
  kargs[2].size = 4;
  auto launch = [&](TsStream* s) {
    TsKernel_Launch_Args la{TS_KERNEL_LAUNCH_ARGS_STRUCT_SIZE};
    la.kernel = gk.kernel;
    la.stream = s;
    la.grid = {n / 32, 1, 1};
    la.group_size = {32, 1, 1};
    la.args = kargs;
    la.num_args = 3;
    return api->Kernel_Launch(&la);
  };

  // A graph (and an exec of it) that launches the kernel on buffer 0.
  TsStream_BeginCapture_Args bc{TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE};
  bc.stream = streams[1];
  LEAK_OK(api->Stream_BeginCapture(&bc));
  LEAK_OK(launch(streams[1]));
  TsStream_EndCapture_Args ec{TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE};
  ec.stream = streams[1];
  LEAK_OK(api->Stream_EndCapture(&ec));
  TsGraph_Instantiate_Args gi{TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE};
  gi.graph = ec.graph;
  LEAK_OK(api->Graph_Instantiate(&gi));

  // Work queued on stream 0: a launch, a replay of the graph, a timed event.
  LEAK_OK(launch(streams[0]));
  TsGraphExec_Launch_Args gl{TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE};
  gl.exec = gi.exec;
  gl.stream = streams[0];
  LEAK_OK(api->GraphExec_Launch(&gl));
  TsEvent_Create_Args ev{TS_EVENT_CREATE_ARGS_STRUCT_SIZE};
  ev.device = dev;
  LEAK_OK(api->Event_Create(&ev));
  TsEvent_Record_Args er{TS_EVENT_RECORD_ARGS_STRUCT_SIZE};
  er.event = ev.event;
  er.stream = streams[0];
  LEAK_OK(api->Event_Record(&er));

  // Stream 2 is left capturing, with an event recorded inside the capture.
  bc.stream = streams[2];
  LEAK_OK(api->Stream_BeginCapture(&bc));
  LEAK_OK(launch(streams[2]));
  TsEvent_Create_Args ev2{TS_EVENT_CREATE_ARGS_STRUCT_SIZE};
  ev2.device = dev;
  ev2.flags = TS_EVENT_DISABLE_TIMING;
  LEAK_OK(api->Event_Create(&ev2));
  er.event = ev2.event;
  er.stream = streams[2];
  LEAK_OK(api->Event_Record(&er));

  TsCommunicator_Create_Args cc{TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE};
  cc.client = client;
  cc.devices = devices.data();
  cc.num_devices = devices.size();
  LEAK_OK(api->Communicator_Create(&cc));
  TsHost_Allocate_Args ha{TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE};
  ha.client = client;
  ha.size = 1 << 16;
  LEAK_OK(api->Host_Allocate(&ha));

  // None of it destroyed: the last handle on the runtime goes.
  *rt = Runtime();
  std::printf("leak child: the runtime is gone\n");
  std::fflush(stdout);
}

TEST(VulkanTeardown, ClientDestroyFreesWhatTheCallerLeftBehind) {
  if (std::getenv(kLeakChild)) GTEST_SKIP() << "in the child";
  {
    auto rt = CreateVulkanRuntime();
    if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
      GTEST_SKIP() << rt.status().ToString();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  }
  if (ReadFile(ShaderPath("fill")).empty()) GTEST_SKIP() << "no " << ShaderPath("fill");
  char tmpl[] = "/tmp/tessera-vk-leak-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string log = tmpl;
  ScopedEnv child(kLeakChild, "1");
  ScopedEnv validate("TESSERA_VALIDATE", "1");
  std::string self = "/proc/self/exe";
  std::string filter = "--gtest_filter=VulkanTeardown.ChildLeavesOneObjectOfEachKind";
  std::vector<char*> argv = {self.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t fa;
  ASSERT_EQ(::posix_spawn_file_actions_init(&fa), 0);
  ::posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_TRUNC, 0);
  ::posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ASSERT_EQ(rc, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::ifstream in(log);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(log.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child status " << status << "; its output:\n" << out;
  ASSERT_NE(out.find("leak child: the runtime is gone"), std::string::npos) << out;
  if (out.find("validation layer VK_LAYER_KHRONOS_validation active") == std::string::npos) {
    ASSERT_NE(out.find("is not installed"), std::string::npos)
        << "TESSERA_VALIDATE=1 but the layer was neither active nor missing:\n" << out;
    GTEST_SKIP() << "VK_LAYER_KHRONOS_validation is not installed";
  }
  // The patterns the validation ctests fail on (run_under_validation.sh).
  for (const char* what : {"tessera vulkan: validation error", "tessera vulkan: validation warning",
                           "Validation Error", "VUID-"})
    EXPECT_EQ(out.find(what), std::string::npos)
        << "the layer reported '" << what << "' when the client went:\n" << out;
}

// TsVulkanDeviceStats is append-only: a caller built against a shorter
// version gets the fields it has and nothing is written past them.
TEST_F(VulkanTest, DeviceStatsFromAnOlderCaller) {
  struct {
    TsVulkanDeviceStats stats;
    unsigned char canary[32];
  } block;
  std::memset(&block, 0xA5, sizeof block);
  const size_t older = TS_STRUCT_SIZE(TsVulkanDeviceStats, pipeline_cache_path);
  block.stats.header.struct_size = older;
  block.stats.header.type = TS_EXTENSION_VULKAN_DEVICE_STATS;
  block.stats.header.next = nullptr;
  TsDeviceProperties props{};
  props.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  TsDevice_GetProperties_Args args{};
  args.struct_size = TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE;
  args.extension_start = &block.stats.header;
  args.device = dev_.raw();
  args.properties = &props;
  ASSERT_EQ(rt_.plugin_api()->Device_GetProperties(&args), nullptr);
  EXPECT_NE(block.stats.pipeline_cache_path, nullptr);
  EXPECT_EQ(block.stats.queue_submits, Stats(rt_, dev_).queue_submits);
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(&block.stats) + older;
  const unsigned char* end = reinterpret_cast<const unsigned char*>(&block) + sizeof block;
  for (const unsigned char* p = tail; p < end; ++p)
    ASSERT_EQ(*p, 0xA5) << "written " << (p - tail) << " bytes past the caller's struct_size";
}

// The ctest vulkan_plugin_validation runs this suite with TESSERA_VALIDATE=1
// and fails on any validation message in its output.  That only means
// something if the layer is really there: before, a layer that failed to
// load (or a missing VK_EXT_debug_utils messenger) passed as "no messages".
TEST_F(VulkanTest, ValidationLayerIsActiveWhenAsked) {
  const char* v = std::getenv("TESSERA_VALIDATE");
  const bool asked = v && *v && std::string(v) != "0";
  TsVulkanDeviceStats st = Stats(rt_, dev_);
  if (!asked) {
    EXPECT_EQ(st.validation_layer, 0u);
    GTEST_SKIP() << "TESSERA_VALIDATE is not set (ctest vulkan_plugin_validation sets it)";
  }
  EXPECT_EQ(st.validation_layer, 1u)
      << "TESSERA_VALIDATE=1 but VK_LAYER_KHRONOS_validation is not active";
  EXPECT_EQ(st.debug_messenger, 1u)
      << "no VK_EXT_debug_utils messenger: validation messages would not reach the output";
}

}  // namespace
}  // namespace tessera_vk_test
