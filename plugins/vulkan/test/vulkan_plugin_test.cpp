// Tests of the Vulkan plugin through the C++ API (backend "vulkan"), on Mesa
// lavapipe here and any Vulkan 1.2 GPU elsewhere.  Without a Vulkan driver
// every test reports itself skipped ("not available: ..."), never failed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <algorithm>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "tessera/runtime.hpp"
#include "vulkan_test_util.hpp"
#include "tessera/kernel_archive.hpp"

namespace tessera_vk_test {
namespace {

// ---------------------------------------------------------------- driver

TEST(VulkanNoDriver, MissingLoaderIsUnavailable) {
  // The plugin dlopens libvulkan.so.1; point it at a file that is not there.
  auto rt = CreateVulkanRuntime({{"library", "/nonexistent/libvulkan.so.1"}});
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("not available"), std::string::npos)
      << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("cannot open shared object file"), std::string::npos)
      << rt.status().ToString();
}

TEST(VulkanNoDriver, NoIcdIsUnavailable) {
  // ctest runs this with VK_ICD_FILENAMES pointing nowhere.
  if (!std::getenv("TESSERA_VK_EXPECT_UNAVAILABLE")) GTEST_SKIP() << "run by ctest only";
  auto rt = CreateVulkanRuntime();
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("not available"), std::string::npos)
      << rt.status().ToString();
}

// ---------------------------------------------------------------- device

TEST_F(VulkanTest, DeviceProperties) {
  const tessera::DeviceInfo& info = dev_.info();
  EXPECT_EQ(rt_.backend(), "vulkan");
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.vendor.empty());
  // The API version has its own field; driver_version is the driver's alone.
  EXPECT_EQ(info.api_version.rfind("Vulkan 1.", 0), 0u) << info.api_version;
  EXPECT_EQ(info.driver_version.find("Vulkan 1."), std::string::npos) << info.driver_version;
  EXPECT_FALSE(info.driver_version.empty());
  if (info.name.find("llvmpipe") != std::string::npos) {
    EXPECT_EQ(info.type, TS_DEVICE_TYPE_SOFTWARE);
    EXPECT_EQ(info.subgroup_size, 8u);
    EXPECT_EQ(info.shared_memory_per_group, 32768u);
  }
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GT(info.subgroup_size, 0u);
  EXPECT_GT(info.shared_memory_per_group, 0u);
  EXPECT_GE(info.max_group_size, 128u);
  EXPECT_TRUE(info.supports(TS_BUFFER_DEVICE));
  EXPECT_TRUE(info.supports(TS_BUFFER_HOST_PINNED));
  EXPECT_TRUE(info.graphs);
  EXPECT_EQ(info.prefetch_hint, TS_HINT_IGNORED);
  EXPECT_EQ(info.advise_hint, TS_HINT_IGNORED);
  EXPECT_TRUE(info.atomic_scopes & TS_ATOMIC_SCOPE_DEVICE);
  EXPECT_TRUE(info.collectives & TS_COLLECTIVE_CAP_ALL_REDUCE);
  EXPECT_EQ(info.executable_formats, (std::vector<std::string>{"spirv", "archive:spirv"}));
  // Vulkan guarantees at least 128 bytes of push constants.
  EXPECT_GE(info.max_scalar_arg_bytes, 128u);
  // Managed buffers are host-visible device memory, reachable in place.
  EXPECT_EQ(info.managed_memory, info.supports(TS_BUFFER_MANAGED));
  // Every stream of a device submits to its one VkQueue, and each batch
  // separates its operations with full pipeline barriers, whose scope is
  // everything earlier on the queue, other streams' batches included: no
  // Vulkan device runs kernels of two streams at the same time under this
  // plugin, GPU or not (docs/vulkan.md, "Streams do not run concurrently").
  EXPECT_FALSE(info.concurrent_streams) << info.name;
}

TEST_F(VulkanTest, MemoryHeapsAndTypes) {
  const tessera::DeviceInfo& info = dev_.info();
  ASSERT_GE(info.memory_heaps.size(), 1u);
  ASSERT_LE(info.memory_heaps.size(), size_t{TS_MAX_MEMORY_HEAPS});
  ASSERT_GE(info.memory_types.size(), 1u);
  ASSERT_LE(info.memory_types.size(), size_t{TS_MAX_MEMORY_TYPES});
  const uint32_t known = TS_MEMORY_DEVICE_LOCAL | TS_MEMORY_HOST_VISIBLE |
                         TS_MEMORY_HOST_COHERENT | TS_MEMORY_HOST_CACHED;
  uint64_t device_local = 0;
  for (const TsMemoryHeap& h : info.memory_heaps) {
    EXPECT_GT(h.size, 0u);
    EXPECT_EQ(h.flags & ~uint32_t{TS_MEMORY_DEVICE_LOCAL}, 0u) << h.flags;
    if (h.flags & TS_MEMORY_DEVICE_LOCAL) device_local += h.size;
  }
  // total_memory is the sum of the device-local heaps.
  EXPECT_EQ(info.total_memory, device_local);
  bool any_device_local = false, any_host_visible = false;
  for (const TsMemoryType& t : info.memory_types) {
    ASSERT_LT(t.heap_index, info.memory_heaps.size());
    EXPECT_EQ(t.flags & ~known, 0u) << t.flags;
    // Vulkan: a device-local type lives in a device-local heap.
    if (t.flags & TS_MEMORY_DEVICE_LOCAL)
      EXPECT_TRUE(info.memory_heaps[t.heap_index].flags & TS_MEMORY_DEVICE_LOCAL);
    any_device_local |= (t.flags & TS_MEMORY_DEVICE_LOCAL) != 0;
    any_host_visible |= (t.flags & TS_MEMORY_HOST_VISIBLE) &&
                        (t.flags & TS_MEMORY_HOST_COHERENT);
  }
  EXPECT_TRUE(any_device_local);  // Vulkan guarantees both
  EXPECT_TRUE(any_host_visible);
  if (info.name.find("llvmpipe") != std::string::npos) {
    // lavapipe: one heap, host memory that is device-local, and every type
    // host-visible and coherent.
    EXPECT_EQ(info.memory_heaps.size(), 1u);
    EXPECT_EQ(info.memory_heaps[0].flags, uint32_t{TS_MEMORY_DEVICE_LOCAL});
    for (const TsMemoryType& t : info.memory_types)
      EXPECT_EQ(t.flags & (TS_MEMORY_DEVICE_LOCAL | TS_MEMORY_HOST_VISIBLE |
                           TS_MEMORY_HOST_COHERENT),
                uint32_t{TS_MEMORY_DEVICE_LOCAL | TS_MEMORY_HOST_VISIBLE |
                         TS_MEMORY_HOST_COHERENT});
  }
}

// ---------------------------------------------------------------- memory

TEST_F(VulkanTest, Buffers) {
  Buffer d = Alloc(1 << 20);
  ASSERT_TRUE(d.valid());
  EXPECT_EQ(d.host_pointer(), nullptr);
  Buffer p = Alloc(4096, TS_BUFFER_HOST_PINNED);
  ASSERT_NE(p.host_pointer(), nullptr);
  std::memset(p.host_pointer(), 0x5a, 4096);
  std::vector<uint8_t> back(4096);
  TS_ASSERT_OK(tessera::copy(d, p, 4096));
  TS_ASSERT_OK(tessera::copy(back.data(), d, 4096));
  EXPECT_EQ(back[0], 0x5a);
  EXPECT_EQ(back[4095], 0x5a);

  if (dev_.info().supports(TS_BUFFER_MANAGED)) {
    Buffer m = Alloc(256, TS_BUFFER_MANAGED);
    ASSERT_NE(m.host_pointer(), nullptr);
    std::memset(m.host_pointer(), 7, 256);
    TS_ASSERT_OK(tessera::copy(back.data(), m, 256));
    EXPECT_EQ(back[255], 7);
    auto pr = dev_.default_stream().prefetch(m, &dev_);
    ASSERT_TRUE(pr.ok()) << pr.status().ToString();
    EXPECT_EQ(*pr, TS_HINT_IGNORED);
    auto ad = tessera::advise(m, TS_ADVICE_READ_MOSTLY, nullptr);
    ASSERT_TRUE(ad.ok()) << ad.status().ToString();
    EXPECT_EQ(*ad, TS_HINT_IGNORED);
  }

  auto huge = dev_.allocate(1ull << 40);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted) << huge.status().ToString();

  Buffer dead = Alloc(64);
  TS_ASSERT_OK(dead.destroy());
  Status st = tessera::copy(back.data(), dead, 16);
  EXPECT_EQ(st.code(), StatusCode::kInvalidHandle) << st.ToString();
}

TEST_F(VulkanTest, CopiesEveryDirection) {
  const size_t n = 3 << 20;  // 3 MiB: more than one page, not a power of two
  std::vector<uint8_t> src(n), dst(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  Buffer a = Alloc(n), b = Alloc(n);
  // pageable host -> device -> device -> pageable host (synchronous)
  TS_ASSERT_OK(tessera::copy(a, src.data(), n));
  TS_ASSERT_OK(tessera::copy(b, a, n));
  TS_ASSERT_OK(tessera::copy(dst.data(), b, n));
  EXPECT_EQ(src, dst);
  // offsets inside buffers
  TS_ASSERT_OK(tessera::copy(tessera::MemoryRef(b, 1001), tessera::MemoryRef(a, 17), 4096));
  std::vector<uint8_t> part(4096);
  TS_ASSERT_OK(tessera::copy(part.data(), tessera::MemoryRef(b, 1001), 4096));
  EXPECT_EQ(0, std::memcmp(part.data(), src.data() + 17, 4096));

  // asynchronous, pinned memory (pinned_malloc) on a stream
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  auto pin = rt_.pinned_malloc(n);
  ASSERT_TRUE(pin.ok()) << pin.status().ToString();
  uint8_t* pinned = static_cast<uint8_t*>(*pin);
  std::memcpy(pinned, src.data(), n);
  TS_ASSERT_OK(s->copy_async(b, pinned, n));
  std::memset(pinned, 0, n);  // after the stream is synchronized below...
  TS_ASSERT_OK(s->synchronize());
  std::memcpy(pinned, src.data(), n);
  TS_ASSERT_OK(s->copy_async(b, pinned, n));
  std::vector<uint8_t> zero(n, 0);
  TS_ASSERT_OK(s->synchronize());
  std::memset(pinned, 0, n);
  TS_ASSERT_OK(s->copy_async(pinned, b, n));
  TS_ASSERT_OK(s->synchronize());
  EXPECT_EQ(0, std::memcmp(pinned, src.data(), n));
  TS_ASSERT_OK(rt_.pinned_free(pinned));

  // asynchronous, registered memory (imported with VK_EXT_external_memory_host
  // where available, staged otherwise), at an unaligned address
  std::vector<uint8_t> reg(n + 64);
  uint8_t* r = reg.data() + 5;
  TS_ASSERT_OK(rt_.register_host(r, n));
  TS_ASSERT_OK(s->copy_async(r, a, n));
  TS_ASSERT_OK(s->synchronize());
  EXPECT_EQ(0, std::memcmp(r, src.data(), n));
  TS_ASSERT_OK(rt_.unregister_host(r));

  // pageable memory in an async copy is refused with a fix
  Status st = s->copy_async(b, src.data(), n);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  // out of range
  st = tessera::copy(dst.data(), tessera::MemoryRef(a, n - 10), 11);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.ToString();
}

TEST_F(VulkanTest, MemsetEdges) {
  Buffer a = Alloc(64);
  TS_ASSERT_OK(tessera::memset(a, 0, 0x11, 64));
  TS_ASSERT_OK(tessera::memset(a, 3, 0xab, 10));   // head + words + tail
  TS_ASSERT_OK(tessera::memset(a, 41, 0xcd, 2));   // inside one word
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  TS_ASSERT_OK(s->memset_async(a, 50, 0xef, 14));
  TS_ASSERT_OK(s->synchronize());
  std::vector<uint8_t> h(64);
  TS_ASSERT_OK(tessera::copy(h.data(), a, 64));
  for (size_t i = 0; i < 64; ++i) {
    uint8_t want = 0x11;
    if (i >= 3 && i < 13) want = 0xab;
    if (i >= 41 && i < 43) want = 0xcd;
    if (i >= 50) want = 0xef;
    EXPECT_EQ(h[i], want) << "byte " << i;
  }
}

// ---------------------------------------------------------------- kernels

TEST_F(VulkanTest, Saxpy) {
  Executable exe;
  Kernel k;
  LoadKernel("saxpy", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 1000;  // not a multiple of the group size
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f + float(i % 7);
  Buffer bx = Alloc(n * 4), by = Alloc(n * 4);
  TS_ASSERT_OK(tessera::copy(bx, x.data(), n * 4));
  TS_ASSERT_OK(tessera::copy(by, y.data(), n * 4));
  Stream s = dev_.default_stream();
  float a = 2.5f;
  TS_ASSERT_OK(s.launch(k, {(n + 63) / 64, 1, 1}, {64, 1, 1},
                        {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::scalar(a),
                         KernelArg::scalar(n)}));
  std::vector<float> out(n);
  TS_ASSERT_OK(tessera::copy(out.data(), by, n * 4));
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a * x[i] + y[i]) << i;
}

TEST_F(VulkanTest, SharedMemoryReduction) {
  Executable exe;
  Kernel k;
  LoadKernel("reduce", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 256 * 40 + 7, groups = (n + 255) / 256;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i % 13) - 3.0f;
  Buffer in = Alloc(n * 4), out = Alloc(groups * 4);
  TS_ASSERT_OK(tessera::copy(in, x.data(), n * 4));
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  TS_ASSERT_OK(s->launch(k, {groups, 1, 1}, {256, 1, 1},
                         {KernelArg::buffer(in), KernelArg::buffer(out), KernelArg::scalar(n)}));
  TS_ASSERT_OK(s->synchronize());
  std::vector<float> sums(groups);
  TS_ASSERT_OK(tessera::copy(sums.data(), out, groups * 4));
  for (uint32_t g = 0; g < groups; ++g) {
    float want = 0;
    for (uint32_t i = g * 256; i < std::min(n, g * 256 + 256); ++i) want += x[i];
    EXPECT_FLOAT_EQ(sums[g], want) << "group " << g;
  }
}

TEST_F(VulkanTest, WrongGroupSizeAndArguments) {
  Executable exe;
  Kernel k;
  LoadKernel("saxpy", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;
  Buffer bx = Alloc(256), by = Alloc(256);
  float a = 1;
  uint32_t n = 64;
  Stream s = dev_.default_stream();
  Status st = s.launch(k, {1, 1, 1}, {128, 1, 1},
                       {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::scalar(a),
                        KernelArg::scalar(n)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("LocalSize"), std::string::npos) << st.ToString();
  st = s.launch(k, {1, 1, 1}, {64, 1, 1}, {KernelArg::buffer(bx), KernelArg::scalar(a)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  st = s.launch(k, {1, 1, 1}, {64, 1, 1},
                {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::scalar(1.0),
                 KernelArg::scalar(n)});  // a double where the shader has a float
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  auto missing = exe.kernel("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("saxpy"), std::string::npos);
  // Dynamic shared memory does not exist in Vulkan.
  st = s.launch(k, {1, 1, 1}, {64, 1, 1},
                {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::scalar(a),
                 KernelArg::scalar(n)},
                1024);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.ToString();
}

TEST_F(VulkanTest, KernelReflection) {
  struct Want {
    const char* name;
    TsDim3 group;
    uint32_t buffers, scalar_bytes, shared;
  };
  // What the GLSL in test_shaders/ declares.
  const Want wants[] = {
      {"saxpy", {64, 1, 1}, 2, 8, 0},        // x, y; float a, uint n
      {"fill", {32, 1, 1}, 1, 8, 0},         // data; uint value, uint n
      {"reduce", {256, 1, 1}, 2, 4, 1024},   // in, out; uint n; float[256]
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.name);
    Executable exe;
    Kernel k;
    LoadKernel(w.name, &exe, &k);
    if (HasFatalFailure() || IsSkipped()) return;
    const tessera::KernelInfo& i = k.info();
    EXPECT_TRUE(i.args_known);
    EXPECT_EQ(i.required_group_size.x, w.group.x);
    EXPECT_EQ(i.required_group_size.y, w.group.y);
    EXPECT_EQ(i.required_group_size.z, w.group.z);
    EXPECT_EQ(i.num_buffer_args, w.buffers);
    EXPECT_EQ(i.scalar_arg_bytes, w.scalar_bytes);
    EXPECT_EQ(i.static_shared_memory_bytes, w.shared);
    // A second lookup (cached kernel) reports the same.
    auto again = exe.kernel(w.name);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->info().num_buffer_args, w.buffers);
    EXPECT_EQ(again->info().required_group_size.x, w.group.x);
    EXPECT_TRUE(again->info().args_known);
  }
}

TEST_F(VulkanTest, GetKernelOlderStructSize) {
  // A core built against the MINOR-0 header passes a struct that ends at
  // `kernel`: the plugin must accept it and write nothing past it.
  std::vector<uint8_t> spv = ReadFile(ShaderPath("saxpy"));
  if (spv.empty()) GTEST_SKIP() << "no saxpy.spv";
  const TsPluginApi* api = rt_.plugin_api();
  TsExecutable_Load_Args load{};
  load.struct_size = TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE;
  load.device = dev_.raw();
  load.format = "spirv";
  load.data = spv.data();
  load.size = spv.size();
  ASSERT_EQ(api->Executable_Load(&load), nullptr);
  TsExecutable_GetKernel_Args a;
  std::memset(&a, 0xab, sizeof a);
  a.struct_size = TS_STRUCT_SIZE(TsExecutable_GetKernel_Args, kernel);
  a.extension_start = nullptr;
  a.executable = load.executable;
  a.name = "saxpy";
  a.kernel = nullptr;
  EXPECT_EQ(api->Executable_GetKernel(&a), nullptr);
  EXPECT_NE(a.kernel, nullptr);
  EXPECT_EQ(a.required_group_size.x, 0xababababu);
  EXPECT_EQ(a.args_known, 0xababababu);
  // The current layout gets every field.
  TsExecutable_GetKernel_Args b{};
  b.struct_size = TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE;
  b.executable = load.executable;
  b.name = "saxpy";
  EXPECT_EQ(api->Executable_GetKernel(&b), nullptr);
  EXPECT_EQ(b.kernel, a.kernel);
  EXPECT_EQ(b.required_group_size.x, 64u);
  EXPECT_EQ(b.args_known, 1u);
  TsExecutable_Destroy_Args d{};
  d.struct_size = TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE;
  d.executable = load.executable;
  EXPECT_EQ(api->Executable_Destroy(&d), nullptr);
}

TEST_F(VulkanTest, WaitEventAcrossDevicesIsUnsupported) {
  // lavapipe has one device; a second client gives a second TsDevice (its own
  // VkDevice), which is what "another device" means to the plugin.
  auto other = CreateVulkanRuntime();
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Device dev2 = other->devices()[0];
  auto s1 = dev_.create_stream();
  auto e2 = dev2.create_event();
  ASSERT_TRUE(s1.ok() && e2.ok());
  auto s2 = dev2.create_stream();
  ASSERT_TRUE(s2.ok());
  TS_ASSERT_OK(s2->record(*e2));  // recorded: a real cross-device edge
  const TsPluginApi* api = rt_.plugin_api();
  ASSERT_NE(api, nullptr);
  TsStream_WaitEvent_Args a{};
  a.struct_size = TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE;
  a.stream = s1->raw();
  a.event = e2->raw();
  TsError* err = api->Stream_WaitEvent(&a);
  ASSERT_NE(err, nullptr) << "a wait across devices must fail";
  TsError_GetCode_Args gc{};
  gc.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
  gc.error = err;
  ASSERT_EQ(api->Error_GetCode(&gc), nullptr);
  EXPECT_EQ(gc.code, TS_ERROR_UNSUPPORTED);
  TsError_Message_Args gm{};
  gm.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
  gm.error = err;
  ASSERT_EQ(api->Error_Message(&gm), nullptr);
  EXPECT_NE(std::string(gm.message).find("Event_Synchronize"), std::string::npos) << gm.message;
  TsError_Destroy_Args gd{};
  gd.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  gd.error = err;
  api->Error_Destroy(&gd);
  // The host-side alternative works, and the stream is unaffected.
  TS_EXPECT_OK(e2->synchronize());
  TS_EXPECT_OK(s1->synchronize());
}

TEST_F(VulkanTest, BadSpirv) {
  std::vector<uint32_t> garbage = {0xdeadbeef, 1, 2, 3, 4, 5};
  auto e = dev_.load_executable("spirv", garbage.data(), garbage.size() * 4);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.status().ToString();
  EXPECT_NE(e.status().message().find("magic"), std::string::npos) << e.status().ToString();
  auto odd = dev_.load_executable("spirv", garbage.data(), 7);
  EXPECT_EQ(odd.status().code(), StatusCode::kInvalidArgument) << odd.status().ToString();
  std::vector<uint8_t> good = ReadFile(ShaderPath("saxpy"));
  if (!good.empty()) {
    // Cut in the middle of an instruction.
    auto cut = dev_.load_executable("spirv", good.data(), (good.size() / 2) & ~size_t{3});
    EXPECT_FALSE(cut.ok());
    EXPECT_EQ(cut.status().code(), StatusCode::kInvalidArgument) << cut.status().ToString();
  }
  auto fmt = dev_.load_executable("ptx", garbage.data(), 24);
  EXPECT_FALSE(fmt.ok());
  auto nofile = dev_.load_executable("spirv", std::string("/nonexistent.spv"));
  EXPECT_FALSE(nofile.ok());
}

// Several SPIR-V modules in one executable (tessera/kernel_archive.hpp):
// each kernel is found in its own module; every malformed archive is an
// error that says what is wrong, never a crash or an unbounded read.
TEST_F(VulkanTest, KernelArchive) {
  std::vector<uint8_t> saxpy = ReadFile(ShaderPath("saxpy"));
  if (saxpy.empty()) GTEST_SKIP() << "no saxpy.spv";
  std::string image(saxpy.begin(), saxpy.end());
  std::string blob = tessera::WriteKernelArchive({{"first", image}, {"second", image}});
  auto exe = dev_.load_executable("archive:spirv", blob.data(), blob.size());
  TS_ASSERT_OK(exe);
  TS_EXPECT_OK(exe->kernel("saxpy"));
  auto missing = exe->kernel("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();

  // Truncated anywhere, a lying count, a lying entry size, a bad magic.
  // (The last cut drops the final 4 bytes of data, not only the padding.)
  const size_t pad = (8 - image.size() % 8) % 8;
  for (size_t cut : {size_t{3}, size_t{16}, size_t{20}, blob.size() / 2, blob.size() - pad - 4}) {
    auto e = dev_.load_executable("archive:spirv", blob.data(), cut);
    EXPECT_FALSE(e.ok()) << "cut at " << cut;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.status().ToString();
  }
  std::string lying = blob;
  uint32_t huge = 0x7fffffff;
  std::memcpy(&lying[8], &huge, 4);
  auto e1 = dev_.load_executable("archive:spirv", lying.data(), lying.size());
  EXPECT_EQ(e1.status().code(), StatusCode::kInvalidArgument) << e1.status().ToString();
  lying = blob;
  uint64_t big = uint64_t{1} << 40;
  std::memcpy(&lying[24], &big, 8);
  auto e2 = dev_.load_executable("archive:spirv", lying.data(), lying.size());
  EXPECT_EQ(e2.status().code(), StatusCode::kInvalidArgument) << e2.status().ToString();
  EXPECT_NE(e2.status().message().find("more than the archive holds"), std::string::npos)
      << e2.status().ToString();
}

// A path that never ends (/dev/zero) is refused before any read: only
// regular files are read (once a 17 GB allocation; vulkan_files_test.cpp
// has the FIFO, folder and sparse-file cases).
TEST_F(VulkanTest, EndlessFileIsRefused) {
  auto e = dev_.load_executable("spirv", std::string("/dev/zero"));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.status().ToString();
  EXPECT_NE(e.status().message().find("only regular files are read"), std::string::npos)
      << e.status().ToString();
}

TEST_F(VulkanTest, CapabilityCheck) {
  std::string path = ShaderPath("int64");
  if (ReadFile(path).empty()) GTEST_SKIP();
  auto e = dev_.load_executable("spirv", path);
  // lavapipe has shaderInt64; a device without it gets an error naming it
  // (forced on every device by MaskedFeatures.Int64 below).
  if (!e.ok()) {
    EXPECT_EQ(e.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(e.status().message().find("Int64"), std::string::npos) << e.status().ToString();
    return;
  }
  auto k = e->kernel("int64");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  Buffer b = Alloc(8);
  uint64_t v = 7;
  TS_ASSERT_OK(tessera::copy(b, &v, 8));
  TS_ASSERT_OK(dev_.default_stream().launch(*k, {1, 1, 1}, {1, 1, 1}, {KernelArg::buffer(b)}));
  TS_ASSERT_OK(tessera::copy(&v, b, 8));
  EXPECT_EQ(v, 21u);
}

TEST_F(VulkanTest, SharedMemoryTooLarge) {
  std::string path = ShaderPath("shared_big");
  if (ReadFile(path).empty()) GTEST_SKIP();
  auto e = dev_.load_executable("spirv", path);
  ASSERT_FALSE(e.ok()) << "256 KiB of shared memory loaded";
  const std::string m = e.status().message();
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().ToString();
  EXPECT_NE(m.find("kernel 'shared_big'"), std::string::npos) << m;
  EXPECT_NE(m.find("256.0 KiB"), std::string::npos) << m;
  EXPECT_NE(m.find("maxComputeSharedMemorySize"), std::string::npos) << m;
  EXPECT_NE(m.find(dev_.info().name), std::string::npos) << m;
}

// Subgroup code runs with REQUIRE_FULL_SUBGROUPS where the device allows it
// (checked under the validation layer by vulkan_plugin_validation), and its
// result follows the shuffle-down rule lane by lane.
TEST_F(VulkanTest, SubgroupShuffleDown) {
  std::string path = ShaderPath("shuffle_down");
  if (ReadFile(path).empty()) GTEST_SKIP();
  auto e = dev_.load_executable("spirv", path);
  if (!e.ok() && e.status().code() == StatusCode::kUnsupported)
    GTEST_SKIP() << e.status().ToString();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto k = e->kernel("shuffle_down");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  const uint32_t n = 256;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i * 3 + 1);
  Buffer in = Alloc(n * 4), out = Alloc(n * 4);
  TS_ASSERT_OK(tessera::copy(in, x.data(), n * 4));
  TS_ASSERT_OK(dev_.default_stream().launch(*k, {n / 64, 1, 1}, {64, 1, 1},
                                            {KernelArg::buffer(in), KernelArg::buffer(out)}));
  std::vector<float> y(n);
  TS_ASSERT_OK(tessera::copy(y.data(), out, n * 4));
  const uint32_t sg = dev_.info().subgroup_size;
  ASSERT_GT(sg, 0u);
  for (uint32_t i = 0; i < n; ++i) {
    // Full subgroups of consecutive lanes: lane i's subgroup id is i % sg.
    float want = (i % sg) + 1 < sg ? x[i + 1] : x[i];
    ASSERT_EQ(y[i], want) << "lane " << i << ", subgroup size " << sg;
  }
}

TEST_F(VulkanTest, AtomicFloatAdd) {
  std::string path = ShaderPath("atomic_fadd");
  if (ReadFile(path).empty()) GTEST_SKIP();
  auto e = dev_.load_executable("spirv", path);
  if (!e.ok() && e.status().code() == StatusCode::kUnsupported)
    GTEST_SKIP() << e.status().ToString();  // no VK_EXT_shader_atomic_float
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto k = e->kernel("atomic_fadd");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  Buffer b = Alloc(4);
  float v = 1.0f;
  TS_ASSERT_OK(tessera::copy(b, &v, 4));
  TS_ASSERT_OK(dev_.default_stream().launch(*k, {4, 1, 1}, {64, 1, 1}, {KernelArg::buffer(b)}));
  TS_ASSERT_OK(tessera::copy(&v, b, 4));
  EXPECT_EQ(v, 1.0f + 256 * 0.5f);  // exact: every partial sum is a multiple of 0.5 < 2^23
}

// Native f32 atomic min/max (VK_EXT_shader_atomic_float2): what
// Device_GetProperties reports is what a module may use.  A device that
// reports min_max_global/min_max_shared must load and run a module with
// AtomicFloat32MinMaxEXT (the plugin enables the extension and the features;
// under vulkan_plugin_validation, a module with a capability whose feature
// was not enabled is a validation error); one that does not must refuse it.
TEST_F(VulkanTest, AtomicFloatMinMaxAsReported) {
  std::string path = ShaderPath("atomic_fminmax");
  if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path;
  const uint32_t minmax = TS_FLOAT_ATOMIC_MIN_MAX_GLOBAL | TS_FLOAT_ATOMIC_MIN_MAX_SHARED;
  const uint32_t reported = dev_.info().float_atomics & minmax;
  if (dev_.info().name.find("llvmpipe") != std::string::npos)
    EXPECT_EQ(reported, minmax) << "lavapipe has VK_EXT_shader_atomic_float2 with both";
  auto e = dev_.load_executable("spirv", path);
  if (reported == 0) {
    ASSERT_FALSE(e.ok()) << "a module with AtomicFloat32MinMaxEXT loaded on a device that "
                            "reports no native float min/max";
    EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().ToString();
    return;
  }
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto k = e->kernel("atomic_fminmax");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  const uint32_t groups = 4, n = groups * 64;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float((i * 37) % 251) - 125.5f;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v(2 + groups, 0.0f);
  v[0] = -inf;
  v[1] = inf;
  Buffer bx = Alloc(n * 4), bv = Alloc(v.size() * 4);
  TS_ASSERT_OK(tessera::copy(bx, x.data(), n * 4));
  TS_ASSERT_OK(tessera::copy(bv, v.data(), v.size() * 4));
  TS_ASSERT_OK(dev_.default_stream().launch(*k, {groups, 1, 1}, {64, 1, 1},
                                            {KernelArg::buffer(bx), KernelArg::buffer(bv)}));
  TS_ASSERT_OK(tessera::copy(v.data(), bv, v.size() * 4));
  EXPECT_EQ(v[0], *std::max_element(x.begin(), x.end()));
  EXPECT_EQ(v[1], *std::min_element(x.begin(), x.end()));
  for (uint32_t g = 0; g < groups; ++g)
    EXPECT_EQ(v[2 + g], *std::max_element(x.begin() + g * 64, x.begin() + (g + 1) * 64))
        << "group " << g;
}

// 64-bit atomics on a buffer (Int64Atomics).
TEST_F(VulkanTest, Int64Atomics) {
  std::string path = ShaderPath("int64_atomics");
  if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path;
  auto e = dev_.load_executable("spirv", path);
  if (!e.ok() && e.status().code() == StatusCode::kUnsupported)
    GTEST_SKIP() << e.status().ToString();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto k = e->kernel("int64_atomics");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  Buffer b = Alloc(8);
  uint64_t v = 5;
  TS_ASSERT_OK(tessera::copy(b, &v, 8));
  TS_ASSERT_OK(dev_.default_stream().launch(*k, {2, 1, 1}, {64, 1, 1}, {KernelArg::buffer(b)}));
  TS_ASSERT_OK(tessera::copy(&v, b, 8));
  EXPECT_EQ(v, 5u + (uint64_t{128} << 32));
}

// The capability check is an allow-list: a valid module declaring a
// capability the plugin does not enable (ShaderClockKHR, which needs
// VK_KHR_shader_clock; test_shaders/shader_clock.spvasm) is UNSUPPORTED
// naming the capability and the device, before the driver sees it (lavapipe
// has the extension, so without the check vkCreateShaderModule would take
// it, and the validation layer would flag it).
TEST_F(VulkanTest, UnknownCapabilityIsUnsupported) {
  std::string path = ShaderPath("shader_clock");
  if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path << " (spirv-as missing)";
  auto e = dev_.load_executable("spirv", path);
  ASSERT_FALSE(e.ok()) << "a module with ShaderClockKHR loaded";
  const std::string m = e.status().message();
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << m;
  EXPECT_NE(m.find("kernel 'shader_clock'"), std::string::npos) << m;
  EXPECT_NE(m.find("SPIR-V capability ShaderClockKHR"), std::string::npos) << m;
  EXPECT_NE(m.find("device '" + dev_.info().name + "'"), std::string::npos) << m;
  // A capability this plugin has no name for is refused the same way, by
  // number: the same module with ShaderClockKHR (5055) patched to 5054.
  std::vector<uint8_t> bytes = ReadFile(path);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  bool patched = false;
  for (size_t i = 5; i + 1 < words.size(); i += words[i] >> 16) {
    if (words[i] == ((2u << 16) | 17u) && words[i + 1] == 5055) {  // OpCapability 5055
      words[i + 1] = 5054;
      patched = true;
    }
    if ((words[i] >> 16) == 0) break;
  }
  ASSERT_TRUE(patched);
  auto unknown = dev_.load_executable("spirv", words.data(), words.size() * 4);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnsupported) << unknown.status().ToString();
  EXPECT_NE(unknown.status().message().find("SPIR-V capability capability 5054"),
            std::string::npos)
      << unknown.status().ToString();
  // The device still loads what it supports.
  std::string ok_path = ShaderPath("saxpy");
  if (!ReadFile(ok_path).empty()) TS_EXPECT_OK(dev_.load_executable("spirv", ok_path));
}

// A device that lacks the feature a capability needs.  lavapipe has them
// all, so the test masks one through the plugin's test-only hook
// the test_mask_features option (read when a device is created; see
// plugins/vulkan/internal.hpp): the load must fail with UNSUPPORTED and a
// message naming the kernel, the capability, the Vulkan feature and the
// device, before any Vulkan call that the validation layer would flag.
class MaskedFeatures : public ::testing::Test {
 protected:
  // Loads <shader>.spv on a fresh runtime whose device lacks `feature`;
  // checks the failure names `kernel` (default: the shader's name).
  void ExpectUnsupported(const char* feature, const char* shader, const char* capability,
                         const char* feature_text, const char* kernel = nullptr) {
    std::string path = ShaderPath(shader);
    if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path;
    auto rt = CreateVulkanRuntime({{"test_mask_features", feature}});
    if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
      GTEST_SKIP() << rt.status().ToString();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    Device dev = rt->devices()[0];
    auto e = dev.load_executable("spirv", path);
    ASSERT_FALSE(e.ok()) << shader << " loaded on a device without " << feature;
    const std::string m = e.status().message();
    EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << m;
    EXPECT_NE(m.find(std::string("kernel '") + (kernel ? kernel : shader) + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("needs the SPIR-V capability ") + capability + " ("),
              std::string::npos) << m;
    EXPECT_NE(m.find(feature_text), std::string::npos) << m;
    EXPECT_NE(m.find("device '" + dev.info().name + "' does not support"), std::string::npos)
        << m;
    // The same runtime still loads what its device supports.
    std::string ok_path = ShaderPath("saxpy");
    if (!ReadFile(ok_path).empty()) TS_EXPECT_OK(dev.load_executable("spirv", ok_path));
  }
};

TEST_F(MaskedFeatures, Int64) {
  ExpectUnsupported("shaderInt64", "int64", "Int64", "VkPhysicalDeviceFeatures::shaderInt64");
}

TEST_F(MaskedFeatures, SubgroupShuffleRelative) {
  ExpectUnsupported("subgroupShuffleRelative", "shuffle_down", "GroupNonUniformShuffleRelative",
                    "SHUFFLE_RELATIVE");
}

TEST_F(MaskedFeatures, AtomicFloat32Add) {
  ExpectUnsupported("shaderBufferFloat32AtomicAdd,shaderSharedFloat32AtomicAdd", "atomic_fadd",
                    "AtomicFloat32AddEXT", "shaderBufferFloat32AtomicAdd");
}

TEST_F(MaskedFeatures, AtomicFloat32MinMax) {
  ExpectUnsupported("shaderBufferFloat32AtomicMinMax,shaderSharedFloat32AtomicMinMax",
                    "atomic_fminmax", "AtomicFloat32MinMaxEXT",
                    "shaderBufferFloat32AtomicMinMax or shaderSharedFloat32AtomicMinMax");
  // ... and the device reports no native float min/max.
  auto rt = CreateVulkanRuntime({{"test_mask_features", "shaderBufferFloat32AtomicMinMax,shaderSharedFloat32AtomicMinMax"}});
  if (!rt.ok()) return;
  EXPECT_EQ(rt->devices()[0].info().float_atomics &
                (TS_FLOAT_ATOMIC_MIN_MAX_GLOBAL | TS_FLOAT_ATOMIC_MIN_MAX_SHARED),
            0u);
}

// Either 64-bit atomics feature is accepted for Int64Atomics (the
// capability does not say buffer or shared); the message names both.
TEST_F(MaskedFeatures, Int64Atomics) {
  ExpectUnsupported("shaderBufferInt64Atomics,shaderSharedInt64Atomics", "int64_atomics",
                    "Int64Atomics",
                    "VkPhysicalDeviceVulkan12Features::shaderBufferInt64Atomics or "
                    "shaderSharedInt64Atomics");
}

// ---------------------------------------------------------------- Tile IR
// Kernels from plugins/vulkan/test_kernels/*.mlir, compiled at build time by
// the Tile IR -> SPIR-V lowering (tessera-opt --tessera-tile-to-spirv) and
// checked by spirv-val; here they run and their results are checked.

class VulkanTileIr : public VulkanTest {
 protected:
  // Loads <file>.spv and its kernel `kernel`; skips when the IR was not
  // built or the device lacks a capability the module needs.
  void LoadTile(const char* file, const char* kernel, Executable* exe, Kernel* k) {
    std::string path = ShaderPath(file);
    if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path << " (IR not built)";
    auto e = dev_.load_executable("spirv", path);
    if (!e.ok() && e.status().code() == StatusCode::kUnsupported)
      GTEST_SKIP() << e.status().ToString();
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    *exe = std::move(e).value();
    auto kk = exe->kernel(kernel);
    ASSERT_TRUE(kk.ok()) << kk.status().ToString();
    *k = std::move(kk).value();
  }
  template <class T>
  Buffer Upload(const std::vector<T>& v) {
    Buffer b = Alloc(v.size() * sizeof(T));
    EXPECT_TRUE(tessera::copy(b, v.data(), v.size() * sizeof(T)).ok());
    return b;
  }
  template <class T>
  std::vector<T> Download(const Buffer& b, size_t n) {
    std::vector<T> v(n);
    EXPECT_TRUE(tessera::copy(v.data(), b, n * sizeof(T)).ok());
    return v;
  }
  // Tile IR's rule for shuffle down 1 / up 3 over subgroups of `sg`
  // consecutive lanes in groups of `group` lanes: a lane whose source lies
  // outside its subgroup (or past the group's end) keeps its own value.
  template <class T>
  void CheckShuffles(const std::vector<T>& x, const std::vector<T>& down,
                     const std::vector<T>& up, uint32_t group, uint32_t sg) {
    for (uint32_t i = 0; i < x.size(); ++i) {
      uint32_t l = i % group, sid = l % sg;
      uint32_t lanes = std::min(sg, group - (l / sg) * sg);
      ASSERT_EQ(down[i], sid + 1 < lanes ? x[i + 1] : x[i])
          << "down, element " << i << ", subgroup size " << sg;
      ASSERT_EQ(up[i], sid >= 3 ? x[i - 3] : x[i]) << "up, element " << i;
    }
  }
};

TEST_F(VulkanTileIr, ShuffleUpDown) {
  Executable exe;
  Kernel k;
  LoadTile("tile_shuffle", "wide", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  const uint32_t sg = dev_.info().subgroup_size;
  if (sg == 0 || 64 % sg) GTEST_SKIP() << "subgroup size " << sg << " does not divide 64";
  std::vector<float> x(256);
  for (uint32_t i = 0; i < x.size(); ++i) x[i] = float(i * 7 % 251) + 0.25f;
  Buffer bx = Upload(x), bd = Alloc(256 * 4), bu = Alloc(256 * 4);
  TS_ASSERT_OK(dev_.default_stream().launch(
      k, {4, 1, 1}, {64, 1, 1},
      {KernelArg::buffer(bx), KernelArg::buffer(bd), KernelArg::buffer(bu)}));
  CheckShuffles(x, Download<float>(bd, 256), Download<float>(bu, 256), 64, sg);
}

TEST_F(VulkanTileIr, ShuffleUpDownPartialSubgroup) {
  // 12 lanes: with subgroups of 8 the second one has 4 lanes, and lane 11's
  // "down" source (lane 12) does not exist.
  Executable exe;
  Kernel k;
  LoadTile("tile_shuffle_narrow", "narrow", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  const uint32_t sg = dev_.info().subgroup_size;
  ASSERT_GT(sg, 0u);
  std::vector<int32_t> x(48);
  for (uint32_t i = 0; i < x.size(); ++i) x[i] = int32_t(i * 13 + 5);
  Buffer bx = Upload(x), bd = Alloc(48 * 4), bu = Alloc(48 * 4);
  TS_ASSERT_OK(dev_.default_stream().launch(
      k, {4, 1, 1}, {12, 1, 1},
      {KernelArg::buffer(bx), KernelArg::buffer(bd), KernelArg::buffer(bu)}));
  CheckShuffles(x, Download<int32_t>(bd, 48), Download<int32_t>(bu, 48), 12, sg);
}

TEST_F(VulkanTileIr, FloatAtomicMaxMin) {
  Executable exe;
  Kernel k;
  LoadTile("tile_float_atomics", "fatomics", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  const size_t n = 1024, groups = 8, group = 128;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = float((i * 7919) % 2003) * 0.125f - 100.0f;  // distinct, both signs
    y[i] = float(i);
  }
  y[517] = std::nanf("");
  const float inf = std::numeric_limits<float>::infinity();
  Buffer bx = Upload(x), by = Upload(y), bo = Upload(std::vector<float>{-inf, inf, -inf, 0});
  Buffer bp = Alloc(groups * 4), bold = Alloc(n * 4);
  TS_ASSERT_OK(dev_.default_stream().launch(
      k, {uint32_t(groups), 1, 1}, {uint32_t(group), 1, 1},
      {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::buffer(bo),
       KernelArg::buffer(bp), KernelArg::buffer(bold)}));
  auto out = Download<float>(bo, 4);
  auto part = Download<float>(bp, groups);
  auto old = Download<float>(bold, n);
  const float mx = *std::max_element(x.begin(), x.end());
  const float mn = *std::min_element(x.begin(), x.end());
  EXPECT_EQ(out[0], mx);
  EXPECT_EQ(out[1], mn);
  EXPECT_TRUE(std::isnan(out[2])) << "a NaN operand must propagate, got " << out[2];
  for (size_t g = 0; g < groups; ++g)
    EXPECT_EQ(part[g], *std::max_element(x.begin() + g * group, x.begin() + (g + 1) * group))
        << "group " << g;
  // Each max returned a value out[0] held before it: -inf or some x, never
  // above the final maximum; the lane holding the maximum saw a smaller one.
  for (size_t i = 0; i < n; ++i)
    ASSERT_TRUE(old[i] == -inf || (old[i] <= mx && std::find(x.begin(), x.end(), old[i]) != x.end()))
        << "old value " << old[i] << " at " << i;
  size_t arg = std::max_element(x.begin(), x.end()) - x.begin();
  EXPECT_LT(old[arg], mx);
}

TEST_F(VulkanTileIr, SubgroupReduceI64) {
  Executable exe;
  Kernel k;
  LoadTile("tile_subgroup_i64", "sg_i64", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  const uint32_t sg = dev_.info().subgroup_size;
  if (sg == 0 || 64 % sg) GTEST_SKIP() << "subgroup size " << sg << " does not divide 64";
  std::vector<int64_t> x(64);
  for (int i = 0; i < 64; ++i) x[i] = i + 1;
  Buffer bx = Upload(x), bo = Alloc(64 * 8);
  TS_ASSERT_OK(dev_.default_stream().launch(k, {1, 1, 1}, {64, 1, 1},
                                            {KernelArg::buffer(bx), KernelArg::buffer(bo)}));
  auto out = Download<int64_t>(bo, 64);
  for (uint32_t i = 0; i < 64; ++i) {
    int64_t want = 0;
    for (uint32_t j = i / sg * sg; j < i / sg * sg + sg; ++j) want += x[j] << 32;
    ASSERT_EQ(out[i], want) << "lane " << i;  // needs all 64 bits
  }
}

TEST_F(MaskedFeatures, SubgroupExtendedTypes) {
  // No capability names this one: the plugin finds the 64-bit subgroup
  // operation in the module and checks shaderSubgroupExtendedTypes.
  std::string path = ShaderPath("tile_subgroup_i64");
  if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path << " (IR not built)";
  auto rt = CreateVulkanRuntime({{"test_mask_features", "shaderSubgroupExtendedTypes"}});
  if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
    GTEST_SKIP() << rt.status().ToString();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Device dev = rt->devices()[0];
  auto e = dev.load_executable("spirv", path);
  ASSERT_FALSE(e.ok());
  const std::string m = e.status().message();
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << m;
  EXPECT_NE(m.find("kernel 'sg_i64'"), std::string::npos) << m;
  EXPECT_NE(m.find("shaderSubgroupExtendedTypes"), std::string::npos) << m;
  EXPECT_NE(m.find("device '" + dev.info().name + "' does not support"), std::string::npos) << m;
}

TEST_F(MaskedFeatures, SignedZeroInfNanPreserve) {
  // Tessera's SPIR-V keeps IEEE inf/NaN in f32 (SignedZeroInfNanPreserve
  // 32, ir/lib/Target/SPIRV/TileToSPIRV.cpp): a device that cannot gets a
  // clear UNSUPPORTED naming the property, not different arithmetic.
  ExpectUnsupported("shaderSignedZeroInfNanPreserveFloat32", "tile_fadd_cas", "SignedZeroInfNanPreserve",
                    "VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat32",
                    "fadd_cas");
}

TEST_F(VulkanTileIr, FloatAddCas) {
  Executable exe;
  Kernel k;
  LoadTile("tile_fadd_cas", "fadd_cas", &exe, &k);
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  Buffer b = Upload(std::vector<float>{1.0f, 2.0f});
  TS_ASSERT_OK(dev_.default_stream().launch(k, {4, 1, 1}, {64, 1, 1}, {KernelArg::buffer(b)}));
  auto out = Download<float>(b, 2);
  EXPECT_EQ(out[0], 1.0f + 256 * 0.5f);  // exact: multiples of 0.5 below 2^23
  EXPECT_EQ(out[1], 2.0f + 4 * 32.0f);   // four groups' shared sums of 64 * 0.5
}

uint16_t HalfBits(float f) {  // exact for the normal values the test uses
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) == 0) return uint16_t(u >> 16);
  uint32_t sign = (u >> 16) & 0x8000, exp = ((u >> 23) & 0xff) - 127 + 15, man = (u >> 13) & 0x3ff;
  return uint16_t(sign | (exp << 10) | man);
}

TEST_F(VulkanTileIr, NonThirtyTwoBitTypes) {
  Executable exe;
  Kernel k;
  LoadTile("tile_types", "types", &exe, &k);  // skips without shaderInt64 etc.
  if (IsSkipped() || HasFatalFailure()) return;  // GTEST_SKIP in a helper returns from it only
  std::vector<int64_t> wide(64);
  std::vector<uint16_t> half(64);
  std::vector<double> dbl(64);
  std::vector<int8_t> byte(64);
  for (int i = 0; i < 64; ++i) {
    wide[i] = int64_t(i) * 100000 + 7;
    half[i] = HalfBits(float(i) / 8.0f);
    dbl[i] = i * 1.5;
    byte[i] = int8_t(uint8_t(i * 4 + 250));
  }
  const int64_t kk = 5000000000LL;  // needs 64 bits
  const uint16_t h = HalfBits(2.0f);
  const double d = 0.1;
  Buffer bw = Upload(wide), bh = Upload(half), bd = Upload(dbl), bb = Upload(byte);
  TS_ASSERT_OK(dev_.default_stream().launch(
      k, {1, 1, 1}, {64, 1, 1},
      {KernelArg::scalar(kk), KernelArg::scalar(h), KernelArg::scalar(d), KernelArg::buffer(bw),
       KernelArg::buffer(bh), KernelArg::buffer(bd), KernelArg::buffer(bb)}));
  auto w2 = Download<int64_t>(bw, 64);
  auto h2 = Download<uint16_t>(bh, 64);
  auto d2 = Download<double>(bd, 64);
  auto b2 = Download<int8_t>(bb, 64);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(w2[i], wide[i] * kk + i) << i;
    ASSERT_EQ(h2[i], HalfBits(3.0f * float(i) / 8.0f)) << i;  // fma(v, 2, v), exact
    ASSERT_EQ(d2[i], dbl[i] + d) << i;
    ASSERT_EQ(b2[i], int8_t(uint8_t(byte[i]) + 1)) << i;
  }
}

// ---------------------------------------------------------------- streams

TEST_F(VulkanTest, TwoStreamsEventEdge) {
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 1 << 16;
  for (bool non_blocking : {false, true}) {
    tessera::StreamOptions o;
    o.non_blocking = non_blocking;
    auto sa = dev_.create_stream(o), sb = dev_.create_stream(o);
    ASSERT_TRUE(sa.ok() && sb.ok());
    Buffer a = Alloc(n * 4), b = Alloc(n * 4);
    auto ev = dev_.create_event();
    ASSERT_TRUE(ev.ok());
    // A: many fills (batched into one submit), the last one wins.
    for (uint32_t v = 0; v < 50; ++v)
      TS_ASSERT_OK(sa->launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                              {KernelArg::buffer(a), KernelArg::scalar(v * 1000),
                               KernelArg::scalar(n)}));
    TS_ASSERT_OK(sa->record(*ev));
    // B waits on the event, then copies what A wrote.
    TS_ASSERT_OK(sb->wait(*ev));
    TS_ASSERT_OK(sb->copy_async(b, a, n * 4));
    TS_ASSERT_OK(sb->synchronize());
    std::vector<uint32_t> h(n);
    TS_ASSERT_OK(tessera::copy(h.data(), b, n * 4));
    for (uint32_t i = 0; i < n; i += 997) ASSERT_EQ(h[i], 49000u + i) << i;
    auto q = ev->query();
    ASSERT_TRUE(q.ok());
    EXPECT_TRUE(*q);
    auto idle = sa->query();
    ASSERT_TRUE(idle.ok());
    EXPECT_TRUE(*idle);
  }
}

TEST_F(VulkanTest, DefaultStreamOrdering) {
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 1 << 14;
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  Stream d = dev_.default_stream();
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  // blocking stream -> default stream: no event needed
  TS_ASSERT_OK(s->launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                         {KernelArg::buffer(a), KernelArg::scalar(5u), KernelArg::scalar(n)}));
  TS_ASSERT_OK(d.copy_async(b, a, n * 4));
  // default stream -> blocking stream
  TS_ASSERT_OK(d.launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                        {KernelArg::buffer(a), KernelArg::scalar(9u), KernelArg::scalar(n)}));
  Buffer c = Alloc(n * 4);
  TS_ASSERT_OK(s->copy_async(c, a, n * 4));
  TS_ASSERT_OK(s->synchronize());
  std::vector<uint32_t> hb(n), hc(n);
  TS_ASSERT_OK(tessera::copy(hb.data(), b, n * 4));
  TS_ASSERT_OK(tessera::copy(hc.data(), c, n * 4));
  for (uint32_t i = 0; i < n; i += 101) {
    ASSERT_EQ(hb[i], 5u + i) << i;
    ASSERT_EQ(hc[i], 9u + i) << i;
  }
  // A destroyed stream's queued work still completes.
  auto t = dev_.create_stream();
  ASSERT_TRUE(t.ok());
  TS_ASSERT_OK(t->launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                         {KernelArg::buffer(a), KernelArg::scalar(77u), KernelArg::scalar(n)}));
  TS_ASSERT_OK(t->destroy());
  TS_ASSERT_OK(dev_.synchronize());
  TS_ASSERT_OK(tessera::copy(hb.data(), a, n * 4));
  EXPECT_EQ(hb[n - 1], 77u + n - 1);
}

TEST_F(VulkanTest, NeverRecordedEvents) {
  auto e1 = dev_.create_event(), e2 = dev_.create_event();
  ASSERT_TRUE(e1.ok() && e2.ok());
  auto q = e1->query();
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(*q);
  TS_EXPECT_OK(e1->synchronize());
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  TS_EXPECT_OK(s->wait(*e1));
  TS_EXPECT_OK(s->synchronize());
  auto ms = Event::elapsed_ms(*e1, *e2);
  ASSERT_FALSE(ms.ok());
  EXPECT_EQ(ms.status().code(), StatusCode::kFailedPrecondition) << ms.status().ToString();
  // Recorded: elapsed time works.
  Buffer b = Alloc(1 << 20);
  TS_ASSERT_OK(s->record(*e1));
  TS_ASSERT_OK(s->memset_async(b, 0, 1, 1 << 20));
  TS_ASSERT_OK(s->record(*e2));
  TS_ASSERT_OK(e2->synchronize());
  auto t = Event::elapsed_ms(*e1, *e2);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GE(*t, 0.0);
  // Timing disabled.
  auto nt = dev_.create_event(TS_EVENT_DISABLE_TIMING);
  ASSERT_TRUE(nt.ok());
  TS_ASSERT_OK(s->record(*nt));
  TS_ASSERT_OK(s->synchronize());
  EXPECT_FALSE(Event::elapsed_ms(*e1, *nt).ok());
}

// ---------------------------------------------------------------- graphs

TEST_F(VulkanTest, GraphCaptureReplay) {
  Executable exe;
  Kernel saxpy;
  LoadKernel("saxpy", &exe, &saxpy);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 512;
  Buffer bx = Alloc(n * 4), by = Alloc(n * 4);
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  float a = 2.0f;
  TS_ASSERT_OK(s->begin_capture());
  // y = 0x3f800000 bytes => 1.0f everywhere, then y = a*x + y
  TS_ASSERT_OK(s->memset_async(by, 0, 0, n * 4));
  TS_ASSERT_OK(s->launch(saxpy, {n / 64, 1, 1}, {64, 1, 1},
                         {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::scalar(a),
                          KernelArg::scalar(n)}));
  auto g = s->end_capture();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->num_nodes(), 2u);
  EXPECT_EQ(g->num_edges(), 1u);
  auto exec = g->instantiate();
  ASSERT_TRUE(exec.ok());
  TS_ASSERT_OK(g->destroy());  // the exec is independent of the graph
  std::vector<float> x(n), y(n);
  for (int round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < n; ++i) x[i] = float(i + round);
    TS_ASSERT_OK(tessera::copy(bx, x.data(), n * 4));
    TS_ASSERT_OK(s->launch(*exec));
    TS_ASSERT_OK(s->synchronize());
    TS_ASSERT_OK(tessera::copy(y.data(), by, n * 4));
    for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], a * x[i]) << round << " " << i;
  }
  // Replays batch: several launches, one synchronize.
  for (int i = 0; i < 5; ++i) TS_ASSERT_OK(s->launch(*exec));
  TS_ASSERT_OK(s->synchronize());
}

TEST_F(VulkanTest, GraphCrossStreamCapture) {
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 256;
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  auto s1 = dev_.create_stream(), s2 = dev_.create_stream();
  auto e1 = dev_.create_event(), e2 = dev_.create_event();
  ASSERT_TRUE(s1.ok() && s2.ok() && e1.ok() && e2.ok());
  TS_ASSERT_OK(s1->begin_capture());
  TS_ASSERT_OK(s1->launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                          {KernelArg::buffer(a), KernelArg::scalar(100u), KernelArg::scalar(n)}));
  TS_ASSERT_OK(s1->record(*e1));
  TS_ASSERT_OK(s2->wait(*e1));  // s2 joins
  TS_ASSERT_OK(s2->copy_async(b, a, n * 4));
  TS_ASSERT_OK(s2->record(*e2));
  TS_ASSERT_OK(s1->wait(*e2));  // joined back
  auto g = s1->end_capture();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->num_nodes(), 2u);
  EXPECT_GE(g->num_edges(), 2u);
  auto exec = g->instantiate();
  ASSERT_TRUE(exec.ok());
  TS_ASSERT_OK(s1->launch(*exec));
  TS_ASSERT_OK(s1->synchronize());
  std::vector<uint32_t> h(n);
  TS_ASSERT_OK(tessera::copy(h.data(), b, n * 4));
  EXPECT_EQ(h[17], 117u);

  // Not joined back: no graph.
  TS_ASSERT_OK(s1->begin_capture());
  TS_ASSERT_OK(s1->record(*e1));
  TS_ASSERT_OK(s2->wait(*e1));
  TS_ASSERT_OK(s2->copy_async(b, a, n * 4));
  auto bad = s1->end_capture();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kFailedPrecondition) << bad.status().ToString();
  // Both streams work normally again.
  TS_ASSERT_OK(s2->copy_async(b, a, n * 4));
  TS_ASSERT_OK(s2->synchronize());
}

// ---------------------------------------------------------------- misc

TEST_F(VulkanTest, ConcurrentThreadsOwnStreams) {
  Executable exe;
  Kernel fill;
  LoadKernel("fill", &exe, &fill);
  if (IsSkipped() || HasFatalFailure()) return;
  const uint32_t n = 1024;
  const int kThreads = 4;
  std::vector<Buffer> bufs;
  for (int t = 0; t < kThreads; ++t) bufs.push_back(Alloc(n * 4));
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto s = dev_.create_stream();
      if (!s.ok()) return void(errors[t] = s.status().ToString());
      auto ev = dev_.create_event();
      for (uint32_t v = 0; v < 200; ++v) {
        Status st = s->launch(fill, {n / 32, 1, 1}, {32, 1, 1},
                              {KernelArg::buffer(bufs[t]), KernelArg::scalar(v + 1000u * t),
                               KernelArg::scalar(n)});
        if (st.ok() && v % 50 == 0) st = s->record(*ev);
        if (st.ok() && v % 50 == 0) st = dev_.default_stream().wait(*ev);
        if (!st.ok()) return void(errors[t] = st.ToString());
      }
      std::vector<uint32_t> h(n);
      Status st = s->synchronize();
      if (st.ok()) st = tessera::copy(h.data(), bufs[t], n * 4);
      if (!st.ok()) return void(errors[t] = st.ToString());
      if (h[n - 1] != 199u + 1000u * t + n - 1) errors[t] = "wrong result";
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  TS_EXPECT_OK(dev_.synchronize());
}

TEST_F(VulkanTest, HostStagedAllReduce) {
  auto comm = rt_.create_communicator({dev_});
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  const uint32_t n = 100;
  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), 1.0f);
  Buffer send = Alloc(n * 4), recv = Alloc(n * 4);
  TS_ASSERT_OK(tessera::copy(send, x.data(), n * 4));
  TS_ASSERT_OK(comm->all_reduce({send}, {recv}, n, TS_DTYPE_F32, TS_REDUCE_SUM,
                                {dev_.default_stream()}, true));
  std::vector<float> y(n);
  TS_ASSERT_OK(tessera::copy(y.data(), recv, n * 4));
  EXPECT_EQ(x, y);
}

TEST_F(VulkanTest, StagedCollectiveThroughTheRawAbi) {
  // The host-staged collective driver (plugins/common/staged_collective)
  // called as a core would: a broadcast on one rank copies the root's data,
  // and a root that is not a rank is refused with INVALID_ARGUMENT.
  const TsPluginApi* api = rt_.plugin_api();
  TsDevice* raw = dev_.raw();
  TsCommunicator_Create_Args cc{};
  cc.struct_size = TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE;
  cc.client = rt_.raw_client();
  cc.devices = &raw;
  cc.num_devices = 1;
  ASSERT_EQ(api->Communicator_Create(&cc), nullptr);
  auto send = dev_.allocate(64);
  auto recv = dev_.allocate(64);
  auto s = dev_.create_stream();
  ASSERT_TRUE(send.ok() && recv.ok() && s.ok());
  std::vector<uint32_t> v(16, 7);
  TS_ASSERT_OK(tessera::copy(*send, v.data(), 64));
  TsMemoryRef sref{send->raw(), 0}, rref{recv->raw(), 0};
  TsStream* sraw = s->raw();
  TsCommunicator_Collective_Args a{};
  a.struct_size = TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE;
  a.communicator = cc.communicator;
  a.op = TS_COLLECTIVE_BROADCAST;
  a.dtype = TS_DTYPE_I32;
  a.count = 16;
  a.root = 0;
  a.send = &sref;
  a.recv = &rref;
  a.streams = &sraw;
  EXPECT_EQ(api->Communicator_Collective(&a), nullptr);
  std::vector<uint32_t> got(16, 0);
  TS_ASSERT_OK(tessera::copy(got.data(), *recv, 64));
  EXPECT_EQ(got, v);
  // A root out of range is refused, naming it.
  a.root = 1;
  TsError* err = api->Communicator_Collective(&a);
  ASSERT_NE(err, nullptr);
  TsError_GetCode_Args gc{};
  gc.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
  gc.error = err;
  ASSERT_EQ(api->Error_GetCode(&gc), nullptr);
  EXPECT_EQ(gc.code, TS_ERROR_INVALID_ARGUMENT);
  TsError_Destroy_Args d{};
  d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  d.error = err;
  api->Error_Destroy(&d);
  TsCommunicator_Destroy_Args cd{};
  cd.struct_size = TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE;
  cd.communicator = cc.communicator;
  EXPECT_EQ(api->Communicator_Destroy(&cd), nullptr);
}


TEST_F(VulkanTest, HugeHostSizesAreErrorsNotCrashes) {
  // Host_Allocate(SIZE_MAX) once wrapped in its page rounding, got a few
  // bytes and crashed later; a Host_Register range past the end of the
  // address space wrapped the same way.  Both go through the raw ABI (the
  // core's own checks would stop some of them first).
  const TsPluginApi* api = rt_.plugin_api();
  auto code_of = [&](TsError* e) {
    TsError_GetCode_Args gc{};
    gc.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
    gc.error = e;
    EXPECT_EQ(api->Error_GetCode(&gc), nullptr);
    TsError_Destroy_Args d{};
    d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
    d.error = e;
    api->Error_Destroy(&d);
    return gc.code;
  };
  for (uint64_t size : {UINT64_MAX, UINT64_MAX - 4095, uint64_t{1} << 63}) {
    TsHost_Allocate_Args a{};
    a.struct_size = TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE;
    a.client = rt_.raw_client();
    a.size = size;
    TsError* e = api->Host_Allocate(&a);
    ASSERT_NE(e, nullptr) << size;
    EXPECT_EQ(code_of(e), TS_ERROR_RESOURCE_EXHAUSTED) << size;
  }
  std::vector<uint8_t> bytes(4096);
  TsHost_Register_Args r{};
  r.struct_size = TS_HOST_REGISTER_ARGS_STRUCT_SIZE;
  r.client = rt_.raw_client();
  r.pointer = bytes.data();
  r.size = UINT64_MAX;
  TsError* e = api->Host_Register(&r);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(code_of(e), TS_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace tessera_vk_test
