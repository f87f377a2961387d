// Tests of the HIP plugin.  On a machine without an AMD GPU (the build
// machines: libamdhip64.so.5 installed, no device) the plugin must load and
// report "not available" naming hipErrorNoDevice (or the dlerror text when
// the library is missing), TESSERA_BACKEND=hip,cpu must fall through to
// cpu, and the pure parts (hipError_t mapping, code-object checks, priority
// and arch mapping) are checked.  The device tests skip with the reason
// where there is no device, so the file runs unchanged on an MI250/MI300.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "code_object.hpp"
#include "event_clock_checks.hpp"
#include "isa_version.hpp"
#include "test_util.hpp"
#include "error.hpp"
#include "mapping.hpp"
#include "tessera/kernel_archive.hpp"
#include "tessera/runtime.hpp"

namespace tessera_hip_test {
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
using namespace tessera::hip;


tessera::StatusOr<Runtime> CreateHipRuntime(
    const std::vector<std::pair<std::string, std::string>>& plugin_options = {},
    const std::string& backend = "hip") {
  return Runtime::Create(tessera::testing::PluginOptions("hip", plugin_options, backend));
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The test code objects: <dir>/add_const_<gfx>.hsaco, the folder compiled
// in or the environment's (a test binary run away from its build tree).
// Not TESSERA_HIP_*: the core would pass those to the plugin as options.
std::string HsacoPath(const std::string& gfx) {
  const char* v = std::getenv("HIP_PLUGIN_TEST_HSACO_DIR");
  std::string dir = v && *v ? v : "";
#ifdef TESSERA_HIP_TEST_HSACO_DIR
  if (dir.empty()) dir = TESSERA_HIP_TEST_HSACO_DIR;
#endif
  if (dir.empty()) return "";
  return dir + "/add_const_" + gfx + ".hsaco";
}

// A minimal ELF64 header + one program header (120 bytes).
std::string MakeElf(uint16_t machine, uint8_t osabi, uint16_t type, uint32_t flags,
                    uint8_t abi_version) {
  std::string e(120, '\0');
  std::memcpy(&e[0], "\x7f" "ELF", 4);
  e[4] = 2;  // ELFCLASS64
  e[5] = 1;  // little-endian
  e[6] = 1;  // EV_CURRENT
  e[7] = static_cast<char>(osabi);
  e[8] = static_cast<char>(abi_version);
  auto put16 = [&](size_t at, uint16_t v) { std::memcpy(&e[at], &v, 2); };
  auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&e[at], &v, 4); };
  auto put64 = [&](size_t at, uint64_t v) { std::memcpy(&e[at], &v, 8); };
  put16(0x10, type);
  put16(0x12, machine);
  put32(0x14, 1);
  put64(0x20, 64);  // e_phoff
  put32(0x30, flags);
  put16(0x34, 64);  // e_ehsize
  put16(0x36, 56);
  put16(0x38, 1);
  put16(0x3A, 64);
  // The program header: PT_LOAD covering the whole file.
  put32(64, 1);
  put64(64 + 8, 0);
  put64(64 + 0x20, 120);
  put64(64 + 0x28, 120);
  return e;
}
constexpr uint16_t kEmAmdgpu = 224, kEtDyn = 3, kEtRel = 1;
constexpr uint8_t kHsa = 64, kV4 = 2, kV3 = 1;

// ------------------------------------------------------------ no device

TEST(HipNoDevice, MissingLibraryIsUnavailable) {
  auto rt = CreateHipRuntime({{"library", "/nonexistent/libamdhip64.so.5"}});
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("not available"), std::string::npos)
      << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("cannot open shared object file"), std::string::npos)
      << rt.status().ToString();
}

TEST(HipNoDevice, DefaultLibrarySaysWhyThereIsNoDevice) {
  auto rt = CreateHipRuntime();
  if (rt.ok()) GTEST_SKIP() << "an AMD GPU is here";
  EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
  const std::string m = rt.status().message();
  if (m.find("cannot open shared object file") != std::string::npos) {
    // No ROCm runtime installed: the dlerror text names the library.
    EXPECT_NE(m.find("libamdhip64.so.5"), std::string::npos) << m;
  } else {
    // The runtime is installed without a usable GPU (the build machines).
    EXPECT_NE(m.find("not available: hipGetDeviceCount failed: hipErrorNoDevice"),
              std::string::npos)
        << m;
  }
}

TEST(HipNoDevice, BackendListFallsThroughToCpu) {
  auto hip = CreateHipRuntime();
  auto rt = CreateHipRuntime({}, "hip,cpu");
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), hip.ok() ? "hip" : "cpu");
  EXPECT_FALSE(rt->devices().empty());
}

TEST(HipNoDevice, UnknownOptionIsRejectedWithTheKnownOnes) {
  auto rt = CreateHipRuntime({{"bogus", "1"}});
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("library"), std::string::npos) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("rccl_library"), std::string::npos) << rt.status().ToString();
}

// The collectives library option is known (an empty value turns it off);
// the client still fails on the driver library it cannot open, not on it.
TEST(HipNoDevice, CollectiveLibraryOptionIsAccepted) {
  for (const char* value : {"", "/nonexistent/librccl.so.1"}) {
    auto rt = CreateHipRuntime({{"library", "/nonexistent/libamdhip64.so.5"}, {"rccl_library", value}});
    ASSERT_FALSE(rt.ok());
    EXPECT_EQ(rt.status().code(), StatusCode::kUnavailable) << rt.status().ToString();
    EXPECT_NE(rt.status().message().find("/nonexistent/libamdhip64.so.5"), std::string::npos)
        << rt.status().ToString();
  }
}

// ------------------------------------------------------------ error mapping

TEST(HipErrors, ResultCodes) {
  EXPECT_EQ(hip_error_code(hipErrorOutOfMemory), TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(hip_error_code(hipErrorNoDevice), TS_ERROR_UNAVAILABLE);
  EXPECT_EQ(hip_error_code(hipErrorInsufficientDriver), TS_ERROR_UNAVAILABLE);
  EXPECT_EQ(hip_error_code(hipErrorNotReady), TS_ERROR_NOT_READY);
  EXPECT_EQ(hip_error_code(hipErrorInvalidValue), TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hip_error_code(hipErrorInvalidImage), TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hip_error_code(hipErrorNoBinaryForGpu), TS_ERROR_UNSUPPORTED);
  EXPECT_EQ(hip_error_code(hipErrorNotFound), TS_ERROR_NOT_FOUND);
  EXPECT_EQ(hip_error_code(hipErrorInvalidHandle), TS_ERROR_INVALID_HANDLE);
  EXPECT_EQ(hip_error_code(hipErrorStreamCaptureUnjoined), TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(hip_error_code(hipErrorStreamCaptureImplicit), TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(hip_error_code(hipErrorHostMemoryAlreadyRegistered), TS_ERROR_ALREADY_EXISTS);
  EXPECT_EQ(hip_error_code(hipErrorPeerAccessAlreadyEnabled), TS_ERROR_ALREADY_EXISTS);
  EXPECT_EQ(hip_error_code(hipErrorIllegalAddress), TS_ERROR_ABORTED);
  EXPECT_EQ(hip_error_code(hipErrorLaunchFailure), TS_ERROR_ABORTED);
  EXPECT_EQ(hip_error_code(hipErrorECCNotCorrectable), TS_ERROR_DATA_LOSS);
  EXPECT_EQ(hip_error_code(hipErrorLaunchTimeOut), TS_ERROR_DEADLINE_EXCEEDED);
  EXPECT_EQ(hip_error_code(hipErrorUnknown), TS_ERROR_UNKNOWN);
  EXPECT_EQ(hip_error_code(static_cast<hipError_t>(12345)), TS_ERROR_INTERNAL);
}

TEST(HipErrors, BuiltinNames) {
  EXPECT_EQ(hip_error_builtin_name(hipErrorOutOfMemory), "hipErrorOutOfMemory");
  EXPECT_EQ(hip_error_builtin_name(hipErrorNoDevice), "hipErrorNoDevice");
  EXPECT_EQ(hip_error_builtin_name(hipErrorNoBinaryForGpu), "hipErrorNoBinaryForGpu");
  EXPECT_EQ(hip_error_builtin_name(static_cast<hipError_t>(12345)), "hipError_12345");
}

TEST(HipErrors, MessageNamesTheCallAndTheCode) {
  TsError* e = hip_error(nullptr, hipErrorOutOfMemory, "hipMalloc(1.0 GiB)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(e->message, "hip: hipMalloc(1.0 GiB) failed: hipErrorOutOfMemory: out of memory");
  TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  tessera::plugin_support::Error_Destroy(&da);
  EXPECT_EQ(format_hip_error("hipX", "hipErrorY", "why", "do this"),
            "hip: hipX failed: hipErrorY: why (do this)");
  EXPECT_EQ(format_hip_error("hipX", "hipErrorY", "", ""), "hip: hipX failed: hipErrorY");
}

TEST(HipErrors, CodeObjectForAnotherGpuNamesTheDevicesArch) {
  for (hipError_t r : {hipErrorNoBinaryForGpu, hipErrorInvalidImage}) {
    TsError* e = hip_error(nullptr, r, "hipModuleLoadData(code object for gfx908, 4.0 KiB)",
                           "gfx90a:sramecc+:xnack-", "gfx908");
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->message.find("gfx90a:sramecc+:xnack-"), std::string::npos) << e->message;
    EXPECT_NE(e->message.find("built for gfx908"), std::string::npos) << e->message;
    EXPECT_NE(e->message.find("hip:gfx90a"), std::string::npos) << e->message;
    EXPECT_NE(e->message.find(hip_error_builtin_name(r)), std::string::npos) << e->message;
    TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
    tessera::plugin_support::Error_Destroy(&da);
  }
  EXPECT_NE(hip_error_hint(hipErrorIllegalAddress, "gfx942:sramecc+:xnack-", "").find("sticky"),
            std::string::npos);
  EXPECT_EQ(hip_error_hint(hipErrorOutOfMemory, "gfx90a", "gfx90a"), "");
}

TEST(HipErrors, VersionText) {
  EXPECT_EQ(hip_version_text(50221153), "5.2.21153");
  EXPECT_EQ(hip_version_text(60342134), "6.3.42134");
  EXPECT_EQ(hip_version_text(0), "unknown");
}

// ------------------------------------------------------------ mappings

TEST(HipMapping, StreamPriority) {
  // ROCm: least 1 (low), greatest -1 (high), default 0 (normal).
  EXPECT_EQ(hip_stream_priority(0, 1, -1), 0);
  EXPECT_EQ(hip_stream_priority(1, 1, -1), -1);
  EXPECT_EQ(hip_stream_priority(100, 1, -1), -1);
  EXPECT_EQ(hip_stream_priority(-1, 1, -1), 1);
  EXPECT_EQ(hip_stream_priority(-7, 1, -1), 1);
  EXPECT_EQ(hip_stream_priority(INT32_MIN, 1, -1), 1);
  EXPECT_EQ(hip_stream_priority(INT32_MAX, 1, -1), -1);
  // A runtime without a level below its default ranks negatives with 0.
  EXPECT_EQ(hip_stream_priority(-3, 0, -1), 0);
}

TEST(HipMapping, ArchForDevice) {
  EXPECT_EQ(hip_arch_for("gfx90a:sramecc+:xnack-"), "gfx90a");
  EXPECT_EQ(hip_arch_for("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(hip_arch_for("gfx1100"), "gfx1100");
  EXPECT_EQ(hip_arch_for(""), "");
}

// The compiler defines __oclc_ISA_version itself where the installed device
// libraries lack the chipset's file (RDNA3 on Debian's ROCm 5.2): the values
// it makes must be those ROCm's files carry (read from Debian's
// oclc_isa_version_*.bc with llvm-dis-16).
TEST(HipMapping, IsaVersionOfAChipset) {
  EXPECT_EQ(amdgpu_isa_version("gfx810"), 8100);
  EXPECT_EQ(amdgpu_isa_version("gfx908"), 9008);
  EXPECT_EQ(amdgpu_isa_version("gfx90a"), 9010);
  EXPECT_EQ(amdgpu_isa_version("gfx90c"), 9012);
  EXPECT_EQ(amdgpu_isa_version("gfx940"), 9400);
  EXPECT_EQ(amdgpu_isa_version("gfx1010"), 10100);
  EXPECT_EQ(amdgpu_isa_version("gfx1030"), 10300);
  EXPECT_EQ(amdgpu_isa_version("gfx1036"), 10306);
  EXPECT_EQ(amdgpu_isa_version("gfx1100"), 11000);
  EXPECT_EQ(amdgpu_isa_version("gfx1103"), 11003);
  for (const char* bad : {"", "gfx", "gfx90", "sm_90a", "gfxz0a", "gfx9x0", "gfx90g", "gfx0000",
                          "gfx123400"})
    EXPECT_EQ(amdgpu_isa_version(bad), -1) << bad;
}

// ------------------------------------------------------------ code objects

TEST(HipCodeObjects, HeaderChecks) {
  const std::string ok = MakeElf(kEmAmdgpu, kHsa, kEtDyn, 0x3f, kV4);
  EXPECT_EQ(check_code_object(ok.data(), ok.size()), "");
  PreparedImage img;
  EXPECT_EQ(prepare_image(ok.data(), ok.size(), &img), "");
  EXPECT_EQ(img.size, ok.size());
  EXPECT_EQ(std::memcmp(img.data(), ok.data(), ok.size()), 0);
  EXPECT_EQ(img.target, "gfx90a");
  // Not AMDGPU: an x86-64 shared object.
  const std::string x86 = MakeElf(62, 0, kEtDyn, 0, 0);
  EXPECT_NE(check_code_object(x86.data(), x86.size()).find("EM_AMDGPU"), std::string::npos);
  // AMDGPU for another OS ABI (Mesa), and an unlinked object.
  const std::string mesa = MakeElf(kEmAmdgpu, 66, kEtDyn, 0x3f, 0);
  EXPECT_NE(check_code_object(mesa.data(), mesa.size()).find("ELFOSABI_AMDGPU_HSA"),
            std::string::npos);
  const std::string rel = MakeElf(kEmAmdgpu, kHsa, kEtRel, 0x3f, kV4);
  EXPECT_NE(check_code_object(rel.data(), rel.size()).find("ld.lld -shared"), std::string::npos);
  // Not an ELF, a 32-bit ELF, big-endian.
  EXPECT_NE(check_code_object(std::string(120, 'x').data(), 120), "");
  std::string e32 = ok;
  e32[4] = 1;
  EXPECT_NE(check_code_object(e32.data(), e32.size()).find("64-bit"), std::string::npos);
  std::string be = ok;
  be[5] = 2;
  EXPECT_NE(check_code_object(be.data(), be.size()).find("little-endian"), std::string::npos);
  // Truncated anywhere: the header, the program headers, the segment.
  for (size_t n : {size_t{0}, size_t{10}, size_t{63}, size_t{64}, size_t{100}, size_t{119}}) {
    EXPECT_NE(check_code_object(ok.data(), n), "") << "truncated to " << n << " bytes";
    EXPECT_NE(prepare_image(ok.data(), n, &img), "") << n;
  }
  // A program header table whose size overflows.
  std::string huge = ok;
  const uint64_t far = ~uint64_t{0} - 8;
  std::memcpy(&huge[0x20], &far, 8);
  EXPECT_NE(check_code_object(huge.data(), huge.size()), "");
}

TEST(HipCodeObjects, TargetFromTheHeader) {
  auto target = [](uint32_t flags, uint8_t abi) {
    const std::string e = MakeElf(kEmAmdgpu, kHsa, kEtDyn, flags, abi);
    return code_object_target(e.data(), e.size());
  };
  EXPECT_EQ(target(0x03f | 0x100 | 0x400, kV4), "gfx90a");                  // any, any
  EXPECT_EQ(target(0x03f | 0x200 | 0xc00, kV4), "gfx90a:sramecc+:xnack-");  // off, on
  EXPECT_EQ(target(0x04c | 0x300 | 0x800, kV4), "gfx942:sramecc-:xnack+");
  EXPECT_EQ(target(0x030 | 0x100, kV3), "gfx908:xnack+");
  EXPECT_EQ(target(0x041, kV4), "gfx1100");
  EXPECT_EQ(target(0x0ee, kV4), "EF_AMDGPU_MACH 0xee");
  EXPECT_STREQ(amdgpu_mach_name(0x040), "gfx940");
  EXPECT_STREQ(amdgpu_mach_name(0x0ee), "");
}

TEST(HipCodeObjects, RealCodeObjectsAreAcceptedAndTruncationRejected) {
  const std::string path = HsacoPath("gfx90a");
  const std::string hsaco = path.empty() ? "" : ReadBytes(path);
  if (hsaco.empty()) GTEST_SKIP() << "no llc-16/ld.lld-16 at configure time: no test code object";
  EXPECT_EQ(check_code_object(hsaco.data(), hsaco.size()), "");
  EXPECT_EQ(code_object_target(hsaco.data(), hsaco.size()), "gfx90a");
  const std::string rdna = ReadBytes(HsacoPath("gfx1100"));
  EXPECT_EQ(code_object_target(rdna.data(), rdna.size()), "gfx1100");
  for (size_t n : {size_t{0}, size_t{64}, hsaco.size() / 2, hsaco.size() - 1}) {
    EXPECT_NE(check_code_object(hsaco.data(), n), "") << "truncated to " << n << " bytes";
  }
}

// The NT_AMDGPU_METADATA note of a code object ld.lld-16 linked: the
// arguments add_const(ptr addrspace(1), i32, i32) declares, hidden ones left
// out; a launch's arguments are checked against them.
TEST(HipKernelMetadata, RealCodeObjectListsItsArguments) {
  const std::string path = HsacoPath("gfx90a");
  const std::string hsaco = path.empty() ? "" : ReadBytes(path);
  if (hsaco.empty()) GTEST_SKIP() << "no llc-16/ld.lld-16 at configure time: no test code object";
  PreparedImage img;
  ASSERT_EQ(prepare_image(hsaco.data(), hsaco.size(), &img), "");
  const tessera::hip::KernelMetadata* add = nullptr;
  for (const auto& k : img.kernels)
    if (k.name == "add_const") add = &k;
  ASSERT_NE(add, nullptr) << img.kernels.size() << " kernels";
  EXPECT_EQ(img.kernels.size(), 2u);
  ASSERT_EQ(add->args.size(), 3u);
  EXPECT_EQ(add->args[0].value_kind, "global_buffer");
  EXPECT_EQ(add->args[0].size, 8u);
  EXPECT_TRUE(add->args[0].is_buffer());
  EXPECT_EQ(add->args[1].value_kind, "by_value");
  EXPECT_EQ(add->args[1].size, 4u);
  EXPECT_EQ(add->args[1].offset, 8u);
  EXPECT_EQ(add->args[2].offset, 12u);
  EXPECT_GE(add->kernarg_segment_size, 16u);  // hidden arguments, if any, follow

  int32_t v = 3, n = 100;
  int64_t wide = 0;
  TsKernelArg good[3] = {{TS_KERNEL_ARG_BUFFER, nullptr, 0, nullptr, 0},
                         {TS_KERNEL_ARG_SCALAR, nullptr, 0, &v, sizeof v},
                         {TS_KERNEL_ARG_SCALAR, nullptr, 0, &n, sizeof n}};
  EXPECT_EQ(tessera::hip::check_launch_args(*add, good, 3), "");
  EXPECT_EQ(tessera::hip::check_launch_args(*add, good, 2), "2 arguments given; the code object's metadata lists 3");
  TsKernelArg wrongSize[3] = {good[0], {TS_KERNEL_ARG_SCALAR, nullptr, 0, &wide, sizeof wide}, good[2]};
  EXPECT_EQ(tessera::hip::check_launch_args(*add, wrongSize, 3), "scalar argument 1 is 8 bytes; the kernel takes 4");
  TsKernelArg swapped[3] = {good[1], good[0], good[2]};
  EXPECT_EQ(tessera::hip::check_launch_args(*add, swapped, 3),
            "argument 0 is a scalar; the kernel takes a buffer (global_buffer) there");
}

// MessagePack that lies (counts past the end, nesting without end, types
// the layout does not have, cut anywhere) is an error, never a crash or a
// huge allocation.
TEST(HipKernelMetadata, MalformedMetadataIsAnError) {
  using Bytes = std::vector<unsigned char>;
  auto str = [](Bytes& b, const std::string& s) {
    b.push_back(static_cast<unsigned char>(0xa0 | s.size()));
    b.insert(b.end(), s.begin(), s.end());
  };
  // {"amdhsa.kernels": [{".name": "k", ".args": [{".size": 8, ".offset": 0,
  //  ".value_kind": "global_buffer"}]}]}
  Bytes ok = {0x81};
  str(ok, "amdhsa.kernels");
  ok.insert(ok.end(), {0x91, 0x82});
  str(ok, ".name");
  str(ok, "k");
  str(ok, ".args");
  ok.insert(ok.end(), {0x91, 0x83});
  str(ok, ".size");
  ok.push_back(0x08);
  str(ok, ".offset");
  ok.push_back(0x00);
  str(ok, ".value_kind");
  str(ok, "global_buffer");
  std::vector<tessera::hip::KernelMetadata> out;
  ASSERT_EQ(tessera::hip::decode_kernel_metadata(ok.data(), ok.size(), &out), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].args.size(), 1u);
  for (size_t cut = 0; cut < ok.size(); ++cut)
    EXPECT_NE(tessera::hip::decode_kernel_metadata(ok.data(), cut, &out), "") << "cut at " << cut;
  const Bytes bad[] = {
      {0xdd, 0xff, 0xff, 0xff, 0xff},  // an array of 2^32 - 1 elements in 5 bytes
      {0xdf, 0x7f, 0xff, 0xff, 0xff},  // a map of 2^31 - 1 entries
      {0xdb, 0xff, 0xff, 0xff, 0xf0},  // a string of ~4 GiB
      {0xc1},                          // the one byte MessagePack never uses
      Bytes(40, 0x91),                 // arrays nested 40 deep
      {0x81, 0xae, 'a', 'm', 'd', 'h', 's', 'a', '.', 'k', 'e', 'r', 'n', 'e', 'l', 's', 0x2a},  // not a list
      {0x81, 0xae, 'a', 'm', 'd', 'h', 's', 'a', '.', 'k', 'e', 'r', 'n', 'e', 'l', 's', 0x91, 0x81,
       0xa5, '.', 'n', 'a', 'm', 'e', 0x01},  // a name that is a number
  };
  for (const Bytes& b : bad) {
    std::string why = tessera::hip::decode_kernel_metadata(b.data(), b.size(), &out);
    EXPECT_NE(why, "") << "accepted " << b.size() << " bytes starting 0x" << std::hex << int(b[0]);
    EXPECT_NE(why.find("AMDGPU metadata"), std::string::npos) << why;
  }
}

TEST(HipCodeObjects, ArchiveEntriesAreCheckedAndTruncationRejected) {
  const std::string co = MakeElf(kEmAmdgpu, kHsa, kEtDyn, 0x3f, kV4);
  std::string blob = tessera::WriteKernelArchive({{"add_const", co}, {"fill_via_shared", co}});
  std::vector<PreparedImage> images;
  ASSERT_EQ(prepare_archive(blob.data(), blob.size(), &images), "");
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0].name, "add_const");
  EXPECT_EQ(images[1].target, "gfx90a");
  for (size_t n : {size_t{0}, size_t{8}, size_t{16}, size_t{24}, blob.size() / 2,
                   blob.size() - 9}) {
    std::vector<PreparedImage> out;
    EXPECT_NE(prepare_archive(blob.data(), n, &out), "") << "truncated to " << n << " bytes";
  }
  // An entry that is not a code object is named.
  std::string junk = tessera::WriteKernelArchive({{"k", std::string(64, 'x')}});
  std::vector<PreparedImage> out;
  EXPECT_NE(prepare_archive(junk.data(), junk.size(), &out).find("'k'"), std::string::npos);
  const std::string x86 = MakeElf(62, 0, kEtDyn, 0, 0);
  std::string foreign = tessera::WriteKernelArchive({{"k", x86}});
  out.clear();
  EXPECT_NE(prepare_archive(foreign.data(), foreign.size(), &out).find("EM_AMDGPU"),
            std::string::npos);
  std::string dup = tessera::WriteKernelArchive({{"k", co}, {"k", co}});
  out.clear();
  EXPECT_NE(prepare_archive(dup.data(), dup.size(), &out).find("two entries"),
            std::string::npos);
}

// ------------------------------------------------------------ on a device

class HipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = CreateHipRuntime();
    if (!rt.ok()) {
      if (rt.status().code() == StatusCode::kUnavailable)
        GTEST_SKIP() << "HIP is unavailable here: " << rt.status().ToString();
      FAIL() << rt.status().ToString();
    }
    rt_ = std::move(rt).value();
    ASSERT_FALSE(rt_.devices().empty());
    dev_ = rt_.devices()[0];
    // "HIP 5.7.31921, gfx90a:sramecc+:xnack-" -> "gfx90a".
    const std::string& api = dev_.info().api_version;
    const size_t at = api.find(", ");
    arch_ = hip_arch_for(at == std::string::npos ? "" : api.substr(at + 2));
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
  // The test code object for this device's target, or "" (the caller
  // skips: LLVM 16 builds none for gfx942, for instance).
  std::string DeviceHsaco() {
    const std::string path = HsacoPath(arch_);
    return path.empty() ? "" : ReadBytes(path);
  }
  tessera::StatusOr<tessera::Kernel> LoadKernel(const std::string& hsaco, const char* name) {
    auto exe = dev_.load_executable("hsaco", hsaco.data(), hsaco.size());
    if (!exe.ok()) return exe.status();
    exe_ = *exe;
    return exe_.kernel(name);
  }
  Runtime rt_;
  Device dev_;
  std::string arch_;
  tessera::Executable exe_;
};

#define HIP_NEED_HSACO(var)                                                               \
  const std::string var = DeviceHsaco();                                                  \
  if (var.empty()) GTEST_SKIP() << "no test code object for " << arch_ << " (built for "  \
                                << "gfx908, gfx90a, gfx940, gfx1030, gfx1100)"

TEST_F(HipTest, DeviceProperties) {
  const tessera::DeviceInfo& info = dev_.info();
  EXPECT_EQ(rt_.backend(), "hip");
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.vendor, "AMD");
  EXPECT_EQ(info.api_version.rfind("HIP ", 0), 0u) << info.api_version;
  EXPECT_EQ(arch_.rfind("gfx", 0), 0u) << info.api_version;
  EXPECT_TRUE(info.subgroup_size == 64 || info.subgroup_size == 32) << info.subgroup_size;
  EXPECT_GE(info.max_group_size, 256u);
  EXPECT_GT(info.compute_units, 0u);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GE(info.shared_memory_per_group, 32u * 1024);
  EXPECT_TRUE(info.graphs);
  EXPECT_FALSE(info.stream_weights);
  EXPECT_EQ(info.executable_formats, (std::vector<std::string>{"archive:hsaco", "hsaco"}));
  std::printf("device: %s, %s, driver %s, %u CUs, wave %u, LDS %llu\n", info.name.c_str(),
              info.api_version.c_str(), info.driver_version.c_str(), info.compute_units,
              info.subgroup_size, static_cast<unsigned long long>(info.shared_memory_per_group));
}

TEST_F(HipTest, CopiesAndMemsetEveryKind) {
  const size_t n = 1000;
  std::vector<uint32_t> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint32_t>(i * 7);
  for (TsBufferKind kind : {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED}) {
    if (!dev_.info().supports(kind)) continue;
    Buffer a = Alloc(n * 4, kind), b = Alloc(n * 4, kind);
    TS_ASSERT_OK(tessera::copy(a, host.data(), n * 4));  // pageable, synchronous
    TS_ASSERT_OK(tessera::copy(b, a, n * 4));
    EXPECT_EQ(Download(b, n), host) << "kind " << kind;
    TS_ASSERT_OK(tessera::memset(b, 4, 0xAB, 5));  // unaligned: hipMemsetAsync
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

TEST_F(HipTest, AsyncCopiesWithPinnedMemoryAndEvents) {
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

// Stream_WriteTimestamp on HIP is a timing event the plugin turns into a
// host time when completion is observed (timestamp.cpp).
TEST_F(HipTest, TimestampsAreWrittenWhereCompletionIsObserved) {
  tessera_test::check_event_clock_timestamps(rt_, dev_);
}

TEST_F(HipTest, StreamPrioritiesAreAccepted) {
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

TEST_F(HipTest, KernelLaunchAndArguments) {
  HIP_NEED_HSACO(hsaco);
  auto k = LoadKernel(hsaco, "add_const");
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
  TS_ASSERT_OK(s.launch(*k, TsDim3{1, 1, 1}, TsDim3{64, 1, 1},
                         {KernelArg::buffer(x, 4 * 10), KernelArg::scalar(uint32_t{1}),
                          KernelArg::scalar(uint32_t{1})}));
  TS_ASSERT_OK(s.synchronize());
  auto v = Download(x, n);
  EXPECT_EQ(v[9], 5u);
  EXPECT_EQ(v[10], 6u);
  EXPECT_EQ(v[11], 5u);
  // Group sizes over the device's limit are refused before the runtime.
  Status st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{2048, 1, 1},
                       {KernelArg::buffer(x), KernelArg::scalar(uint32_t{1}), KernelArg::scalar(n)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("max_group_size"), std::string::npos) << st.ToString();
  EXPECT_EQ(exe_.kernel("no_such_kernel").status().code(), StatusCode::kNotFound);
}

TEST_F(HipTest, DynamicLdsUpToTheDeviceLimit) {
  HIP_NEED_HSACO(hsaco);
  auto k = LoadKernel(hsaco, "fill_via_shared");
  TS_ASSERT_OK(k);
  const uint32_t n = 512;
  Buffer x = Alloc(n * 4);
  Stream s = dev_.default_stream();
  const uint64_t limit = dev_.info().shared_memory_per_group;
  TS_ASSERT_OK(s.launch(*k, TsDim3{n / 256, 1, 1}, TsDim3{256, 1, 1},
                         {KernelArg::buffer(x), KernelArg::scalar(uint32_t{77}),
                          KernelArg::scalar(n)},
                         limit));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 77));
  Status st = s.launch(*k, TsDim3{1, 1, 1}, TsDim3{256, 1, 1},
                       {KernelArg::buffer(x), KernelArg::scalar(uint32_t{1}), KernelArg::scalar(n)},
                       limit + 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(dev_.info().name), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("hipDeviceAttributeMaxSharedMemoryPerBlock"), std::string::npos)
      << st.ToString();
}

TEST_F(HipTest, ArchiveFormatAndCodeObjectsForOtherGpus) {
  HIP_NEED_HSACO(hsaco);
  std::string blob = tessera::WriteKernelArchive({{"add_const", hsaco}});
  auto exe = dev_.load_executable("archive:hsaco", blob.data(), blob.size());
  TS_ASSERT_OK(exe);
  TS_EXPECT_OK(exe->kernel("add_const"));
  EXPECT_EQ(exe->kernel("fill_via_shared").status().code(), StatusCode::kNotFound);
  // A truncated archive is refused with a message, never handed on.
  auto bad = dev_.load_executable("archive:hsaco", blob.data(), blob.size() / 2);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
  // A code object for another GPU: the message names the device's target.
  const std::string other_gfx = arch_ == "gfx1030" ? "gfx90a" : "gfx1030";
  const std::string other = ReadBytes(HsacoPath(other_gfx));
  ASSERT_FALSE(other.empty());
  auto wrong = dev_.load_executable("hsaco", other.data(), other.size());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("hipModuleLoadData"), std::string::npos)
      << wrong.status().ToString();
  EXPECT_NE(wrong.status().message().find(arch_), std::string::npos) << wrong.status().ToString();
  EXPECT_NE(wrong.status().message().find(other_gfx), std::string::npos)
      << wrong.status().ToString();
}

TEST_F(HipTest, CaptureReplayAndMisuse) {
  HIP_NEED_HSACO(hsaco);
  auto k = LoadKernel(hsaco, "add_const");
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
  auto exec = g->instantiate();
  TS_ASSERT_OK(exec);
  for (int i = 0; i < 10; ++i) TS_ASSERT_OK(s0->launch(*exec));
  TS_ASSERT_OK(s0->synchronize());
  EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 20));
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

// Device-wide calls while a stream captures: HIP forbids synchronizing a
// capturing stream and running the NULL stream during a blocking stream's
// capture; the plugin works around the first and refuses the second
// instead of invalidating the capture.
TEST_F(HipTest, DeviceWideCallsWhileAStreamCaptures) {
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
    auto g = s->end_capture();
    TS_ASSERT_OK(g);
    auto e = g->instantiate();
    TS_ASSERT_OK(e);
    TS_ASSERT_OK(s->launch(*e));
    TS_ASSERT_OK(s->synchronize());
    EXPECT_EQ(Download(x, n), std::vector<uint32_t>(n, 0x03030303u)) << non_blocking;
  }
}

TEST_F(HipTest, ManagedMemoryHints) {
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

TEST_F(HipTest, PeerCopiesBetweenDevices) {
  if (rt_.devices().size() < 2) GTEST_SKIP() << "needs two AMD GPUs";
  Device other = rt_.devices()[1];
  const size_t n = 4096;
  std::vector<uint32_t> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint32_t>(i * 3 + 1);
  Buffer a = Alloc(n * 4);
  auto b = other.allocate(n * 4);
  TS_ASSERT_OK(b);
  TS_ASSERT_OK(tessera::copy(a, host.data(), n * 4));
  TS_ASSERT_OK(tessera::copy(*b, a, n * 4));
  std::vector<uint32_t> back(n);
  TS_ASSERT_OK(tessera::copy(back.data(), *b, n * 4));
  EXPECT_EQ(back, host);
}

}  // namespace
}  // namespace tessera_hip_test
