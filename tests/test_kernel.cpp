// Executables and kernels of the CPU plugin's native format.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Iota;
using testing::Upload;

class KernelTest : public CpuTest {};

TEST_F(KernelTest, DeviceReportsKernelCapabilities) {
  const DeviceInfo& info = device().info();
  EXPECT_FALSE(info.executable_formats.empty());
  EXPECT_GE(info.max_group_size, 64u);
  EXPECT_GE(info.shared_memory_per_group, 1024u);
  EXPECT_GE(info.compute_units, 1u);
}

TEST_F(KernelTest, Saxpy) {
  constexpr uint32_t n = 1000;  // not a multiple of the group size
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  Upload(x, Iota(n));
  Upload(y, Iota(n, 1.0f, 2.0f));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("saxpy"), Groups(n, 64), Lanes(64),
                        {KernelArg::scalar(3.0f), KernelArg::buffer(x),
                         KernelArg::buffer(y), KernelArg::scalar(n)}));
  TS_ASSERT_OK(s.synchronize());
  auto out = Download<float>(y, n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 3.0f * float(i) + (1.0f + 2.0f * float(i))) << i;
}

TEST_F(KernelTest, BufferArgumentsWithOffsets) {
  constexpr uint32_t n = 64;
  Buffer buf = Alloc(3 * n * 4);
  TS_ASSERT_OK(memset(buf, 0, 0, 3 * n * 4));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("fill"), {1, 1, 1}, Lanes(n),
                        {KernelArg::buffer(buf, n * 4), KernelArg::scalar(1.5f),
                         KernelArg::scalar(n)}));
  TS_ASSERT_OK(s.synchronize());
  auto out = Download<float>(buf, 3 * n);
  for (uint32_t i = 0; i < 3 * n; ++i)
    ASSERT_EQ(out[i], (i >= n && i < 2 * n) ? 1.5f : 0.0f) << i;
}

TEST_F(KernelTest, SharedMemoryGroupReductionWithLanes) {
  constexpr uint32_t lanes = 128, groups = 37;
  constexpr uint32_t n = lanes * groups - 5;  // last group is partial
  Buffer in = Alloc(n * 4), out = Alloc(groups * 4);
  Upload(in, Iota(n, 0.0f, 1.0f));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("group_sum"), {groups, 1, 1}, {lanes, 1, 1},
                        {KernelArg::buffer(in), KernelArg::buffer(out),
                         KernelArg::scalar(n)},
                        lanes * sizeof(float)));
  TS_ASSERT_OK(s.synchronize());
  auto sums = Download<float>(out, groups);
  for (uint32_t g = 0; g < groups; ++g) {
    double expected = 0;
    for (uint32_t l = 0; l < lanes; ++l) {
      uint32_t i = g * lanes + l;
      if (i < n) expected += i;
    }
    ASSERT_FALSE(std::isnan(sums[g])) << "no shared memory for group " << g;
    ASSERT_EQ(sums[g], float(expected)) << g;  // sums < 2^24: exact
  }
}

TEST_F(KernelTest, SharedMemoryLargerThanTheDeviceIsAnError) {
  const uint64_t too_much = device().info().shared_memory_per_group + 1;
  Buffer in = Alloc(64), out = Alloc(64);
  Stream s = NewStream();
  Status st = s.launch(kernel("group_sum"), {1, 1, 1}, {4, 1, 1},
                       {KernelArg::buffer(in), KernelArg::buffer(out),
                        KernelArg::scalar(4u)},
                       too_much);
  EXPECT_FALSE(st.ok());
}

TEST_F(KernelTest, Grid3DIds) {
  const TsDim3 grid{3, 4, 5}, group{2, 3, 2};
  const uint32_t groups = 3 * 4 * 5, lanes = 2 * 3 * 2;
  const uint32_t total = groups * lanes;
  Buffer out = Alloc((total + 6) * 4);
  TS_ASSERT_OK(memset(out, 0, 0xff, (total + 6) * 4));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("grid_ids"), grid, group,
                        {KernelArg::buffer(out)}));
  TS_ASSERT_OK(s.synchronize());
  auto ids = Download<uint32_t>(out, total + 6);
  for (uint32_t gz = 0; gz < grid.z; ++gz)
    for (uint32_t gy = 0; gy < grid.y; ++gy)
      for (uint32_t gx = 0; gx < grid.x; ++gx)
        for (uint32_t lz = 0; lz < group.z; ++lz)
          for (uint32_t ly = 0; ly < group.y; ++ly)
            for (uint32_t lx = 0; lx < group.x; ++lx) {
              uint32_t g = (gz * grid.y + gy) * grid.x + gx;
              uint32_t l = (lz * group.y + ly) * group.x + lx;
              uint32_t expected =
                  gx | gy << 6 | gz << 12 | lx << 18 | ly << 22 | lz << 26;
              ASSERT_EQ(ids[g * lanes + l], expected)
                  << "group " << gx << "," << gy << "," << gz << " lane "
                  << lx << "," << ly << "," << lz;
            }
  EXPECT_EQ(std::vector<uint32_t>(ids.begin() + total, ids.end()),
            std::vector<uint32_t>({3, 4, 5, 2, 3, 2}));
}

TEST_F(KernelTest, EmptyGridIsAnError) {
  Stream s = NewStream();
  EXPECT_FALSE(s.launch(kernel("empty"), {0, 1, 1}, {1, 1, 1}, {}).ok());
  EXPECT_FALSE(s.launch(kernel("empty"), {1, 1, 1}, {0, 1, 1}, {}).ok());
}

TEST_F(KernelTest, ManyGroupsRunEachExactlyOnce) {
  Buffer counter = Alloc(4);
  TS_ASSERT_OK(memset(counter, 0, 0, 4));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("count"), {10, 10, 10}, {1, 1, 1},
                        {KernelArg::buffer(counter)}));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<uint32_t>(counter, 1)[0], 1000u);
}

TEST_F(KernelTest, BadKernelNameIsNotFound) {
  auto k = executables_[0].kernel("no_such_kernel");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kNotFound) << k.status().ToString();
  TS_EXPECT_CONTAINS(k.status().message(), "no_such_kernel");
}

TEST_F(KernelTest, KernelHandleAccessors) {
  TS_ASSERT_OK_AND_ASSIGN(Kernel k, executables_[0].kernel("saxpy"));
  EXPECT_TRUE(k.valid());
  EXPECT_EQ(k.name(), "saxpy");
  EXPECT_NE(k.raw(), nullptr);
}

TEST_F(KernelTest, MissingExecutablePathIsAnErrorNamingThePath) {
  const std::string path = "/nonexistent/dir/kernels.so";
  auto exe = device().load_executable(testing::NativeFormat(device()), path);
  ASSERT_FALSE(exe.ok());
  TS_EXPECT_CONTAINS(exe.status().message(), path);
}

TEST_F(KernelTest, NotAnObjectFileIsAnError) {
  auto exe = device().load_executable(testing::NativeFormat(device()),
                                      TESSERA_TEST_PLUGIN_GARBAGE);
  ASSERT_FALSE(exe.ok());
  TS_EXPECT_CONTAINS(exe.status().message(), "invalid ELF header");
}

// dlopen of a FIFO blocked until a writer came; a device or a folder is
// refused before dlopen sees it.
TEST_F(KernelTest, OnlyRegularFilesAreLoaded) {
  char dir[] = "/tmp/tessera-kernel-fifo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/kernels.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string(dir)}) {
    SCOPED_TRACE(path);
    auto exe = device().load_executable(testing::NativeFormat(device()), path);
    ASSERT_FALSE(exe.ok());
    EXPECT_EQ(exe.status().code(), StatusCode::kInvalidArgument) << exe.status().ToString();
    TS_EXPECT_CONTAINS(exe.status().message(), "only regular files are read");
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir);
}

TEST_F(KernelTest, UnknownFormatIsAnError) {
  auto exe = device().load_executable("ptx", TESSERA_TEST_KERNELS_PATH);
  ASSERT_FALSE(exe.ok());
  TS_EXPECT_CONTAINS(exe.status().message(), "ptx");
}

TEST_F(KernelTest, LoadFromMemory) {
  std::ifstream file(TESSERA_TEST_KERNELS_PATH, std::ios::binary);
  ASSERT_TRUE(file.good());
  std::vector<char> image((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  auto exe = device().load_executable(testing::NativeFormat(device()),
                                      image.data(), image.size());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe->kernel("fill"));
  Buffer b = Alloc(32 * 4);
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(fill, {1, 1, 1}, Lanes(32),
                        {KernelArg::buffer(b), KernelArg::scalar(6.0f),
                         KernelArg::scalar(32u)}));
  TS_ASSERT_OK(s.synchronize());
  for (float v : Download<float>(b, 32)) ASSERT_EQ(v, 6.0f);
}

TEST_F(KernelTest, KernelKeepsItsExecutableAlive) {
  TS_ASSERT_OK_AND_ASSIGN(Kernel fill, executables_[0].kernel("fill"));
  executables_.clear();  // drop the last Executable handle
  Buffer b = Alloc(32 * 4);
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(fill, {1, 1, 1}, Lanes(32),
                        {KernelArg::buffer(b), KernelArg::scalar(2.0f),
                         KernelArg::scalar(32u)}));
  TS_ASSERT_OK(s.synchronize());
  for (float v : Download<float>(b, 32)) ASSERT_EQ(v, 2.0f);
}

TEST_F(KernelTest, DestroyedBufferArgumentIsInvalidHandle) {
  Buffer b = Alloc(32 * 4);
  Buffer alias = b;
  TS_ASSERT_OK(b.destroy());
  Stream s = NewStream();
  TS_EXPECT_CODE(s.launch(kernel("fill"), {1, 1, 1}, Lanes(32),
                          {KernelArg::buffer(alias), KernelArg::scalar(2.0f),
                           KernelArg::scalar(32u)}),
                 kInvalidHandle);
}

TEST_F(KernelTest, DeviceOrdinalInLaunchContext) {
  Buffer out = Alloc(4);
  TS_ASSERT_OK(memset(out, 0, 0xff, 4));
  Stream s = NewStream();
  TS_ASSERT_OK(s.launch(kernel("device_ordinal"), {1, 1, 1}, {1, 1, 1},
                        {KernelArg::buffer(out)}));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<uint32_t>(out, 1)[0], 0u);
}

}  // namespace
}  // namespace tessera
