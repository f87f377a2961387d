// Teardown and what survives it: the VkPipelineCache is written into
// TESSERA_CACHE_DIR when the runtime goes, and the next process loads it.
//
// Before the runtime's ownership cycle was fixed, Client_Destroy never ran:
// the cache file was never written (and the VkDevice never destroyed).
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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
    VK_ASSERT_OK(s1->launch(fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(a), KernelArg::scalar(i), KernelArg::scalar(n)}));
    VK_ASSERT_OK(s1->record(*e));
    VK_ASSERT_OK(s2->wait(*e));
    VK_ASSERT_OK(s2->launch(fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(b), KernelArg::scalar(i * 2), KernelArg::scalar(n)}));
    VK_ASSERT_OK(s1->destroy());  // with work pending
    VK_ASSERT_OK(s2->destroy());
    VK_ASSERT_OK(e->destroy());
    if (i % 16 == 0) VK_ASSERT_OK(dev_.synchronize());
  }
  VK_ASSERT_OK(dev_.synchronize());
  const uint64_t created = Stats(rt_, dev_).timeline_semaphores - before;
  // Destroyed streams with pending work stay alive until it completes (at
  // most 16 iterations here, two streams each); the rest are reused.
  EXPECT_LE(created, 40u) << "400 streams created " << created << " timeline semaphores";
  std::vector<uint32_t> ha(n), hb(n);
  VK_ASSERT_OK(tessera::copy(ha.data(), a, n * 4));
  VK_ASSERT_OK(tessera::copy(hb.data(), b, n * 4));
  EXPECT_EQ(ha[5], 199u + 5);
  EXPECT_EQ(hb[5], 398u + 5);
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
