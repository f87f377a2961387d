// Area "allocations": Buffer_Allocate with an explicit alignment (the C++
// API always asks for the natural one, so this calls the plugin's table) as
// parameterized cases over every buffer kind x size x alignment (0: natural,
// 1 .. 64 KiB).  A host-addressable buffer's host pointer must be a multiple
// of the alignment, and so must the device address where the plugin gives
// one (Buffer_GetDeviceAddress, ABI 1.6: not 0, the same on every call);
// every buffer must round-trip its bytes and free cleanly.
#include <cstring>
#include <tuple>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

using AllocParam = std::tuple<TsBufferKind, uint64_t /*size*/, uint64_t /*alignment*/>;

class Allocations : public CtsTest, public ::testing::WithParamInterface<AllocParam> {
 protected:
  std::string Check(TsError* e) { return TakeError(e); }
};

TEST_P(Allocations, AlignedAndUsable) {
  const TsBufferKind kind = std::get<0>(GetParam());
  const uint64_t size = std::get<1>(GetParam());
  const uint64_t alignment = std::get<2>(GetParam());
  static const char* caps[] = {"buffer_kinds.device", "buffer_kinds.host_pinned",
                               "buffer_kinds.managed"};
  CTS_REQUIRE(info().supports(kind), caps[kind]);
  const TsPluginApi* api = runtime().plugin_api();
  TsBuffer_Allocate_Args a{};
  a.struct_size = TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE;
  a.device = device().raw();
  a.size = size;
  a.kind = kind;
  a.alignment = alignment;
  std::string err = Check(api->Buffer_Allocate(&a));
  ASSERT_EQ(err, "") << "Buffer_Allocate(" << size << " bytes, alignment " << alignment << ")";
  ASSERT_NE(a.buffer, nullptr);
  if (a.host_pointer && alignment > 1)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.host_pointer) % alignment, 0u)
        << "host pointer " << a.host_pointer << " is not aligned to " << alignment;

  if (api->struct_size >= TS_STRUCT_SIZE(TsPluginApi, Buffer_GetDeviceAddress) &&
      api->Buffer_GetDeviceAddress != nullptr) {
    TsBuffer_GetDeviceAddress_Args d{};
    d.struct_size = TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE;
    d.buffer = a.buffer;
    EXPECT_EQ(Check(api->Buffer_GetDeviceAddress(&d)), "") << "Buffer_GetDeviceAddress";
    const uint64_t address = d.address;
    EXPECT_NE(address, 0u) << "Buffer_GetDeviceAddress succeeded with address 0";
    if (alignment > 1) {
      EXPECT_EQ(address % alignment, 0u) << "device address " << address << " is not aligned to " << alignment;
    }
    d.address = 0;
    EXPECT_EQ(Check(api->Buffer_GetDeviceAddress(&d)), "");
    EXPECT_EQ(d.address, address) << "a buffer's device address changed between two calls";
  }

  std::vector<uint8_t> data(size), back(size, 0);
  for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 31 + alignment + 7);
  TsMemcpy_Args up{};
  up.struct_size = TS_MEMCPY_ARGS_STRUCT_SIZE;
  up.dst.buffer = a.buffer;
  up.src.host = data.data();
  up.size = size;
  EXPECT_EQ(Check(api->Memcpy(&up)), "") << "upload";
  TsMemcpy_Args down{};
  down.struct_size = TS_MEMCPY_ARGS_STRUCT_SIZE;
  down.dst.host = back.data();
  down.src.buffer = a.buffer;
  down.size = size;
  EXPECT_EQ(Check(api->Memcpy(&down)), "") << "download";
  EXPECT_TRUE(back == data) << "the bytes read back differ";
  if (a.host_pointer) EXPECT_EQ(std::memcmp(a.host_pointer, data.data(), size), 0);

  TsBuffer_Free_Args f{};
  f.struct_size = TS_BUFFER_FREE_ARGS_STRUCT_SIZE;
  f.buffer = a.buffer;
  EXPECT_EQ(Check(api->Buffer_Free(&f)), "") << "Buffer_Free";
}

std::string AllocName(const ::testing::TestParamInfo<AllocParam>& info) {
  static const char* kinds[] = {"Device", "HostPinned", "Managed"};
  return std::string(kinds[std::get<0>(info.param)]) + "_Size" +
         std::to_string(std::get<1>(info.param)) + "_Align" +
         std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    , Allocations,
    ::testing::Combine(::testing::Values(TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED),
                       ::testing::Values<uint64_t>(1, 3, 64, 4097, 65537),
                       ::testing::Values<uint64_t>(0, 1, 2, 4, 16, 64, 256, 4096, 65536)),
    AllocName);

}  // namespace
}  // namespace tessera::cts
