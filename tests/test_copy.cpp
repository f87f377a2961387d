// Copies in every direction, sync and async, and the memory-model rules the
// core enforces on them (pinned host memory for async copies, bounds, sizes).
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Iota;
using testing::Upload;

class CopyTest : public CpuTest {
 protected:
  int NumDevices() const override { return 2; }
};

constexpr size_t kN = 1000;
constexpr uint64_t kBytes = kN * sizeof(float);

TEST_F(CopyTest, SyncHostToDeviceToHost) {
  Buffer buf = Alloc(kBytes);
  std::vector<float> in = Iota(kN, 1.0f);
  TS_ASSERT_OK(copy(buf, in.data(), kBytes));
  std::vector<float> out(kN);
  TS_ASSERT_OK(copy(out.data(), buf, kBytes));
  EXPECT_EQ(out, in);
}

TEST_F(CopyTest, SyncDeviceToDeviceSameDevice) {
  Buffer a = Alloc(kBytes), b = Alloc(kBytes);
  std::vector<float> in = Iota(kN, -5.0f, 0.5f);
  Upload(a, in);
  TS_ASSERT_OK(copy(b, a, kBytes));
  EXPECT_EQ(Download<float>(b, kN), in);
}

TEST_F(CopyTest, SyncPeerCopyBetweenDevices) {
  ASSERT_NE(device(0).info().peer_copy, TS_PEER_COPY_NONE);
  Buffer a = Alloc(kBytes, TS_BUFFER_DEVICE, 0);
  Buffer b = Alloc(kBytes, TS_BUFFER_DEVICE, 1);
  EXPECT_EQ(b.device(), device(1));
  std::vector<float> in = Iota(kN, 7.0f);
  Upload(a, in);
  TS_ASSERT_OK(copy(b, a, kBytes));
  EXPECT_EQ(Download<float>(b, kN), in);
  // And back.
  std::vector<float> in2 = Iota(kN, 100.0f, -1.0f);
  Upload(b, in2);
  TS_ASSERT_OK(copy(a, b, kBytes));
  EXPECT_EQ(Download<float>(a, kN), in2);
}

TEST_F(CopyTest, SyncCopiesWithOffsets) {
  Buffer a = Alloc(kBytes), b = Alloc(kBytes, TS_BUFFER_DEVICE, 1);
  TS_ASSERT_OK(memset(a, 0, 0, kBytes));
  TS_ASSERT_OK(memset(b, 0, 0, kBytes));
  std::vector<float> in = Iota(10, 1.0f);
  // host -> a[100..110)
  TS_ASSERT_OK(copy(MemoryRef(a, 100 * sizeof(float)), in.data(),
                    10 * sizeof(float)));
  // a[100..110) -> b[500..510) (across devices)
  TS_ASSERT_OK(copy(MemoryRef(b, 500 * sizeof(float)),
                    MemoryRef(a, 100 * sizeof(float)), 10 * sizeof(float)));
  // b[505..510) -> host
  std::vector<float> out(5);
  TS_ASSERT_OK(copy(out.data(), MemoryRef(b, 505 * sizeof(float)),
                    5 * sizeof(float)));
  EXPECT_EQ(out, std::vector<float>({6, 7, 8, 9, 10}));
  std::vector<float> all = Download<float>(b, kN);
  for (size_t i = 0; i < kN; ++i) {
    float expected = (i >= 500 && i < 510) ? float(i - 499) : 0.0f;
    ASSERT_EQ(all[i], expected) << i;
  }
  // Copy to the very end is in bounds.
  TS_EXPECT_OK(copy(MemoryRef(a, kBytes - 4), in.data(), 4));
}

TEST_F(CopyTest, SyncCopyAcceptsPageableAndPinnedHostMemory) {
  Buffer buf = Alloc(kBytes);
  std::vector<float> pageable = Iota(kN);
  TS_ASSERT_OK(copy(buf, pageable.data(), kBytes));
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(kBytes));
  TS_ASSERT_OK(copy(pinned, buf, kBytes));
  EXPECT_EQ(std::memcmp(pinned, pageable.data(), kBytes), 0);
  TS_EXPECT_OK(runtime_.pinned_free(pinned));
}

TEST_F(CopyTest, AsyncCopyWithPageableMemoryIsFailedPrecondition) {
  Buffer buf = Alloc(kBytes);
  Stream s = NewStream();
  std::vector<float> pageable(kN);
  Status to_device = s.copy_async(buf, pageable.data(), kBytes);
  EXPECT_EQ(to_device.code(), StatusCode::kFailedPrecondition)
      << to_device.ToString();
  TS_EXPECT_CONTAINS(to_device.message(), "pinned_malloc");
  Status to_host = s.copy_async(pageable.data(), buf, kBytes);
  EXPECT_EQ(to_host.code(), StatusCode::kFailedPrecondition)
      << to_host.ToString();
  TS_EXPECT_CONTAINS(to_host.message(), "pinned_malloc");
  // Partly pinned is not pinned.
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(kBytes / 2));
  TS_EXPECT_CODE(s.copy_async(buf, pinned, kBytes), kFailedPrecondition);
  TS_EXPECT_OK(runtime_.pinned_free(pinned));
}

TEST_F(CopyTest, AsyncCopyWithPinnedMemory) {
  Buffer buf = Alloc(kBytes);
  Stream s = NewStream();
  TS_ASSERT_OK_AND_ASSIGN(void* src, runtime_.pinned_malloc(kBytes));
  TS_ASSERT_OK_AND_ASSIGN(void* dst, runtime_.pinned_malloc(kBytes));
  std::vector<float> in = Iota(kN, 2.0f);
  std::memcpy(src, in.data(), kBytes);
  std::memset(dst, 0, kBytes);
  TS_ASSERT_OK(s.copy_async(buf, src, kBytes));
  TS_ASSERT_OK(s.copy_async(dst, buf, kBytes));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(std::memcmp(dst, in.data(), kBytes), 0);
  TS_EXPECT_OK(runtime_.pinned_free(src));
  TS_EXPECT_OK(runtime_.pinned_free(dst));
}

TEST_F(CopyTest, AsyncCopyWithRegisteredMemory) {
  Buffer buf = Alloc(kBytes);
  Stream s = NewStream();
  std::vector<float> host = Iota(kN, 9.0f);
  TS_ASSERT_OK(runtime_.register_host(host.data(), kBytes));
  TS_ASSERT_OK(s.copy_async(buf, host.data(), kBytes));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(buf, kN), host);
  TS_EXPECT_OK(runtime_.unregister_host(host.data()));
  TS_EXPECT_CODE(s.copy_async(buf, host.data(), kBytes), kFailedPrecondition);
}

TEST_F(CopyTest, AsyncDeviceToDeviceAndPeer) {
  Buffer a = Alloc(kBytes, TS_BUFFER_DEVICE, 0);
  Buffer b = Alloc(kBytes, TS_BUFFER_DEVICE, 0);
  Buffer c = Alloc(kBytes, TS_BUFFER_DEVICE, 1);
  std::vector<float> in = Iota(kN, 4.0f);
  Upload(a, in);
  Stream s = NewStream();
  TS_ASSERT_OK(s.copy_async(b, a, kBytes));
  TS_ASSERT_OK(s.copy_async(c, b, kBytes));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(c, kN), in);
}

TEST_F(CopyTest, OutOfBoundsIsOutOfRange) {
  Buffer buf = Alloc(kBytes);
  Buffer other = Alloc(kBytes);
  std::vector<char> host(kBytes + 64);
  TS_EXPECT_CODE(copy(buf, host.data(), kBytes + 1), kOutOfRange);
  TS_EXPECT_CODE(copy(MemoryRef(buf, 1), host.data(), kBytes), kOutOfRange);
  TS_EXPECT_CODE(copy(host.data(), MemoryRef(buf, kBytes), 1), kOutOfRange);
  TS_EXPECT_CODE(copy(MemoryRef(other, 8), MemoryRef(buf, 0), kBytes),
                 kOutOfRange);
  // Offset + size overflowing 64 bits is out of range too, not a wrap-around.
  TS_EXPECT_CODE(copy(MemoryRef(buf, ~0ull - 2), host.data(), 16), kOutOfRange);
  TS_EXPECT_CODE(memset(buf, kBytes - 2, 0, 4), kOutOfRange);
  Stream s = NewStream();
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(kBytes + 64));
  TS_EXPECT_CODE(s.copy_async(buf, pinned, kBytes + 64), kOutOfRange);
  TS_EXPECT_OK(runtime_.pinned_free(pinned));
  // Nothing was written.
  TS_ASSERT_OK(s.synchronize());
}

TEST_F(CopyTest, SizeZeroIsInvalidArgument) {
  Buffer buf = Alloc(kBytes);
  std::vector<char> host(16);
  TS_EXPECT_CODE(copy(buf, host.data(), 0), kInvalidArgument);
  TS_EXPECT_CODE(copy(host.data(), buf, 0), kInvalidArgument);
  Stream s = NewStream();
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(16));
  TS_EXPECT_CODE(s.copy_async(buf, pinned, 0), kInvalidArgument);
  TS_EXPECT_OK(runtime_.pinned_free(pinned));
}

TEST_F(CopyTest, HostToHostIsRejectedOrCopied) {
  // Not a device copy; either a clear error or a plain copy, never a crash.
  std::vector<int> a(4, 1), b(4, 0);
  Status s = copy(b.data(), a.data(), sizeof(int) * 4);
  if (s.ok())
    EXPECT_EQ(a, b);
  else
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST_F(CopyTest, MemsetSyncAndAsync) {
  Buffer buf = Alloc(256);
  TS_ASSERT_OK(memset(buf, 0, 0x11, 256));
  TS_ASSERT_OK(memset(buf, 64, 0x22, 64));
  Stream s = NewStream();
  TS_ASSERT_OK(s.memset_async(buf, 192, 0x33, 64));
  TS_ASSERT_OK(s.synchronize());
  auto bytes = Download<uint8_t>(buf, 256);
  for (size_t i = 0; i < 256; ++i) {
    uint8_t expected = i < 64 ? 0x11 : i < 128 ? 0x22 : i < 192 ? 0x11 : 0x33;
    ASSERT_EQ(bytes[i], expected) << i;
  }
}

}  // namespace
}  // namespace tessera
