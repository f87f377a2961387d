// Files the plugin reads that a user or another process may have broken: the
// persisted pipeline cache and Executable_Load(path).  Each is read only when
// it is a regular file, and at most a limit: before, a cache path that was a
// folder made vulkan unavailable, a symlink to /dev/zero hung device
// creation, and load_executable("/dev/zero") allocated gigabytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "vulkan_test_util.hpp"

namespace tessera_vk_test {
namespace {

// A scratch folder, removed (one level deep) at the end.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/tessera-vk-files-XXXXXX";
    if (::mkdtemp(tmpl)) path_ = tmpl;
  }
  ~ScratchDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What the next runtime finds at its pipeline cache path.
enum class BadCache { kFolder, kDevZero, kFifo, kSparse3G, kForeignHeader };

const char* Name(BadCache b) {
  switch (b) {
    case BadCache::kFolder: return "a folder";
    case BadCache::kDevZero: return "a symlink to /dev/zero";
    case BadCache::kFifo: return "a FIFO";
    case BadCache::kSparse3G: return "a sparse 3 GB file";
    case BadCache::kForeignHeader: return "another device's cache";
  }
  return "?";
}

void Make(BadCache b, const std::string& path) {
  switch (b) {
    case BadCache::kFolder: ASSERT_EQ(::mkdir(path.c_str(), 0755), 0); break;
    case BadCache::kDevZero: ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0); break;
    case BadCache::kFifo: ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0); break;
    case BadCache::kSparse3G: {
      const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::ftruncate(fd, off_t{3} << 30), 0);
      ::close(fd);
      break;
    }
    case BadCache::kForeignHeader: {
      // A VkPipelineCacheHeaderVersionOne of vendor 0xdead: not this device's.
      uint32_t h[8] = {32, 1, 0xdead, 0xbeef, 0, 0, 0, 0};
      FILE* f = std::fopen(path.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      std::fwrite(h, sizeof h, 1, f);
      std::fclose(f);
      break;
    }
  }
}

void Remove(const std::string& path) { std::system(("rm -rf '" + path + "'").c_str()); }

TEST(VulkanFiles, BadPipelineCacheFilesAreIgnoredNotFatal) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  // CreateVulkanRuntime passes $TESSERA_CACHE_DIR/vulkan as cache_dir.
  const char* old = std::getenv("TESSERA_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("TESSERA_CACHE_DIR", dir.path().c_str(), 1);
  struct Restore {
    bool had;
    std::string value;
    ~Restore() { had ? ::setenv("TESSERA_CACHE_DIR", value.c_str(), 1) : ::unsetenv("TESSERA_CACHE_DIR"); }
  } restore{old != nullptr, saved};
  std::string cache_path;
  {
    auto rt = CreateVulkanRuntime();
    if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
      GTEST_SKIP() << rt.status().ToString();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    cache_path = Stats(*rt, rt->devices().at(0)).pipeline_cache_path;
  }
  ASSERT_FALSE(cache_path.empty());
  // Nothing was built, so nothing was saved: the folder may not exist yet.
  ::mkdir(cache_path.substr(0, cache_path.rfind('/')).c_str(), 0755);
  for (BadCache b : {BadCache::kFolder, BadCache::kDevZero, BadCache::kFifo, BadCache::kSparse3G,
                     BadCache::kForeignHeader}) {
    SCOPED_TRACE(Name(b));
    Remove(cache_path);
    Make(b, cache_path);
    auto rt = CreateVulkanRuntime();
    ASSERT_TRUE(rt.ok()) << "vulkan unavailable with " << Name(b)
                         << " as its pipeline cache: " << rt.status().ToString();
    Device dev = rt->devices().at(0);
    EXPECT_EQ(Stats(*rt, dev).pipeline_cache_loaded_bytes, 0u);
    // The device works: a pipeline builds through the (empty) cache.
    std::string shader = ShaderPath("fill");
    if (ReadFile(shader).empty()) continue;
    auto exe = dev.load_executable("spirv", shader);
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    TS_EXPECT_OK(exe->kernel("fill"));
  }
  Remove(cache_path);
}

TEST_F(VulkanTest, ExecutableLoadReadsOnlyBoundedRegularFiles) {
  ScratchDir dir;
  const std::string fifo = dir.path() + "/module.spv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // /dev/zero once became a 17 GB allocation; a FIFO blocked in open().
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir.path()}) {
    SCOPED_TRACE(path);
    auto exe = dev_.load_executable("spirv", path);
    ASSERT_FALSE(exe.ok());
    EXPECT_EQ(exe.status().code(), StatusCode::kInvalidArgument) << exe.status().ToString();
    EXPECT_NE(exe.status().message().find("'" + path + "'"), std::string::npos)
        << exe.status().ToString();
    EXPECT_NE(exe.status().message().find("only regular files are read"), std::string::npos)
        << exe.status().ToString();
  }
  const std::string sparse = dir.path() + "/huge.spv";
  {
    const int fd = ::open(sparse.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{3} << 30), 0);
    ::close(fd);
  }
  auto exe = dev_.load_executable("spirv", sparse);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("at most 256.0 MiB are read"), std::string::npos)
      << exe.status().ToString();
}

// Buffers are counted against their memory heap: lavapipe grants more than
// its heap holds (3 GiB on a 2 GiB heap), from host memory it never touches.
TEST_F(VulkanTest, BuffersPastTheHeapAreOutOfMemory) {
  const tessera::DeviceInfo& info = dev_.info();
  const uint64_t total = info.total_memory;
  ASSERT_GT(total, 0u);
  const uint64_t half = total / 2 + (1 << 20);
  auto first = dev_.allocate(half);
  if (!first.ok()) GTEST_SKIP() << "the driver refuses half its heap: " << first.status().ToString();
  auto second = dev_.allocate(half);
  ASSERT_FALSE(second.ok()) << "granted " << 2 * half << " bytes on a heap of " << total;
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted) << second.status().ToString();
  EXPECT_NE(second.status().message().find("free buffers first"), std::string::npos)
      << second.status().ToString();
  TS_EXPECT_OK(dev_.allocate(4096));
  TS_ASSERT_OK(first->destroy());
  TS_EXPECT_OK(dev_.allocate(half));
}

}  // namespace
}  // namespace tessera_vk_test
