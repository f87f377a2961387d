// Area "streams": in-order execution, concurrency between streams, the
// sequential default stream, non-blocking streams, queries, destruction with
// pending work, and weights checked by counting completions (never timing).
#include <chrono>
#include <thread>
#include "areas/sched_util.hpp"

namespace tessera::cts {
namespace {

class Streams : public CtsTest {
 protected:
  Status MulAdd(const Stream& s, const Buffer& x, uint32_t m, uint32_t a, uint64_t n) {
    StatusOr<Kernel> k = kernel("mul_add_u32");
    if (!k.ok()) return k.status();
    const uint32_t group = GroupFor(*k, 64);
    return s.launch(*k, Dim(GroupsFor(n, group)), Dim(group),
                    {KernelArg::buffer(x), KernelArg::scalar(m), KernelArg::scalar(a),
                     KernelArg::scalar(n)});
  }
  static uint32_t Apply(uint32_t x, const std::vector<std::pair<uint32_t, uint32_t>>& ops) {
    for (auto [m, a] : ops) x = x * m + a;
    return x;
  }
};

TEST_F(Streams, WorkRunsInIssueOrder) {
  CTS_REQUIRE_KERNELS();
  const uint64_t n = 10000;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.memset_async(x, 0, 0, n * 4));
  std::vector<std::pair<uint32_t, uint32_t>> ops;
  for (uint32_t i = 0; i < 50; ++i) {
    ops.push_back({3 + i % 5, i});
    CTS_ASSERT_OK(MulAdd(s, x, ops.back().first, ops.back().second, n));
  }
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, n));
  const uint32_t want = Apply(0, ops);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], want) << "element " << i;
}

TEST_F(Streams, CopiesAndKernelsInterleaveInOrder) {
  CTS_REQUIRE_KERNELS();
  const uint64_t n = 4096;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(void* host, runtime().pinned_malloc(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.memset_async(a, 0, 0, n * 4));
  CTS_ASSERT_OK(MulAdd(s, a, 1, 5, n));         // a = 5
  CTS_ASSERT_OK(s.copy_async(b, a, n * 4));     // b = 5
  CTS_ASSERT_OK(MulAdd(s, a, 2, 1, n));         // a = 11
  CTS_ASSERT_OK(MulAdd(s, b, 3, 0, n));         // b = 15
  CTS_ASSERT_OK(s.copy_async(MemoryRef(b), MemoryRef(a), n * 2));  // b[:n/2] = 11
  CTS_ASSERT_OK(s.copy_async(host, b, n * 4));
  CTS_ASSERT_OK(s.synchronize());
  auto* v = static_cast<uint32_t*>(host);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i < n / 2 ? 11u : 15u) << i;
  CTS_EXPECT_OK(runtime().pinned_free(host));
}

TEST_F(Streams, IndependentStreamsAllComplete) {
  CTS_REQUIRE_KERNELS();
  const uint64_t n = 2048;
  std::vector<Stream> streams;
  std::vector<Buffer> bufs;
  for (uint32_t k = 0; k < 6; ++k) {
    CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
    CTS_ASSERT_OK(s.memset_async(b, 0, 0, n * 4));
    streams.push_back(s);
    bufs.push_back(b);
  }
  for (uint32_t round = 0; round < 20; ++round)
    for (uint32_t k = 0; k < streams.size(); ++k)
      CTS_ASSERT_OK(MulAdd(streams[k], bufs[k], 1, k + 1, n));
  for (Stream& s : streams) CTS_ASSERT_OK(s.synchronize());
  for (uint32_t k = 0; k < bufs.size(); ++k) {
    CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(bufs[k], n));
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], 20 * (k + 1)) << "stream " << k;
  }
}

TEST_F(Streams, StreamsRunConcurrently) {
  CTS_REQUIRE_KERNELS();
  CTS_REQUIRE(info().concurrent_streams, "concurrent_streams");
  // Each kernel raises its flag and waits for the other's: both see each
  // other only if the two streams ran at the same time.
  // flags[0..1] at byte 0, seen[0..1] at byte 256 (a buffer argument's
  // offset must respect the storage-buffer offset alignment, at most 256).
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flags, device().allocate(512));
  CTS_ASSERT_OK(tessera::memset(flags, 0, 0, 512));
  CTS_ASSERT_OK_AND_ASSIGN(Stream a, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream b, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Kernel hs, kernel("handshake"));
  for (uint32_t me : {0u, 1u})
    CTS_ASSERT_OK((me == 0 ? a : b).launch(
        hs, Dim(1), Dim(1),
        {KernelArg::buffer(flags), KernelArg::scalar(me), KernelArg::scalar(10000u),
         KernelArg::buffer(flags, 256)}));
  CTS_ASSERT_OK(a.synchronize());
  CTS_ASSERT_OK(b.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(flags, 2, 256));
  EXPECT_EQ(v[0], 1u) << "stream A never saw stream B running";
  EXPECT_EQ(v[1], 1u) << "stream B never saw stream A running";
}

TEST_F(Streams, DefaultStreamWaitsForEarlierWork) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flag, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer out, device().allocate(4));
  CTS_ASSERT_OK(tessera::memset(flag, 0, 0, 4));
  CTS_ASSERT_OK(tessera::memset(out, 0, 0xff, 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Kernel slow, kernel("delayed_store"));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel copy, kernel("copy_u32"));
  CTS_ASSERT_OK(s.launch(slow, Dim(1), Dim(1),
                         {KernelArg::buffer(flag), KernelArg::scalar(1u), KernelArg::scalar(30000u)}));
  Stream def = device().default_stream();
  CTS_ASSERT_OK(def.launch(copy, Dim(1), Dim(1),
                           {KernelArg::buffer(out), KernelArg::buffer(flag), KernelArg::scalar(uint64_t(1))}));
  CTS_ASSERT_OK(def.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(out, 1));
  EXPECT_EQ(v[0], 1u) << "the default stream ran before earlier work of a blocking stream";
}

TEST_F(Streams, LaterWorkWaitsForDefaultStream) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flag, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer out, device().allocate(4));
  CTS_ASSERT_OK(tessera::memset(flag, 0, 0, 4));
  CTS_ASSERT_OK(tessera::memset(out, 0, 0xff, 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Kernel slow, kernel("delayed_store"));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel copy, kernel("copy_u32"));
  Stream def = device().default_stream();
  CTS_ASSERT_OK(def.launch(slow, Dim(1), Dim(1),
                           {KernelArg::buffer(flag), KernelArg::scalar(7u), KernelArg::scalar(30000u)}));
  CTS_ASSERT_OK(s.launch(copy, Dim(1), Dim(1),
                         {KernelArg::buffer(out), KernelArg::buffer(flag), KernelArg::scalar(uint64_t(1))}));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(out, 1));
  EXPECT_EQ(v[0], 7u) << "a blocking stream ran before earlier default-stream work";
}

TEST_F(Streams, NonBlockingStreamDoesNotWaitForDefaultStream) {
  CTS_REQUIRE_GATE();
  // On a device that runs one kernel at a time, the running gate holds up
  // every stream, whatever their ordering rules say.
  CTS_REQUIRE(info().concurrent_streams, "concurrent_streams");
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  StreamOptions nb;
  nb.non_blocking = true;
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream(nb));
  CTS_ASSERT_OK(gate.Queue(device().default_stream(), gate_kernel));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(64));
  CTS_ASSERT_OK(MulAdd(s, x, 0, 9, 16));
  CTS_EXPECT_OK(s.synchronize());  // must not wait for the closed gate
  EXPECT_FALSE(gate.timed_out()) << "the non-blocking stream waited for the default stream";
  gate.open();
  CTS_ASSERT_OK(device().synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, 16));
  EXPECT_EQ(v, std::vector<uint32_t>(16, 9));
}

TEST_F(Streams, QueryReportsBusyThenIdle) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, s.query());
  EXPECT_FALSE(idle) << "query() says idle while a gated kernel waits";
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(idle, s.query());
  EXPECT_TRUE(idle);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(Streams, DestroyWithPendingWorkCompletesTheWork) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(256));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, 256));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(MulAdd(s, x, 1, 4, 64));
  CTS_ASSERT_OK(s.destroy());  // returns at once
  EXPECT_FALSE(gate.timed_out()) << "Stream::destroy waited for queued work";
  EXPECT_FALSE(s.valid());
  gate.open();
  CTS_ASSERT_OK(device().synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, 64));
  EXPECT_EQ(v, std::vector<uint32_t>(64, 4)) << "work queued before destroy() was lost";
}

TEST_F(Streams, WeightsShareTheDeviceByCounting) {
  CTS_REQUIRE_GATE();
  CTS_REQUIRE(info().stream_weights, "stream_weights");
  // Two streams of weight 3 and 1, saturated with small kernels that log
  // their stream id in completion order; both become ready at the same
  // moment (they wait on one gated event).  Among the first kCount
  // completions the weight-3 stream must have 2 to 4.5 times as many.
  //
  // The order depends on the host as well as on the scheduler: when the OS
  // preempts the worker running the weight-3 stream's item for longer than
  // the plugin holds the other worker back, the weight-1 stream runs
  // meanwhile, as a work-conserving scheduler must (seen on a shared
  // 2-core machine under a parallel build: ratios of 0.13 and 0.19 in 2 of
  // 21 runs).  So the experiment runs up to kAttempts times, 200 ms apart
  // (one stall of the host, e.g. a preempted VM, spoiled three back-to-back
  // attempts once, under ASan in CI: 88 vs 72, 80 vs 80, 62 vs 98), and
  // passes on the first ratio in range; a scheduler that ignores weights
  // gives about 1 every time and still fails.  Every launch must run
  // exactly once in every attempt.
  constexpr uint32_t kPerStream = 300, kCount = 160, kCapacity = 2 * kPerStream;
  constexpr int kAttempts = 5;
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel log_stream, kernel("log_stream"));
  StreamOptions heavy_options, light_options;
  heavy_options.weight = 3;
  light_options.weight = 1;
  std::string attempts;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CTS_ASSERT_OK_AND_ASSIGN(Buffer log, device().allocate((1 + kCapacity) * 4));
    CTS_ASSERT_OK(tessera::memset(log, 0, 0, (1 + kCapacity) * 4));
    CTS_ASSERT_OK_AND_ASSIGN(Stream heavy, device().create_stream(heavy_options));
    CTS_ASSERT_OK_AND_ASSIGN(Stream light, device().create_stream(light_options));
    CTS_ASSERT_OK_AND_ASSIGN(Stream gate_stream, device().create_stream());
    CTS_ASSERT_OK_AND_ASSIGN(Event start, device().create_event(TS_EVENT_DISABLE_TIMING));
    HostGate gate;
    CTS_ASSERT_OK(gate.Init(device()));
    CTS_ASSERT_OK(gate.Queue(gate_stream, gate_kernel));
    CTS_ASSERT_OK(gate_stream.record(start));
    CTS_ASSERT_OK(heavy.wait(start));
    CTS_ASSERT_OK(light.wait(start));
    for (uint32_t i = 0; i < kPerStream; ++i)
      for (uint32_t id : {3u, 1u})
        CTS_ASSERT_OK((id == 3 ? heavy : light)
                          .launch(log_stream, Dim(1), Dim(1),
                                  {KernelArg::buffer(log), KernelArg::scalar(id),
                                   KernelArg::scalar(kCapacity), KernelArg::scalar(2000u)}));
    gate.open();
    CTS_ASSERT_OK(heavy.synchronize());
    CTS_ASSERT_OK(light.synchronize());
    EXPECT_FALSE(gate.timed_out());
    CTS_ASSERT_OK_AND_ASSIGN(auto entries, Download<uint32_t>(log, 1 + kCapacity));
    ASSERT_EQ(entries[0], 2 * kPerStream) << "launches lost or repeated (attempt " << attempt + 1 << ")";
    uint32_t heavy_count = 0, light_count = 0;
    for (uint32_t k = 0; k < kCount; ++k) {
      heavy_count += entries[1 + k] == 3;
      light_count += entries[1 + k] == 1;
    }
    attempts += (attempts.empty() ? "" : ", ") + std::to_string(heavy_count) + " vs " +
                std::to_string(light_count);
    if (light_count == 0) continue;  // the weight-1 stream starved
    const double ratio = double(heavy_count) / light_count;
    if (ratio >= 2.0 && ratio <= 4.5) return;
  }
  ADD_FAILURE() << "weight-3 vs weight-1 completions among the first " << kCount
                << " were outside 2x..4.5x (or the weight-1 stream starved) in all " << kAttempts
                << " attempts: " << attempts;
}

}  // namespace
}  // namespace tessera::cts
