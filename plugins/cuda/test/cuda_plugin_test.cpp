// Tests of the CUDA plugin.  On a machine without an NVIDIA driver (the
// build machines) the plugin must load and report "not available" naming
// libcuda.so.1, TESSERA_BACKEND=cuda,cpu must fall through to cpu, and the
// pure parts (CUresult mapping, image checks, priority and arch mapping) are
// checked.  The device tests skip with the reason where there is no device,
// so the file runs unchanged on a GPU machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cubin.hpp"
#include "event_clock_checks.hpp"
#include "test_util.hpp"
#include "cuda_ext.h"
#include "error.hpp"
#include "mapping.hpp"
#include "tessera/kernel_archive.hpp"
#include "tessera/runtime.hpp"

namespace tessera_cuda_test {
namespace {

using tessera::Buffer;
using tessera::Device;
using tessera::Event;
using tessera::KernelArg;
using tessera::Runtime;
using tessera::RuntimeOptions;
using tessera::Status;
using tessera::StatusCode;
using tessera::Stream;
using namespace tessera::cuda;


tessera::StatusOr<Runtime> CreateCudaRuntime(
    const std::vector<std::pair<std::string, std::string>>& plugin_options = {},
    const std::string& backend = "cuda") {
  return Runtime::Create(tessera::testing::PluginOptions("cuda", plugin_options, backend));
}

// The test kernels: the paths compiled in, or the environment's (a test
// binary run from another checkout).  Not TESSERA_CUDA_*: the core would
// pass those to the plugin as options.
std::string PtxPath() {
  const char* v = std::getenv("CUDA_PLUGIN_TEST_PTX");
  return v && *v ? v : TESSERA_CUDA_TEST_PTX;
}
#ifdef TESSERA_CUDA_TEST_CUBIN
std::string CubinPath() {
  const char* v = std::getenv("CUDA_PLUGIN_TEST_CUBIN");
  return v && *v ? v : TESSERA_CUDA_TEST_CUBIN;
}
#endif

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ------------------------------------------------------------ no driver

TEST(CudaNoDriver, MissingLibraryIsUnavailable) {
  auto rt = CreateCudaRuntime({{"library", "/nonexistent/libcuda.so.1"}});
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("not available"), std::string::npos)
      << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("cannot open shared object file"), std::string::npos)
      << rt.status().ToString();
}

TEST(CudaNoDriver, DefaultLibraryNamedWhenMissing) {
  auto rt = CreateCudaRuntime();
  if (rt.ok()) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  const std::string m = rt.status().message();
  // Either the library is missing, or it is there without a usable device.
  EXPECT_TRUE(m.find("libcuda.so.1") != std::string::npos ||
              m.find("cuInit") != std::string::npos ||
              m.find("no CUDA device") != std::string::npos)
      << m;
}

TEST(CudaNoDriver, BackendListFallsThroughToCpu) {
  auto cuda = CreateCudaRuntime();
  auto rt = CreateCudaRuntime({}, "cuda,cpu");
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), cuda.ok() ? "cuda" : "cpu");
  EXPECT_FALSE(rt->devices().empty());
}

TEST(CudaNoDriver, UnknownOptionIsRejectedWithTheKnownOnes) {
  auto rt = CreateCudaRuntime({{"bogus", "1"}});
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("library"), std::string::npos) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("nccl_library"), std::string::npos) << rt.status().ToString();
}

// The collectives library option is known (an empty value turns it off);
// the client still fails on the driver library it cannot open, not on it.
TEST(CudaNoDriver, CollectiveLibraryOptionIsAccepted) {
  for (const char* value : {"", "/nonexistent/libnccl.so.2"}) {
    auto rt = CreateCudaRuntime({{"library", "/nonexistent/libcuda.so.1"}, {"nccl_library", value}});
    ASSERT_FALSE(rt.ok());
    EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
    EXPECT_NE(rt.status().message().find("/nonexistent/libcuda.so.1"), std::string::npos)
        << rt.status().ToString();
  }
}

// ------------------------------------------------------------ error mapping

TEST(CudaErrors, ResultCodes) {
  EXPECT_EQ(cu_result_code(CUDA_ERROR_OUT_OF_MEMORY), TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_NO_DEVICE), TS_ERROR_UNAVAILABLE);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_NOT_READY), TS_ERROR_NOT_READY);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_INVALID_VALUE), TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_INVALID_PTX), TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), TS_ERROR_UNSUPPORTED);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_NO_BINARY_FOR_GPU), TS_ERROR_UNSUPPORTED);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_NOT_FOUND), TS_ERROR_NOT_FOUND);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_INVALID_HANDLE), TS_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_STREAM_CAPTURE_UNJOINED), TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_STREAM_CAPTURE_ISOLATION), TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
            TS_ERROR_ALREADY_EXISTS);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_ILLEGAL_ADDRESS), TS_ERROR_ABORTED);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_ECC_UNCORRECTABLE), TS_ERROR_DATA_LOSS);
  EXPECT_EQ(cu_result_code(CUDA_ERROR_UNKNOWN), TS_ERROR_UNKNOWN);
  EXPECT_EQ(cu_result_code(static_cast<CUresult>(12345)), TS_ERROR_INTERNAL);
}

TEST(CudaErrors, BuiltinNames) {
  EXPECT_EQ(cu_result_builtin_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(cu_result_builtin_name(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  EXPECT_EQ(cu_result_builtin_name(static_cast<CUresult>(12345)), "CUDA_ERROR_12345");
}

TEST(CudaErrors, MessageNamesTheCallAndTheCode) {
  TsError* e = cu_error(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1.0 GiB)", 13000, 9, 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(e->message, "cuda: cuMemAlloc(1.0 GiB) failed: CUDA_ERROR_OUT_OF_MEMORY");
  TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  tessera::plugin_support::Error_Destroy(&da);
  EXPECT_EQ(format_cu_error("cuX", "CUDA_ERROR_Y", "why", "do this"),
            "cuda: cuX failed: CUDA_ERROR_Y: why (do this)");
}

TEST(CudaErrors, PtxAndArchitectureHintsSayTheDriverAndWhatIsNeeded) {
  std::string h = cu_result_hint(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 12040, 9, 0);
  EXPECT_NE(h.find("CUDA 12.4"), std::string::npos) << h;
  EXPECT_NE(h.find("update the NVIDIA driver"), std::string::npos) << h;
  h = cu_result_hint(CUDA_ERROR_NO_BINARY_FOR_GPU, 13000, 9, 0);
  EXPECT_NE(h.find("sm_90"), std::string::npos) << h;
  EXPECT_NE(h.find("CUDA 13.0"), std::string::npos) << h;
  h = cu_result_hint(CUDA_ERROR_INVALID_PTX, 13000, 8, 6);
  EXPECT_NE(h.find("sm_86"), std::string::npos) << h;
  EXPECT_EQ(cu_result_hint(CUDA_ERROR_OUT_OF_MEMORY, 13000, 9, 0), "");
  EXPECT_EQ(driver_version_text(13000), "13.0");
  EXPECT_EQ(driver_version_text(12080), "12.8");
}

// ------------------------------------------------------------ mappings

TEST(CudaMapping, StreamPriority) {
  // Hopper: least 0, greatest -5.
  EXPECT_EQ(cuda_stream_priority(0, 0, -5), 0);
  EXPECT_EQ(cuda_stream_priority(1, 0, -5), -1);
  EXPECT_EQ(cuda_stream_priority(5, 0, -5), -5);
  EXPECT_EQ(cuda_stream_priority(100, 0, -5), -5);
  EXPECT_EQ(cuda_stream_priority(-3, 0, -5), 0);
  EXPECT_EQ(cuda_stream_priority(INT32_MIN, 0, -5), 0);
  EXPECT_EQ(cuda_stream_priority(INT32_MAX, 0, -5), -5);
}

TEST(CudaMapping, ArchForDevice) {
  EXPECT_EQ(cuda_arch_for(9, 0), "sm_90a");
  EXPECT_EQ(cuda_arch_for(8, 0), "sm_80");
  EXPECT_EQ(cuda_arch_for(8, 6), "sm_86");
  EXPECT_EQ(cuda_arch_for(10, 0), "sm_100");
}

// ------------------------------------------------------------ images

TEST(CudaImages, PtxIsCopiedWithANul) {
  const std::string ptx = ReadText(PtxPath());
  ASSERT_FALSE(ptx.empty());
  EXPECT_EQ(classify_image(ptx.data(), ptx.size()), ImageKind::kPtx);
  PreparedImage img;
  ASSERT_EQ(prepare_image(ptx.data(), ptx.size(), "ptx", &img), "");
  EXPECT_EQ(img.kind, ImageKind::kPtx);
  EXPECT_EQ(img.size, ptx.size() + 1);
  EXPECT_EQ(static_cast<const char*>(img.data())[ptx.size()], '\0');
  // PTX is not a cubin, and an inner NUL is refused.
  PreparedImage other;
  EXPECT_NE(prepare_image(ptx.data(), ptx.size(), "cubin", &other), "");
  std::string bad = ptx;
  bad[10] = '\0';
  EXPECT_NE(prepare_image(bad.data(), bad.size(), "ptx", &other).find("NUL"), std::string::npos);
  EXPECT_NE(prepare_image("hello", 5, "ptx", &other), "");
}

TEST(CudaImages, CubinHeadersAreBounded) {
#ifndef TESSERA_CUDA_TEST_CUBIN
  GTEST_SKIP() << "no ptxas at configure time: no test cubin";
#else
  const std::string cubin = ReadText(CubinPath());
  ASSERT_GT(cubin.size(), 64u);
  EXPECT_EQ(classify_image(cubin.data(), cubin.size()), ImageKind::kCubin);
  EXPECT_EQ(check_cubin(cubin.data(), cubin.size()), "");
  PreparedImage img;
  EXPECT_EQ(prepare_image(cubin.data(), cubin.size(), "cubin", &img), "");
  EXPECT_NE(prepare_image(cubin.data(), cubin.size(), "ptx", &img), "");
  // Every truncation is caught before the driver (which takes no size).
  for (size_t n : {size_t{0}, size_t{10}, size_t{63}, size_t{64}, cubin.size() / 2,
                   cubin.size() - 1}) {
    EXPECT_NE(check_cubin(cubin.data(), n), "") << "truncated to " << n << " bytes";
    EXPECT_NE(prepare_image(cubin.data(), n, "cubin", &img), "") << n;
  }
  // Another machine's ELF is not a cubin.
  std::string x86 = cubin;
  x86[0x12] = 62;
  x86[0x13] = 0;
  EXPECT_NE(check_cubin(x86.data(), x86.size()).find("EM_CUDA"), std::string::npos);
#endif
}

TEST(CudaImages, FatbinHeaderIsBounded) {
  unsigned char fb[32] = {0};
  const uint32_t magic = 0xBA55ED50u;
  std::memcpy(fb, &magic, 4);
  const uint16_t header = 16;
  std::memcpy(fb + 6, &header, 2);
  uint64_t payload = 16;
  std::memcpy(fb + 8, &payload, 8);
  EXPECT_EQ(classify_image(fb, sizeof fb), ImageKind::kFatbin);
  EXPECT_EQ(check_fatbin(fb, sizeof fb), "");
  payload = 17;
  std::memcpy(fb + 8, &payload, 8);
  EXPECT_NE(check_fatbin(fb, sizeof fb), "");
  payload = ~uint64_t{0};
  std::memcpy(fb + 8, &payload, 8);
  EXPECT_NE(check_fatbin(fb, sizeof fb), "");
}

TEST(CudaImages, ArchiveEntriesAreCheckedAndTruncationRejected) {
  const std::string ptx = ReadText(PtxPath());
  std::string blob = tessera::WriteKernelArchive({{"add_const", ptx}, {"fill_via_shared", ptx}});
  std::vector<PreparedImage> images;
  std::map<std::string, std::vector<TensorMapSpec>> maps;
  ASSERT_EQ(prepare_archive(blob.data(), blob.size(), &images, &maps), "");
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0].name, "add_const");
  EXPECT_EQ(images[1].kind, ImageKind::kPtx);
  EXPECT_TRUE(maps.empty());
  for (size_t n : {size_t{0}, size_t{8}, size_t{16}, size_t{24}, blob.size() / 2,
                   blob.size() - 9}) {
    std::vector<PreparedImage> out;
    std::map<std::string, std::vector<TensorMapSpec>> m;
    EXPECT_NE(prepare_archive(blob.data(), n, &out, &m), "") << "truncated to " << n << " bytes";
  }
  // An entry that is neither a cubin nor PTX is named.
  std::string junk = tessera::WriteKernelArchive({{"k", std::string(64, 'x')}});
  std::vector<PreparedImage> out;
  EXPECT_NE(prepare_archive(junk.data(), junk.size(), &out, &maps).find("'k'"), std::string::npos);
  std::string dup = tessera::WriteKernelArchive({{"k", ptx}, {"k", ptx}});
  out.clear();
  EXPECT_NE(prepare_archive(dup.data(), dup.size(), &out, &maps).find("two entries"),
            std::string::npos);
}

// The tensor maps of a TMA kernel travel beside its image; a malformed
// description, or one for a kernel the archive lacks, is refused by name.
TEST(CudaImages, ArchiveTensorMapEntries) {
  const std::string ptx = ReadText(PtxPath());
  const std::string line = "arg=1 element_bytes=2 rows=512 ld=256 box_rows=64 box_cols=64 swizzle=128\n";
  std::string blob = tessera::WriteKernelArchive(
      {{"add_const", ptx}, {std::string(kTensorMapEntryPrefix) + "add_const", line + line}});
  std::vector<PreparedImage> images;
  std::map<std::string, std::vector<TensorMapSpec>> maps;
  ASSERT_EQ(prepare_archive(blob.data(), blob.size(), &images, &maps), "");
  ASSERT_EQ(images.size(), 1u);
  ASSERT_EQ(maps["add_const"].size(), 2u);
  EXPECT_EQ(maps["add_const"][1].arg, 1u);
  EXPECT_EQ(maps["add_const"][1].ld, 256u);
  std::string orphan = tessera::WriteKernelArchive(
      {{"add_const", ptx}, {std::string(kTensorMapEntryPrefix) + "other", line}});
  images.clear();
  maps.clear();
  EXPECT_NE(prepare_archive(orphan.data(), orphan.size(), &images, &maps).find("no such kernel"),
            std::string::npos);
  std::string bad = tessera::WriteKernelArchive(
      {{"add_const", ptx}, {std::string(kTensorMapEntryPrefix) + "add_const", "arg=1 rows=x\n"}});
  images.clear();
  maps.clear();
  EXPECT_NE(prepare_archive(bad.data(), bad.size(), &images, &maps).find(".tensormaps:add_const"),
            std::string::npos);
}

TEST(CudaTensorMaps, ParseIsStrictAndBounded) {
  std::vector<TensorMapSpec> specs;
  EXPECT_EQ(ParseTensorMapSpecs("swizzle=128 box_cols=64 box_rows=128 ld=4096 rows=4096 element_bytes=2 arg=0\n\n",
                                &specs),
            "");
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].rows, 4096u);
  EXPECT_EQ(specs[0].box_rows, 128u);
  // What the compiler part writes reads back the same.
  std::vector<TensorMapSpec> again;
  ASSERT_EQ(ParseTensorMapSpecs(FormatTensorMapSpec(specs[0]), &again), "");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(FormatTensorMapSpec(again[0]), FormatTensorMapSpec(specs[0]));
  for (const char* bad : {"arg=0", "arg=0 arg=0 element_bytes=2 rows=1 ld=8 box_rows=1 box_cols=8 swizzle=0",
                          "arg=-1 element_bytes=2 rows=1 ld=8 box_rows=1 box_cols=8 swizzle=0",
                          "arg=0 element_bytes=2 rows=1 ld=8 box_rows=1 box_cols=8 swizzle=0 color=3",
                          "arg=0 element_bytes=2 rows=1 ld=8 box_rows=99999999999 box_cols=8 swizzle=0",
                          "arg=0 element_bytes=2 rows=1 ld=99999999999999999999999 box_rows=1 box_cols=8 swizzle=0"})
    EXPECT_NE(ParseTensorMapSpecs(bad, &specs), "") << bad;
  std::string many;
  for (size_t i = 0; i <= kMaxTensorMaps; ++i) many += "arg=0 element_bytes=2 rows=1 ld=8 box_rows=1 box_cols=8 swizzle=0\n";
  EXPECT_NE(ParseTensorMapSpecs(many, &specs).find("more than"), std::string::npos);
}

// cuTensorMapEncodeTiled's documented rules, checked before the call so
// that a launch says which one a buffer breaks.
TEST(CudaTensorMaps, CheckFollowsTheDriversRules) {
  TensorMapSpec s;
  s.arg = 0;
  s.element_bytes = 2;
  s.rows = 1024;
  s.ld = 512;
  s.box_rows = 128;
  s.box_cols = 64;
  s.swizzle = 128;
  const uint64_t bytes = 1024 * 512 * 2;
  TiledMapArgs t;
  ASSERT_EQ(CheckTensorMap(s, 0x7f0000000000, bytes, &t), "");
  EXPECT_EQ(t.global_dim[0], 512u);  // innermost first
  EXPECT_EQ(t.global_dim[1], 1024u);
  EXPECT_EQ(t.global_stride, 1024u);
  EXPECT_EQ(t.box_dim[0], 64u);
  EXPECT_EQ(t.box_dim[1], 128u);
  EXPECT_EQ(t.element_strides[0], 1u);
  auto broken = [&](TensorMapSpec v, uint64_t address, uint64_t size, const char* rule) {
    const std::string why = CheckTensorMap(v, address, size, &t);
    EXPECT_NE(why.find(rule), std::string::npos) << "wanted '" << rule << "', got '" << why << "'";
  };
  broken(s, 0x7f0000000008, bytes, "not 16-byte aligned");
  broken(s, 0x7f0000000000, bytes - 1, "the buffer has");
  TensorMapSpec v = s;
  v.ld = 500;  // 1000-byte rows
  broken(v, 0x7f0000000000, bytes, "not a multiple of 16");
  v = s;
  v.box_rows = 257;
  broken(v, 0x7f0000000000, bytes, "0 or above 256");
  v = s;
  v.box_cols = 128;  // 256-byte box rows in a 128-byte swizzle
  broken(v, 0x7f0000000000, bytes, "exceed the 128-byte swizzle span");
  v = s;
  v.box_cols = 4;  // 8-byte box rows
  broken(v, 0x7f0000000000, bytes, "are not a multiple of 16");
  v = s;
  v.swizzle = 96;
  broken(v, 0x7f0000000000, bytes, "is not 0, 32, 64 or 128");
  v = s;
  v.element_bytes = 3;
  broken(v, 0x7f0000000000, bytes, "is not 1, 2, 4 or 8");
  v = s;
  v.rows = (uint64_t{1} << 32) + 1;
  broken(v, 0x7f0000000000, UINT64_MAX, "above 2^32");
  v = s;
  v.box_rows = 2048;
  v.rows = 1024;
  broken(v, 0x7f0000000000, bytes, "0 or above 256");
  v = s;
  v.ld = 32;  // narrower than the box
  broken(v, 0x7f0000000000, bytes, "larger than the view");
}

// ------------------------------------------------------------ on a device

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = CreateCudaRuntime();
    if (!rt.ok()) {
      if (rt.status().code() == StatusCode::kUnavailable)
        GTEST_SKIP() << "CUDA is unavailable here: " << rt.status().ToString();
      FAIL() << rt.status().ToString();
    }
    rt_ = std::move(rt).value();
    ASSERT_FALSE(rt_.devices().empty());
    dev_ = rt_.devices()[0];
  }
  Buffer Alloc(uint64_t size, TsBufferKind kind = TS_BUFFER_DEVICE) {
    auto b = dev_.allocate(size, kind);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : Buffer();
  }
  std::vector<uint32_t> Download(const Buffer& b, size_t n) {
    std::vector<uint32_t> v(n);
    Status st = tessera::copy(v.data(), b, n * 4);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return v;
  }
  tessera::StatusOr<tessera::Kernel> LoadPtxKernel(const char* name) {
    const std::string ptx = ReadText(PtxPath());
    auto exe = dev_.load_executable("ptx", ptx.data(), ptx.size());
    if (!exe.ok()) return exe.status();
    exe_ = *exe;
    return exe_.kernel(name);
  }
  Runtime rt_;
  Device dev_;
  tessera::Executable exe_;
};

TEST_F(CudaTest, DeviceProperties) {
  const tessera::DeviceInfo& info = dev_.info();
  EXPECT_EQ(rt_.backend(), "cuda");
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.vendor, "NVIDIA");
  EXPECT_EQ(info.api_version.rfind("CUDA ", 0), 0u) << info.api_version;
  EXPECT_EQ(info.subgroup_size, 32u);
  EXPECT_GE(info.max_group_size, 1024u);
  EXPECT_GT(info.compute_units, 0u);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GE(info.shared_memory_per_group, 48u * 1024);
  EXPECT_TRUE(info.graphs);
  EXPECT_EQ(info.executable_formats,
            (std::vector<std::string>{"archive:cubin", "cubin", "ptx"}));
  // The vendor extension: compute capability and both shared-memory limits.
  TsCudaDeviceInfo ext{};
  ext.header.struct_size = TS_CUDA_DEVICE_INFO_STRUCT_SIZE;
  ext.header.type = TS_EXTENSION_CUDA_DEVICE_INFO;
  TsDeviceProperties props{};
  props.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  TsDevice_GetProperties_Args args{};
  args.struct_size = TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE;
  args.extension_start = &ext.header;
  args.device = dev_.raw();
  args.properties = &props;
  ASSERT_EQ(rt_.plugin_api()->Device_GetProperties(&args), nullptr);
  EXPECT_GE(ext.compute_capability_major, 7u);
  EXPECT_EQ(ext.shared_memory_per_block, 48u * 1024);
  EXPECT_EQ(ext.shared_memory_per_block_optin, info.shared_memory_per_group);
  EXPECT_EQ(ext.tma, ext.compute_capability_major >= 9 ? 1u : 0u);
  std::printf("device: %s, %s, driver %s, sm_%u%u, %u SMs, shared %llu/%llu\n",
              info.name.c_str(), info.api_version.c_str(), info.driver_version.c_str(),
              ext.compute_capability_major, ext.compute_capability_minor, info.compute_units,
              static_cast<unsigned long long>(ext.shared_memory_per_block),
              static_cast<unsigned long long>(ext.shared_memory_per_block_optin));
}

TEST_F(CudaTest, CopiesAndMemsetEveryKind) {
  const size_t n = 1000;
  std::vector<uint32_t> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint32_t>(i * 7);
  for (TsBufferKind kind : {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED}) {
    if (!dev_.info().supports(kind)) continue;
    Buffer a = Alloc(n * 4, kind), b = Alloc(n * 4, kind);
    TS_ASSERT_OK(tessera::copy(a, host.data(), n * 4));  // pageable, synchronous
    TS_ASSERT_OK(tessera::copy(b, a, n * 4));
    EXPECT_EQ(Download(b, n), host) << "kind " << kind;
    TS_ASSERT_OK(tessera::memset(b, 4, 0xAB, 5));  // unaligned: cuMemsetD8
    auto v = Download(b, n);
    EXPECT_EQ(v[1], 0xABABABABu);
    EXPECT_EQ(v[2] & 0xFF, 0xABu);
    EXPECT_EQ(v[2] >> 8, host[2] >> 8);
    if (kind != TS_BUFFER_DEVICE) {
      ASSERT_NE(a.host_pointer(), nullptr);
      EXPECT_EQ(static_cast<uint32_t*>(a.host_pointer())[5], host[5]);
    }
  }
}

TEST_F(CudaTest, AsyncCopiesWithPinnedMemoryAndEvents) {
  const size_t n = 1 << 20;
  auto pinned = rt_.pinned_malloc(n * 4);
  TS_ASSERT_OK(pinned);
  auto* p = static_cast<uint32_t*>(*pinned);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  Buffer a = Alloc(n * 4);
  auto s = dev_.create_stream();
  TS_ASSERT_OK(s);
  auto start = dev_.create_event(), end = dev_.create_event();
  TS_ASSERT_OK(start);
  TS_ASSERT_OK(end);
  TS_ASSERT_OK(s->record(*start));
  TS_ASSERT_OK(s->copy_async(a, p, n * 4));
  TS_ASSERT_OK(s->memset_async(a, 0, 0, 16));
  TS_ASSERT_OK(s->copy_async(p, a, n * 4));
  TS_ASSERT_OK(s->record(*end));
  TS_ASSERT_OK(end->synchronize());
  auto ms = Event::elapsed_ms(*start, *end);
  TS_ASSERT_OK(ms);
  EXPECT_GT(*ms, 0.0);
  EXPECT_EQ(p[3], 0u);
  EXPECT_EQ(p[4], 4u);
  EXPECT_EQ(p[n - 1], n - 1);
  auto idle = s->query();
  TS_ASSERT_OK(idle);
  EXPECT_TRUE(*idle);
  auto untimed = dev_.create_event(TS_EVENT_DISABLE_TIMING);
  TS_ASSERT_OK(untimed);
  auto never = dev_.create_event();
  TS_ASSERT_OK(never);
  EXPECT_EQ(Event::elapsed_ms(*start, *never).status().code(), StatusCode::kFailedPrecondition);
  TS_ASSERT_OK(s->record(*untimed));
  EXPECT_EQ(Event::elapsed_ms(*start, *untimed).status().code(),
            StatusCode::kFailedPrecondition);
  TS_ASSERT_OK(rt_.pinned_free(p));
}

// Stream_WriteTimestamp on CUDA is a timing event the plugin turns into a
// host time when completion is observed (timestamp.cpp).
TEST_F(CudaTest, TimestampsAreWrittenWhereCompletionIsObserved) {
  tessera_test::check_event_clock_timestamps(rt_, dev_);
}

TEST_F(CudaTest, StreamPrioritiesAreAccepted) {
  for (int32_t prio : {-4, 0, 1, 3, 1000}) {
    tessera::StreamOptions o;
    o.priority = prio;
    o.weight = 4;
    auto s = dev_.create_stream(o);
    TS_ASSERT_OK(s);
    TS_EXPECT_OK(s->synchronize());
  }
  EXPECT_FALSE(dev_.info().stream_weights);
}

TEST_F(CudaTest, PtxKernelLaunchAndArguments) {
  auto k = LoadPtxKernel("add_const");
  TS_ASSERT_OK(k);
  const uint32_t n = 3000;
  Buffer x = Alloc(n * 4);
  TS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  Stream s = dev_.default_stream();
  TS_ASSERT_OK(s.launch(*k, TsDim3{(n + 255) / 256, 1, 1}, TsDim3{256, 1, 1},
                        {KernelArg::buffer(x), KernelArg::scalar(uint32_t{5}),
                         KernelArg::scalar(n)}));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 5));
  // A buffer at an offset.
  TS_ASSERT_OK(s.launch(*k, TsDim3{1, 1, 1}, TsDim3{32, 1, 1},
                        {KernelArg::buffer(x, 4 * 10), KernelArg::scalar(uint32_t{1}),
                         KernelArg::scalar(uint32_t{1})}));
  TS_ASSERT_OK(s.synchronize());
  auto v = Download(x, n);
  EXPECT_EQ(v[9], 5u);
  EXPECT_EQ(v[10], 6u);
  EXPECT_EQ(v[11], 5u);
  // Wrong arguments, group sizes and grids are refused before the driver.
  Status st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{32, 1, 1}, {KernelArg::buffer(x)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{2048, 1, 1},
                {KernelArg::buffer(x), KernelArg::scalar(uint32_t{1}), KernelArg::scalar(n)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{32, 1, 1},
                {KernelArg::buffer(x), KernelArg::scalar(uint64_t{1}), KernelArg::scalar(n)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(exe_.kernel("no_such_kernel").status().code(), StatusCode::kNotFound);
}

TEST_F(CudaTest, DynamicSharedMemoryAboveTheDefaultLimit) {
  auto k = LoadPtxKernel("fill_via_shared");
  TS_ASSERT_OK(k);
  const uint32_t n = 512;
  Buffer x = Alloc(n * 4);
  Stream s = dev_.default_stream();
  const uint64_t optin = dev_.info().shared_memory_per_group;
  const uint64_t want = std::min<uint64_t>(optin, 96 * 1024);
  TS_ASSERT_OK(s.launch(*k, TsDim3{n / 256, 1, 1}, TsDim3{256, 1, 1},
                        {KernelArg::buffer(x), KernelArg::scalar(uint32_t{77}),
                         KernelArg::scalar(n)},
                        want));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 77));
  Status st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{256, 1, 1},
                       {KernelArg::buffer(x), KernelArg::scalar(uint32_t{1}),
                        KernelArg::scalar(n)},
                       optin + 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(dev_.info().name), std::string::npos) << st.ToString();
}

TEST_F(CudaTest, ArchiveAndCubinFormats) {
  const std::string ptx = ReadText(PtxPath());
  std::string blob = tessera::WriteKernelArchive({{"add_const", ptx}});
  auto exe = dev_.load_executable("archive:cubin", blob.data(), blob.size());
  TS_ASSERT_OK(exe);
  TS_EXPECT_OK(exe->kernel("add_const"));
  EXPECT_EQ(exe->kernel("fill_via_shared").status().code(), StatusCode::kNotFound);
  // A truncated archive is refused with a message, never handed on.
  auto bad = dev_.load_executable("archive:cubin", blob.data(), blob.size() / 2);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
#ifdef TESSERA_CUDA_TEST_CUBIN
  const std::string cubin = ReadText(CubinPath());
  auto ce = dev_.load_executable("cubin", cubin.data(), cubin.size());
  // An sm_90 cubin runs on 9.x only; elsewhere the error says what is needed.
  if (ce.ok()) {
    TS_EXPECT_OK(ce->kernel("add_const"));
  } else {
    EXPECT_EQ(ce.status().code(), StatusCode::kUnsupported) << ce.status().ToString();
    EXPECT_NE(ce.status().message().find("CUDA_ERROR_NO_BINARY_FOR_GPU"), std::string::npos)
        << ce.status().ToString();
  }
#endif
  // Broken PTX: the JIT's log is in the message.
  std::string broken = ptx;
  broken.replace(broken.find("add.u32 %r6"), 7, "bogus.u32");
  auto be = dev_.load_executable("ptx", broken.data(), broken.size());
  ASSERT_FALSE(be.ok());
  EXPECT_NE(be.status().message().find("cuModuleLoadDataEx"), std::string::npos)
      << be.status().ToString();
  EXPECT_NE(be.status().message().find("JIT log"), std::string::npos) << be.status().ToString();
}

TEST_F(CudaTest, CaptureReplayAndMisuse) {
  auto k = LoadPtxKernel("add_const");
  TS_ASSERT_OK(k);
  const uint32_t n = 256;
  Buffer x = Alloc(n * 4);
  TS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  auto s0 = dev_.create_stream(), s1 = dev_.create_stream();
  TS_ASSERT_OK(s0);
  TS_ASSERT_OK(s1);
  auto fork = dev_.create_event(TS_EVENT_DISABLE_TIMING);
  auto join = dev_.create_event(TS_EVENT_DISABLE_TIMING);
  auto outside = dev_.create_event(TS_EVENT_DISABLE_TIMING);
  TS_ASSERT_OK(fork);
  TS_ASSERT_OK(join);
  TS_ASSERT_OK(outside);
  TS_ASSERT_OK(s1->record(*outside));
  EXPECT_EQ(s0->end_capture().status().code(), StatusCode::kFailedPrecondition);
  TS_ASSERT_OK(s0->begin_capture());
  EXPECT_FALSE(s0->begin_capture().ok());
  EXPECT_EQ(s0->synchronize().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s0->wait(*outside).code(), StatusCode::kFailedPrecondition);
  auto args = std::vector<KernelArg>{KernelArg::buffer(x), KernelArg::scalar(uint32_t{1}),
                                     KernelArg::scalar(n)};
  TS_ASSERT_OK(s0->launch(*k, TsDim3{1, 1, 1}, TsDim3{256, 1, 1}, args));
  TS_ASSERT_OK(s0->record(*fork));
  TS_ASSERT_OK(s1->wait(*fork));  // s1 joins
  TS_ASSERT_OK(s1->launch(*k, TsDim3{1, 1, 1}, TsDim3{256, 1, 1}, args));
  TS_ASSERT_OK(s1->record(*join));
  TS_ASSERT_OK(s0->wait(*join));  // and is joined back
  auto g = s0->end_capture();
  TS_ASSERT_OK(g);
  EXPECT_GE(g->num_nodes(), 2u);
  EXPECT_GE(g->num_edges(), 1u);
  auto exec = g->instantiate();
  TS_ASSERT_OK(exec);
  for (int i = 0; i < 10; ++i) TS_ASSERT_OK(s0->launch(*exec));
  TS_ASSERT_OK(s0->synchronize());
  EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 20));
  // Unjoined: an error, and both streams usable afterwards.
  TS_ASSERT_OK(s0->begin_capture());
  TS_ASSERT_OK(s0->record(*fork));
  TS_ASSERT_OK(s1->wait(*fork));
  TS_ASSERT_OK(s1->memset_async(x, 0, 0, 16));
  auto unjoined = s0->end_capture();
  // The fork event's last record was inside the capture that ended.
  EXPECT_EQ(s1->wait(*fork).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(unjoined.status().code(), StatusCode::kFailedPrecondition)
      << unjoined.status().ToString();
  TS_EXPECT_OK(s0->memset_async(x, 0, 0, 16));
  TS_EXPECT_OK(s1->memset_async(x, 0, 0, 16));
  TS_EXPECT_OK(dev_.synchronize());
  // A replay after a captured buffer was destroyed is refused, naming it.
  Buffer gone = Alloc(64);
  TS_ASSERT_OK(s0->begin_capture());
  TS_ASSERT_OK(s0->memset_async(gone, 0, 1, 64));
  auto g2 = s0->end_capture();
  TS_ASSERT_OK(g2);
  auto e2 = g2->instantiate();
  TS_ASSERT_OK(e2);
  TS_ASSERT_OK(gone.destroy());
  Status st = s0->launch(*e2);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("buffer"), std::string::npos) << st.ToString();
}

// Device-wide calls while a stream captures: CUDA forbids synchronizing a
// capturing stream and running the legacy default stream during a blocking
// stream's capture; the plugin works around the first and refuses the
// second instead of invalidating the capture.
TEST_F(CudaTest, DeviceWideCallsWhileAStreamCaptures) {
  const uint32_t n = 64;
  Buffer x = Alloc(n * 4);
  TS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  for (bool non_blocking : {false, true}) {
    tessera::StreamOptions o;
    o.non_blocking = non_blocking;
    auto s = dev_.create_stream(o);
    TS_ASSERT_OK(s);
    auto other = dev_.create_stream(o);
    TS_ASSERT_OK(other);
    TS_ASSERT_OK(s->begin_capture());
    TS_ASSERT_OK(s->memset_async(x, 0, 3, n * 4));
    std::vector<uint32_t> host(n);
    Status st = tessera::copy(host.data(), x, n * 4);
    if (non_blocking)
      TS_EXPECT_OK(st);
    else
      EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
    TS_EXPECT_OK(other->memset_async(x, 0, 0, 4));
    TS_EXPECT_OK(other->synchronize());
    TS_EXPECT_OK(dev_.synchronize());
    Buffer tmp = Alloc(64);
    TS_EXPECT_OK(tmp.destroy());
    auto g = s->end_capture();
    TS_ASSERT_OK(g);
    auto e = g->instantiate();
    TS_ASSERT_OK(e);
    TS_ASSERT_OK(s->launch(*e));
    TS_ASSERT_OK(s->synchronize());
    EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 0x03030303u)) << non_blocking;
  }
}

TEST_F(CudaTest, ManagedMemoryHints) {
  if (!dev_.info().supports(TS_BUFFER_MANAGED)) GTEST_SKIP() << "no managed memory";
  Buffer m = Alloc(1 << 20, TS_BUFFER_MANAGED);
  Buffer d = Alloc(1 << 20);
  Stream s = dev_.default_stream();
  auto r = s.prefetch(m, &dev_);
  TS_ASSERT_OK(r);
  EXPECT_EQ(*r, dev_.info().prefetch_hint);
  r = s.prefetch(m, nullptr);
  TS_ASSERT_OK(r);
  auto a = tessera::advise(m, TS_ADVICE_READ_MOSTLY, nullptr);
  TS_ASSERT_OK(a);
  EXPECT_EQ(*a, TS_HINT_APPLIED);
  a = tessera::advise(m, TS_ADVICE_PREFERRED_LOCATION, &dev_);
  TS_ASSERT_OK(a);
  EXPECT_EQ(*a, TS_HINT_APPLIED);
  a = tessera::advise(d, TS_ADVICE_READ_MOSTLY, nullptr);
  TS_ASSERT_OK(a);
  EXPECT_EQ(*a, TS_HINT_IGNORED);
  TS_ASSERT_OK(s.synchronize());
}

}  // namespace
}  // namespace tessera_cuda_test
