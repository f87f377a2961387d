// Device limits a launch must respect, and what the plugin reports for them.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "enumerate.hpp"
#include "vulkan_test_util.hpp"

namespace tessera_vk_test {
namespace {

// A buffer argument spans buffer size - offset bytes and Vulkan binds at most
// maxStorageBufferRange of it.  The plugin used to clamp the binding, so a
// kernel over a larger buffer silently read and wrote only its first part
// (wrong results, no error).  Now the launch fails, naming the limit, the
// size and the binding; an argument that fits still runs.
TEST_F(VulkanTest, BufferArgumentPastTheBindingLimitIsAnError) {
  const uint64_t limit = dev_.info().max_buffer_arg_bytes;
  ASSERT_GT(limit, 0u) << "the vulkan plugin reports maxStorageBufferRange";
  if (limit > (1ull << 30) || limit + 4096 > dev_.info().total_memory / 4)
    GTEST_SKIP() << "maxStorageBufferRange is " << limit << " bytes: too large to exceed here";
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint64_t size = limit + 256;  // 256: a valid storage-buffer offset alignment
  Buffer big = Alloc(size);
  ASSERT_TRUE(big.valid());
  Stream s = dev_.default_stream();
  const uint32_t n = 64;
  Status st = s.launch(fill, {2, 1, 1}, {32, 1, 1},
                       {KernelArg::buffer(big), KernelArg::scalar(7u), KernelArg::scalar(n)});
  ASSERT_FALSE(st.ok()) << "a binding of " << size << " bytes was accepted";
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  const std::string m = st.message();
  EXPECT_NE(m.find("maxStorageBufferRange"), std::string::npos) << m;
  EXPECT_NE(m.find("binding 0"), std::string::npos) << m;
  EXPECT_NE(m.find("buffer argument 0"), std::string::npos) << m;
  EXPECT_NE(m.find("spans " + std::to_string(size) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("at most " + std::to_string(limit) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("'fill'"), std::string::npos) << m;

  // At an offset that leaves exactly the limit, the launch runs and writes
  // where it should.
  TS_ASSERT_OK(s.launch(fill, {2, 1, 1}, {32, 1, 1},
                        {KernelArg::buffer(big, 256), KernelArg::scalar(7u),
                         KernelArg::scalar(n)}));
  std::vector<uint32_t> h(n);
  TS_ASSERT_OK(tessera::copy(h.data(), tessera::MemoryRef(big, 256), n * 4));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(h[i], 7u + i) << i;
}

// The limit is a queried capability (ABI 1.1), equal to what Vulkan reports.
TEST_F(VulkanTest, MaxBufferArgBytesIsReported) {
  const uint64_t limit = dev_.info().max_buffer_arg_bytes;
  EXPECT_GE(limit, 1ull << 27) << "Vulkan requires maxStorageBufferRange >= 2^27";
  if (dev_.info().name.find("llvmpipe") != std::string::npos) {
    EXPECT_EQ(limit, 1ull << 27);
  }
}

// What kernels may use is reported (ABI 1.1), from the features the device
// was created with.
TEST_F(VulkanTest, KernelFeaturesAreReported) {
  const tessera::DeviceInfo& d = dev_.info();
  ASSERT_TRUE(d.kernel_features_known);
  EXPECT_GE(d.subgroup_size, d.subgroup_size_min);
  EXPECT_LE(d.subgroup_size, d.subgroup_size_max);
  EXPECT_NE(d.subgroup_ops & TS_SUBGROUP_OP_BASIC, 0u);
  if (d.name.find("llvmpipe") != std::string::npos) {  // what lavapipe has
    const uint32_t all_types = TS_SHADER_TYPE_INT8 | TS_SHADER_TYPE_INT16 |
                               TS_SHADER_TYPE_INT64 | TS_SHADER_TYPE_FLOAT16 |
                               TS_SHADER_TYPE_FLOAT64;
    EXPECT_EQ(d.shader_types, all_types);
    for (uint32_t op : {TS_SUBGROUP_OP_VOTE, TS_SUBGROUP_OP_ARITHMETIC, TS_SUBGROUP_OP_BALLOT,
                        TS_SUBGROUP_OP_SHUFFLE, TS_SUBGROUP_OP_SHUFFLE_RELATIVE})
      EXPECT_NE(d.subgroup_ops & op, 0u) << "subgroup op bit " << op;
    EXPECT_NE(d.float_atomics & TS_FLOAT_ATOMIC_ADD_GLOBAL, 0u);
    EXPECT_TRUE(d.host_memory_import);
    EXPECT_TRUE(d.full_subgroups);
    EXPECT_FALSE(d.concurrent_streams) << "lavapipe runs one submission at a time";
  }
}

// Capabilities are queried, not assumed: what the device lacks (here masked
// by the plugin's test hook) is not reported.
TEST(VulkanMaskedCapabilities, AreNotReported) {
  auto rt = CreateVulkanRuntime({{"test_mask_features", "shaderInt64,shaderFloat16,subgroupShuffleRelative,subgroupVote,"
         "shaderBufferFloat32AtomicAdd,computeFullSubgroups,VK_EXT_external_memory_host"}});
  if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
    GTEST_SKIP() << rt.status().ToString();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const tessera::DeviceInfo& d = rt->devices().at(0).info();
  ASSERT_TRUE(d.kernel_features_known);
  EXPECT_EQ(d.shader_types & (TS_SHADER_TYPE_INT64 | TS_SHADER_TYPE_FLOAT16), 0u);
  EXPECT_EQ(d.subgroup_ops & (TS_SUBGROUP_OP_SHUFFLE_RELATIVE | TS_SUBGROUP_OP_VOTE), 0u);
  EXPECT_EQ(d.float_atomics & TS_FLOAT_ATOMIC_ADD_GLOBAL, 0u);
  EXPECT_FALSE(d.full_subgroups);
  EXPECT_FALSE(d.host_memory_import);
}

// A core built against MINOR 0 passes a shorter TsDeviceProperties: the
// conformance suite's Errors.CallerStructSizesAreChecked checks the plugin
// accepts it and writes nothing past it (ctest conformance.vulkan).

// The plugin's two-call enumerations are bounded (enumerate.hpp): a
// driver that reports more entries than any driver has is refused, never
// allocated; a list that shrank between the calls is cut; a failed call is
// an empty, refused list.  (A lying loader cannot be installed here, so
// the helper every enumeration goes through is checked directly.)
TEST(VulkanEnumerate, BoundsTheDriversCount) {
  using tessera::vk::enumerate_bounded;
  std::vector<int> out;
  uint32_t reported = 0;
  int calls = 0;
  auto huge = [&](uint32_t* n, int* data) {
    ++calls;
    if (!data) *n = 0xffffffffu;
    return VK_SUCCESS;
  };
  EXPECT_FALSE(enumerate_bounded(huge, 4096, &out, &reported));
  EXPECT_EQ(reported, 0xffffffffu);
  EXPECT_EQ(calls, 1) << "the array was asked for after a refused count";
  EXPECT_TRUE(out.empty());

  auto shrinking = [&](uint32_t* n, int* data) {
    if (!data) {
      *n = 5;
      return VK_SUCCESS;
    }
    *n = 3;
    for (int i = 0; i < 3; ++i) data[i] = 10 + i;
    return VK_INCOMPLETE;
  };
  ASSERT_TRUE(enumerate_bounded(shrinking, 4096, &out));
  EXPECT_EQ(out, (std::vector<int>{10, 11, 12}));

  auto failing = [&](uint32_t* n, int*) {
    *n = 7;
    return VK_ERROR_INITIALIZATION_FAILED;
  };
  EXPECT_FALSE(enumerate_bounded(failing, 4096, &out));
  EXPECT_TRUE(out.empty());

  // vkGetPhysicalDeviceQueueFamilyProperties returns nothing.
  auto families = [&](uint32_t* n, int* data) {
    if (!data) *n = 2;
    else data[0] = 1, data[1] = 2;
  };
  ASSERT_TRUE(enumerate_bounded(families, 4096, &out));
  EXPECT_EQ(out, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace tessera_vk_test
