// Area "copies": host->device, device->host, device->device and peer, each
// synchronous and asynchronous, at offsets, with the pinned/pageable rules of
// docs/memory-model.md, overlapping ranges, and peer copies direct or
// host-staged as DeviceInfo::peer_copy announces.
#include <numeric>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Copies : public CtsTest {
 protected:
  std::vector<uint32_t> Pattern(size_t n, uint32_t seed) {
    std::vector<uint32_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i * 2654435761u + seed);
    return v;
  }
  // Pinned host memory freed at the end of the test.
  void* Pinned(size_t size) {
    StatusOr<void*> p = runtime().pinned_malloc(size);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return nullptr;
    pinned_.push_back(*p);
    return *p;
  }
  void TearDown() override {
    for (void* p : pinned_) runtime().pinned_free(p).IgnoreError();
  }
  std::vector<void*> pinned_;
};

TEST_F(Copies, SyncHostToDeviceToHost) {
  auto data = Pattern(10007, 1);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(data.size() * 4));
  CTS_ASSERT_OK(tessera::copy(b, data.data(), data.size() * 4));
  std::vector<uint32_t> back(data.size());
  CTS_ASSERT_OK(tessera::copy(back.data(), b, data.size() * 4));
  EXPECT_EQ(back, data);
}

TEST_F(Copies, SyncDeviceToDevice) {
  auto data = Pattern(4099, 2);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(data.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(data.size() * 4));
  CTS_ASSERT_OK(Upload(a, data));
  CTS_ASSERT_OK(tessera::copy(b, a, data.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(auto back, Download<uint32_t>(b, data.size()));
  EXPECT_EQ(back, data);
}

TEST_F(Copies, SyncEveryKindPair) {
  const TsBufferKind kinds[] = {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED};
  auto data = Pattern(999, 3);
  for (TsBufferKind from : kinds)
    for (TsBufferKind to : kinds) {
      if (!info().supports(from) || !info().supports(to)) continue;
      SCOPED_TRACE(std::string(BufferKindName(from)) + " -> " + BufferKindName(to));
      CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(data.size() * 4, from));
      CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(data.size() * 4, to));
      CTS_ASSERT_OK(Upload(a, data));
      CTS_ASSERT_OK(tessera::copy(b, a, data.size() * 4));
      CTS_ASSERT_OK_AND_ASSIGN(auto back, Download<uint32_t>(b, data.size()));
      EXPECT_EQ(back, data);
    }
}

TEST_F(Copies, SyncAtOddOffsets) {
  std::vector<uint8_t> host(1000);
  std::iota(host.begin(), host.end(), 0);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(1000));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(1000));
  CTS_ASSERT_OK(tessera::memset(a, 0, 0xEE, 1000));
  CTS_ASSERT_OK(tessera::memset(b, 0, 0xDD, 1000));
  CTS_ASSERT_OK(tessera::copy(MemoryRef(a, 3), host.data() + 5, 101));   // h2d
  CTS_ASSERT_OK(tessera::copy(MemoryRef(b, 777), MemoryRef(a, 3), 101)); // d2d
  std::vector<uint8_t> out(101);
  CTS_ASSERT_OK(tessera::copy(out.data(), MemoryRef(b, 777), 101));      // d2h
  for (int i = 0; i < 101; ++i) ASSERT_EQ(out[i], host[5 + i]) << i;
  CTS_ASSERT_OK_AND_ASSIGN(auto all, Download<uint8_t>(b, 1000));
  EXPECT_EQ(all[776], 0xDD);
  EXPECT_EQ(all[878], 0xDD);
  // Last byte of the buffer exactly.
  CTS_ASSERT_OK(tessera::copy(MemoryRef(b, 999), host.data() + 42, 1));
  CTS_ASSERT_OK_AND_ASSIGN(auto last, Download<uint8_t>(b, 1, 999));
  EXPECT_EQ(last[0], 42);
}

TEST_F(Copies, AsyncEveryDirectionWithPinnedMemory) {
  const size_t n = 1 << 16;
  auto data = Pattern(n, 4);
  auto* src = static_cast<uint32_t*>(Pinned(n * 4));
  auto* dst = static_cast<uint32_t*>(Pinned(n * 4));
  ASSERT_TRUE(src && dst);
  std::memcpy(src, data.data(), n * 4);
  std::memset(dst, 0, n * 4);
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
  CTS_ASSERT_OK(s.copy_async(a, src, n * 4));        // h2d
  CTS_ASSERT_OK(s.copy_async(b, a, n * 4));          // d2d, ordered after
  CTS_ASSERT_OK(s.copy_async(dst, b, n * 4));        // d2h, ordered after
  CTS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(std::memcmp(dst, data.data(), n * 4), 0);
}

TEST_F(Copies, AsyncOnTheDefaultStream) {
  const size_t n = 4096;
  auto data = Pattern(n, 5);
  auto* host = static_cast<uint32_t*>(Pinned(n * 4));
  ASSERT_TRUE(host);
  std::memcpy(host, data.data(), n * 4);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(n * 4));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.copy_async(a, host, n * 4));
  CTS_ASSERT_OK(s.memset_async(a, 0, 0, 16));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto back, Download<uint32_t>(a, n));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], i < 4 ? 0u : data[i]) << i;
}

TEST_F(Copies, AsyncWithRegisteredHostMemory) {
  std::vector<uint32_t> host = Pattern(3000, 6), out(3000, 0);
  CTS_ASSERT_OK(runtime().register_host(host.data(), host.size() * 4));
  CTS_ASSERT_OK(runtime().register_host(out.data(), out.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(host.size() * 4));
  CTS_EXPECT_OK(s.copy_async(a, host.data(), host.size() * 4));
  CTS_EXPECT_OK(s.copy_async(out.data(), a, host.size() * 4));
  CTS_EXPECT_OK(s.synchronize());
  EXPECT_EQ(out, host);
  CTS_EXPECT_OK(runtime().unregister_host(host.data()));
  CTS_EXPECT_OK(runtime().unregister_host(out.data()));
}

TEST_F(Copies, AsyncWithPinnedBufferHostPointer) {
  CTS_REQUIRE(info().supports(TS_BUFFER_HOST_PINNED), "buffer_kinds.host_pinned");
  CTS_ASSERT_OK_AND_ASSIGN(Buffer pinned, device().allocate(4096, TS_BUFFER_HOST_PINNED));
  ASSERT_NE(pinned.host_pointer(), nullptr);
  std::memset(pinned.host_pointer(), 0x77, 4096);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(4096));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_EXPECT_OK(s.copy_async(a, pinned.host_pointer(), 4096));
  CTS_EXPECT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint8_t>(a, 4096));
  EXPECT_EQ(v, std::vector<uint8_t>(4096, 0x77));
}

TEST_F(Copies, AsyncPageableHostMemoryIsAnError) {
  std::vector<uint8_t> pageable(4096, 1);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(4096));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  Status to_device = s.copy_async(a, pageable.data(), 4096);
  EXPECT_EQ(to_device.code(), StatusCode::kFailedPrecondition) << to_device.ToString();
  EXPECT_NE(to_device.message().find("pinned_malloc"), std::string::npos)
      << "the message must say how to fix it: " << to_device.message();
  Status to_host = s.copy_async(pageable.data(), a, 4096);
  EXPECT_EQ(to_host.code(), StatusCode::kFailedPrecondition) << to_host.ToString();
  // The same copies are fine synchronously.
  CTS_EXPECT_OK(tessera::copy(a, pageable.data(), 4096));
  CTS_EXPECT_OK(tessera::copy(pageable.data(), a, 4096));
}

TEST_F(Copies, PartiallyPinnedRangeIsPageable) {
  auto* p = static_cast<uint8_t*>(Pinned(4096));
  ASSERT_TRUE(p);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(8192));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  // 4096 bytes from p + 2048 run past the pinned block.
  CTS_EXPECT_ERROR(s.copy_async(a, p + 2048, 4096), kFailedPrecondition);
}

TEST_F(Copies, OverlappingRangesInOneBuffer) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(1024));
  CTS_ASSERT_OK(Upload(a, Pattern(256, 7)));
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(a, 100), MemoryRef(a, 0), 200), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(a, 0), MemoryRef(a, 100), 200), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(a, 0), MemoryRef(a, 0), 16), kInvalidArgument);
  // Adjacent, not overlapping: fine, and exact.
  CTS_ASSERT_OK(tessera::copy(MemoryRef(a, 512), MemoryRef(a, 0), 512));
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(a, 256));
  for (int i = 0; i < 128; ++i) ASSERT_EQ(v[128 + i], v[i]);
}

TEST_F(Copies, LargeAsyncCopyInChunks) {
  const size_t size = 64ull << 20;
  auto* host = static_cast<uint8_t*>(Pinned(size));
  ASSERT_TRUE(host);
  for (size_t i = 0; i < size; i += 4096) host[i] = static_cast<uint8_t>(i >> 12);
  host[size - 1] = 0x99;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(size));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.copy_async(a, host, size));
  CTS_ASSERT_OK(s.memset_async(a, 4096, 0, 1));
  CTS_ASSERT_OK(s.synchronize());
  std::vector<uint8_t> back(size);
  CTS_ASSERT_OK(tessera::copy(back.data(), a, size));
  host[4096] = 0;
  EXPECT_EQ(std::memcmp(back.data(), host, size), 0);
}

// ---------------------------------------------------------------- peers
TEST_F(Copies, PeerCopySyncAndAsync) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  CTS_REQUIRE(info().peer_copy != TS_PEER_COPY_NONE, "peer_copy");
  const tessera::Device& d0 = devices()[0];
  const tessera::Device& d1 = devices()[1];
  auto data = Pattern(50000, 8);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, d0.allocate(data.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, d1.allocate(data.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer c, d0.allocate(data.size() * 4));
  CTS_ASSERT_OK(Upload(a, data));
  CTS_ASSERT_OK(tessera::copy(b, a, data.size() * 4));  // 0 -> 1 sync
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, d1.create_stream());
  CTS_ASSERT_OK(s1.copy_async(c, b, data.size() * 4));  // 1 -> 0 async
  CTS_ASSERT_OK(s1.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto back, Download<uint32_t>(c, data.size()));
  EXPECT_EQ(back, data);
}

TEST_F(Copies, PeerCopyReportsItsMode) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  CTS_REQUIRE(info().peer_copy != TS_PEER_COPY_NONE, "peer_copy");
  // TsMemcpy_Args.peer_mode is only visible through the ABI: call the
  // plugin's table directly, as a vendor's own test would.
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, devices()[0].allocate(4096));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, devices()[1].allocate(4096));
  CTS_ASSERT_OK(tessera::memset(a, 0, 0x21, 4096));
  const TsPluginApi* api = runtime().plugin_api();
  ASSERT_NE(api, nullptr);
  TsMemcpy_Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = TS_MEMCPY_ARGS_STRUCT_SIZE;
  args.dst.buffer = b.raw();
  args.src.buffer = a.raw();
  args.size = 4096;
  args.peer_mode = TS_PEER_COPY_NONE;
  TsError* err = api->Memcpy(&args);
  if (err) {
    TsError_Message_Args m{};
    m.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
    m.error = err;
    api->Error_Message(&m);
    ADD_FAILURE() << "Memcpy: " << (m.message ? m.message : "");
    TsError_Destroy_Args d{};
    d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
    d.error = err;
    api->Error_Destroy(&d);
    return;
  }
  EXPECT_NE(args.peer_mode, TS_PEER_COPY_NONE) << "a peer copy must report its mode";
  if (info().peer_copy == TS_PEER_COPY_HOST_STAGED) {
    EXPECT_EQ(args.peer_mode, TS_PEER_COPY_HOST_STAGED)
        << "the device announced host-staged peer copies";
  }
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint8_t>(b, 4096));
  EXPECT_EQ(v, std::vector<uint8_t>(4096, 0x21));
}

TEST_F(Copies, PeerCopyWithoutPeerAccessIsUnsupported) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  if (info().peer_copy != TS_PEER_COPY_NONE) return;  // not applicable
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, devices()[0].allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, devices()[1].allocate(64));
  CTS_EXPECT_ERROR(tessera::copy(b, a, 64), kUnsupported);
}

}  // namespace
}  // namespace tessera::cts
