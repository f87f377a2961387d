// Area "memory": every buffer kind the device claims, sizes 1, odd and
// large, alignment, host pointers of host-visible kinds, pinned host memory
// (pinned_malloc and register_host), out of memory as an error.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Memory : public CtsTest {
 protected:
  // Writes a pattern, reads it back.
  void RoundTrip(TsBufferKind kind, uint64_t size) {
    SCOPED_TRACE(std::string(BufferKindName(kind)) + " " + std::to_string(size) + " bytes");
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(size, kind));
    EXPECT_EQ(b.size(), size);
    EXPECT_EQ(b.kind(), kind);
    std::vector<uint8_t> data(size);
    for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
    CTS_ASSERT_OK(Upload(b, data));
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> back, Download<uint8_t>(b, size));
    EXPECT_TRUE(back == data);
  }
  static const TsBufferKind kKinds[3];
  static std::string KindCap(TsBufferKind k) {
    return std::string("buffer_kinds.") + BufferKindName(k);
  }
};
const TsBufferKind Memory::kKinds[3] = {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED,
                                        TS_BUFFER_MANAGED};

TEST_F(Memory, DeviceBufferSizes) {
  for (uint64_t size : {1ull, 3ull, 4097ull, 65535ull, 1ull << 20})
    RoundTrip(TS_BUFFER_DEVICE, size);
}

TEST_F(Memory, HostPinnedBufferSizes) {
  CTS_REQUIRE(info().supports(TS_BUFFER_HOST_PINNED), KindCap(TS_BUFFER_HOST_PINNED));
  for (uint64_t size : {1ull, 3ull, 4097ull, 1ull << 20}) RoundTrip(TS_BUFFER_HOST_PINNED, size);
}

TEST_F(Memory, ManagedBufferSizes) {
  CTS_REQUIRE(info().supports(TS_BUFFER_MANAGED), KindCap(TS_BUFFER_MANAGED));
  for (uint64_t size : {1ull, 3ull, 4097ull, 1ull << 20}) RoundTrip(TS_BUFFER_MANAGED, size);
}

TEST_F(Memory, LargeBuffer) {
  // 256 MiB, or an eighth of the device when that is smaller.
  uint64_t size = std::min<uint64_t>(256ull << 20, info().total_memory / 8);
  size = size / 4 * 4;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(size));
  // Touch the first, a middle and the last page.
  for (uint64_t off : {uint64_t(0), size / 2, size - 4096}) {
    std::vector<uint32_t> page(1024);
    std::iota(page.begin(), page.end(), static_cast<uint32_t>(off));
    CTS_ASSERT_OK(Upload(b, page, off));
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> back, Download<uint32_t>(b, 1024, off));
    EXPECT_TRUE(back == page) << "at offset " << off;
  }
}

TEST_F(Memory, HostVisibleKindsHaveAHostPointer) {
  for (TsBufferKind kind : {TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED}) {
    if (!info().supports(kind)) continue;
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(4096, kind));
    ASSERT_NE(b.host_pointer(), nullptr) << BufferKindName(kind);
    // Host writes through the pointer are what a copy reads back.
    auto* p = static_cast<uint8_t*>(b.host_pointer());
    for (int i = 0; i < 4096; ++i) p[i] = static_cast<uint8_t>(i ^ 0x5a);
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> back, Download<uint8_t>(b, 4096));
    for (int i = 0; i < 4096; ++i) ASSERT_EQ(back[i], static_cast<uint8_t>(i ^ 0x5a));
  }
}

TEST_F(Memory, Alignment) {
  // Buffers are at least 64-byte aligned where the host can see them; kernel
  // arguments at odd offsets are tested in the kernels area.
  for (TsBufferKind kind : kKinds) {
    if (!info().supports(kind)) continue;
    for (uint64_t size : {1ull, 17ull, 1000ull}) {
      CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(size, kind));
      if (b.host_pointer()) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b.host_pointer()) % 64, 0u)
            << BufferKindName(kind) << " of " << size << " bytes";
      }
    }
  }
}

TEST_F(Memory, ManyLiveBuffersAreDistinct) {
  std::vector<Buffer> buffers;
  for (uint32_t i = 0; i < 64; ++i) {
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(256));
    CTS_ASSERT_OK(Upload(b, std::vector<uint32_t>(64, i)));
    buffers.push_back(b);
  }
  for (uint32_t i = 0; i < 64; ++i) {
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> v, Download<uint32_t>(buffers[i], 64));
    EXPECT_EQ(v, std::vector<uint32_t>(64, i));
  }
}

// Buffer_GetDeviceAddress (ABI 1.6, optional): live buffers of every kind
// have distinct, non-overlapping device addresses; a host-visible one on a
// plugin with unified addressing (every in-tree plugin) may equal its host
// pointer, which is not required.
TEST_F(Memory, DeviceAddressesOfLiveBuffersDoNotOverlap) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [address, address + size)
  std::vector<Buffer> buffers;
  for (TsBufferKind kind : kKinds) {
    if (!info().supports(kind)) continue;
    for (uint64_t size : {uint64_t{1}, uint64_t{4096}, uint64_t{100003}}) {
      CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(size, kind));
      StatusOr<uint64_t> address = b.device_address();
      CTS_REQUIRE(address.status().code() != StatusCode::kUnsupported, "Buffer_GetDeviceAddress");
      CTS_ASSERT_OK(address);
      ranges.push_back({*address, *address + size});
      buffers.push_back(b);
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].second, ranges[i].first)
        << "two live buffers overlap: [" << ranges[i - 1].first << ", " << ranges[i - 1].second << ") and ["
        << ranges[i].first << ", " << ranges[i].second << ")";
}

// Buffer_Import (ABI 1.6, optional): a buffer over memory another owner
// allocated (here: another buffer, at its device address) uses it in
// place, and destroying it leaves the memory to its owner.
TEST_F(Memory, ImportedMemoryIsUsedInPlace) {
  for (TsBufferKind kind : kKinds) {
    if (!info().supports(kind)) continue;
    SCOPED_TRACE(BufferKindName(kind));
    const uint64_t size = 4096;
    CTS_ASSERT_OK_AND_ASSIGN(Buffer owner, device().allocate(size, kind));
    StatusOr<uint64_t> address = owner.device_address();
    CTS_REQUIRE(address.status().code() != StatusCode::kUnsupported, "Buffer_GetDeviceAddress");
    CTS_ASSERT_OK(address);
    StatusOr<Buffer> imported = device().import_memory(*address, size, kind);
    CTS_REQUIRE(imported.status().code() != StatusCode::kUnsupported, "Buffer_Import");
    CTS_ASSERT_OK(imported);
    CTS_ASSERT_OK_AND_ASSIGN(uint64_t again, imported->device_address());
    EXPECT_EQ(again, *address);
    std::vector<uint32_t> data(size / 4);
    std::iota(data.begin(), data.end(), 11u);
    CTS_ASSERT_OK(Upload(*imported, data));
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> seen, Download<uint32_t>(owner, size / 4));
    EXPECT_EQ(seen, data) << "what was written through the import is not in the owner's memory";
    CTS_ASSERT_OK(imported->destroy());
    // The owner's memory is still there and usable.
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint32_t> after, Download<uint32_t>(owner, size / 4));
    EXPECT_EQ(after, data);
    CTS_ASSERT_OK(Upload(owner, std::vector<uint32_t>(size / 4, 5u)));
  }
}

TEST_F(Memory, MemsetEveryKind) {
  for (TsBufferKind kind : kKinds) {
    if (!info().supports(kind)) continue;
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(1001, kind));
    CTS_ASSERT_OK(tessera::memset(b, 0, 0xAB, 1001));
    CTS_ASSERT_OK(tessera::memset(b, 13, 0x11, 7));  // odd offset and size
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> v, Download<uint8_t>(b, 1001));
    for (int i = 0; i < 1001; ++i)
      ASSERT_EQ(v[i], (i >= 13 && i < 20) ? 0x11 : 0xAB) << BufferKindName(kind) << " at " << i;
  }
}

TEST_F(Memory, SizeZeroIsAnError) {
  for (TsBufferKind kind : kKinds) {
    if (!info().supports(kind)) continue;
    CTS_EXPECT_ERROR(device().allocate(0, kind), kInvalidArgument);
  }
}

TEST_F(Memory, UnsupportedKindIsAnError) {
  bool any_missing = false;
  for (TsBufferKind kind : kKinds) {
    if (info().supports(kind)) continue;
    any_missing = true;
    CTS_EXPECT_ERROR(device().allocate(64, kind), kUnsupported);
  }
  (void)any_missing;  // every kind supported: nothing to check
}

TEST_F(Memory, OutOfMemoryIsAnErrorNotACrash) {
  // Far beyond the device: an error whose message names the size.
  uint64_t size = std::max<uint64_t>(info().total_memory, 1ull << 30) * 1024;
  StatusOr<Buffer> b = device().allocate(size);
  ASSERT_FALSE(b.ok()) << "allocating " << FormatBytes(size) << " succeeded";
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted) << b.status().ToString();
  EXPECT_NE(b.status().message().find(FormatBytes(size)), std::string::npos)
      << "the message does not name the size " << FormatBytes(size) << ": "
      << b.status().message();
  // The device still works afterwards.
  RoundTrip(TS_BUFFER_DEVICE, 4096);
}

TEST_F(Memory, PinnedMallocRoundTrip) {
  CTS_ASSERT_OK_AND_ASSIGN(void* p, runtime().pinned_malloc(12345));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(runtime().is_pinned(p, 12345));
  std::memset(p, 0x3c, 12345);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(12345));
  CTS_EXPECT_OK(tessera::copy(b, p, 12345));
  CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> v, Download<uint8_t>(b, 12345));
  EXPECT_EQ(v, std::vector<uint8_t>(12345, 0x3c));
  CTS_EXPECT_OK(runtime().pinned_free(p));
  EXPECT_FALSE(runtime().is_pinned(p, 1));
}

TEST_F(Memory, RegisterHostMemory) {
  std::vector<uint8_t> host(1 << 16, 0x42);
  CTS_ASSERT_OK(runtime().register_host(host.data(), host.size()));
  EXPECT_TRUE(runtime().is_pinned(host.data(), host.size()));
  EXPECT_TRUE(runtime().is_pinned(host.data() + 100, 100));
  CTS_EXPECT_OK(runtime().unregister_host(host.data()));
  EXPECT_FALSE(runtime().is_pinned(host.data(), host.size()));
}

TEST_F(Memory, FreeIsImmediateForIdleBuffers) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(4096));
  Buffer copy = b;
  CTS_EXPECT_OK(b.destroy());
  EXPECT_FALSE(b.valid());
  EXPECT_FALSE(copy.valid()) << "destroy() must invalidate every copy";
}

}  // namespace
}  // namespace tessera::cts
