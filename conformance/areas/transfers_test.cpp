// Area "transfers": copies and memsets as parameterized cases over every
// buffer kind x size (0, 1, odd, around powers of two, around a page, and
// 3 MiB + 5, large enough to be split into chunks) x offset (0, unaligned 1
// and 3, 256).  Each case checks the bytes it wrote and that the bytes
// around them are untouched; size 0 must be INVALID_ARGUMENT.  Buffers are
// offset + size + a guard of 16 bytes on each side.
#include <cstring>
#include <tuple>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

using TransferParam = std::tuple<TsBufferKind, uint64_t /*size*/, uint64_t /*offset*/>;

constexpr uint64_t kGuard = 16;
constexpr uint8_t kFill = 0xEE;

std::vector<uint8_t> Pattern(uint64_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (uint64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

const char* KindCapability(TsBufferKind kind) {
  switch (kind) {
    case TS_BUFFER_DEVICE: return "buffer_kinds.device";
    case TS_BUFFER_HOST_PINNED: return "buffer_kinds.host_pinned";
    default: return "buffer_kinds.managed";
  }
}

class Transfers : public CtsTest, public ::testing::WithParamInterface<TransferParam> {
 protected:
  TsBufferKind kind() const { return std::get<0>(GetParam()); }
  uint64_t size() const { return std::get<1>(GetParam()); }
  uint64_t offset() const { return std::get<2>(GetParam()); }
  // A buffer of the case's kind holding offset + size plus the guards,
  // every byte kFill.
  StatusOr<Buffer> Filled() {
    StatusOr<Buffer> b = device().allocate(offset() + size() + 2 * kGuard, kind());
    if (!b.ok()) return b;
    TESSERA_RETURN_IF_ERROR(tessera::memset(*b, 0, kFill, b->size()));
    return b;
  }
  // The whole buffer equals kFill outside [offset, offset + size) and
  // `inside` within it.
  void ExpectBuffer(const Buffer& b, const std::vector<uint8_t>& inside) {
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> got, Download<uint8_t>(b, b.size()));
    for (uint64_t i = 0; i < got.size(); ++i) {
      const bool in = i >= offset() && i < offset() + size();
      const uint8_t want = in ? inside[i - offset()] : kFill;
      ASSERT_EQ(got[i], want) << "byte " << i << " of " << got.size() << " ("
                              << (in ? "written" : "outside the range") << ")";
    }
  }
};

#define CTS_REQUIRE_KIND() CTS_REQUIRE(info().supports(kind()), KindCapability(kind()))

TEST_P(Transfers, HostToDeviceAndBack) {
  CTS_REQUIRE_KIND();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, Filled());
  std::vector<uint8_t> data = Pattern(size(), 1);
  std::vector<uint8_t> host(size() + 1);
  if (size() == 0) {
    CTS_EXPECT_ERROR(tessera::copy(MemoryRef(b, offset()), host.data(), 0), kInvalidArgument);
    CTS_EXPECT_ERROR(tessera::copy(host.data(), MemoryRef(b, offset()), 0), kInvalidArgument);
    return;
  }
  CTS_ASSERT_OK(tessera::copy(MemoryRef(b, offset()), data.data(), size()));
  ExpectBuffer(b, data);
  CTS_ASSERT_OK(tessera::copy(host.data(), MemoryRef(b, offset()), size()));
  host.pop_back();
  EXPECT_TRUE(host == data) << "the bytes read back differ";
}

TEST_P(Transfers, AsyncThroughPinnedMemory) {
  CTS_REQUIRE_KIND();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, Filled());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime().pinned_malloc(size() + 1));
  struct Free {
    Runtime rt;
    void* p;
    ~Free() { (void)rt.pinned_free(p); }
  } free_pinned{runtime(), pinned};
  std::vector<uint8_t> data = Pattern(size(), 2);
  if (size() == 0) {
    CTS_EXPECT_ERROR(s.copy_async(MemoryRef(b, offset()), pinned, 0), kInvalidArgument);
    return;
  }
  std::memcpy(pinned, data.data(), size());
  CTS_ASSERT_OK(s.copy_async(MemoryRef(b, offset()), pinned, size()));
  CTS_ASSERT_OK(s.synchronize());
  ExpectBuffer(b, data);
  std::memset(pinned, 0, size());
  CTS_ASSERT_OK(s.copy_async(pinned, MemoryRef(b, offset()), size()));
  CTS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(std::memcmp(pinned, data.data(), size()), 0) << "the bytes read back differ";
}

TEST_P(Transfers, DeviceToDevice) {
  CTS_REQUIRE_KIND();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer src, device().allocate(offset() + size() + 2 * kGuard));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer dst, Filled());
  if (size() == 0) {
    CTS_EXPECT_ERROR(tessera::copy(MemoryRef(dst, offset()), MemoryRef(src, 0), 0),
                     kInvalidArgument);
    return;
  }
  std::vector<uint8_t> data = Pattern(size(), 3);
  // From another offset of the source (kGuard), so the two offsets differ.
  CTS_ASSERT_OK(Upload(src, data, kGuard));
  CTS_ASSERT_OK(tessera::copy(MemoryRef(dst, offset()), MemoryRef(src, kGuard), size()));
  ExpectBuffer(dst, data);
}

TEST_P(Transfers, Memset) {
  CTS_REQUIRE_KIND();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, Filled());
  const uint8_t value = static_cast<uint8_t>(0x11 + size() % 200);
  if (size() == 0) {
    CTS_EXPECT_ERROR(tessera::memset(b, offset(), value, 0), kInvalidArgument);
    return;
  }
  CTS_ASSERT_OK(tessera::memset(b, offset(), value, size()));
  ExpectBuffer(b, std::vector<uint8_t>(size(), value));
}

TEST_P(Transfers, MemsetAsync) {
  CTS_REQUIRE_KIND();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, Filled());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  const uint8_t value = static_cast<uint8_t>(0x5A ^ size());
  if (size() == 0) {
    CTS_EXPECT_ERROR(s.memset_async(b, offset(), value, 0), kInvalidArgument);
    return;
  }
  // Two memsets in order: the second wins where they overlap.
  CTS_ASSERT_OK(s.memset_async(b, offset(), static_cast<uint8_t>(~value), size()));
  CTS_ASSERT_OK(s.memset_async(b, offset(), value, size()));
  CTS_ASSERT_OK(s.synchronize());
  ExpectBuffer(b, std::vector<uint8_t>(size(), value));
}

std::string TransferName(const ::testing::TestParamInfo<TransferParam>& info) {
  static const char* kinds[] = {"Device", "HostPinned", "Managed"};
  return std::string(kinds[std::get<0>(info.param)]) + "_Size" +
         std::to_string(std::get<1>(info.param)) + "_Offset" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    , Transfers,
    ::testing::Combine(::testing::Values(TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED),
                       ::testing::Values<uint64_t>(0, 1, 2, 3, 4, 7, 8, 63, 64, 65, 255, 256, 4095,
                                                   4096, 4097, 65539, (3u << 20) + 5),
                       ::testing::Values<uint64_t>(0, 1, 3, 256)),
    TransferName);

}  // namespace
}  // namespace tessera::cts
