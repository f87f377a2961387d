// Streams: in-order execution, cross-stream events, default-stream
// sequencing, destruction with pending work, and weights.  Ordering is
// forced with HostGate (work stays pending until the test opens the gate),
// never with sleeps; weights are checked by counting completions.
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::HostGate;
using testing::Upload;

class StreamTest : public CpuTest {
 protected:
  // y = a*x + b on n floats.
  Status Affine(const Stream& s, const Buffer& dst, const Buffer& src,
                float a, float b, uint32_t n) {
    return s.launch(kernel("affine"), Groups(n), Lanes(),
                    {KernelArg::buffer(dst), KernelArg::buffer(src),
                     KernelArg::scalar(a), KernelArg::scalar(b),
                     KernelArg::scalar(n)});
  }
  Status Fill(const Stream& s, const Buffer& dst, float value, uint32_t n) {
    return s.launch(kernel("fill"), Groups(n), Lanes(),
                    {KernelArg::buffer(dst), KernelArg::scalar(value),
                     KernelArg::scalar(n)});
  }
  Status Gate(const Stream& s, const HostGate& gate) {
    return s.launch(kernel("gate"), {1, 1, 1}, {1, 1, 1}, gate.args());
  }
};

TEST_F(StreamTest, CreateWithOptions) {
  StreamOptions options;
  options.weight = 3;
  options.priority = 1;
  options.non_blocking = true;
  Stream s = NewStream(options);
  ASSERT_TRUE(s.valid());
  EXPECT_FALSE(s.is_default());
  EXPECT_EQ(s.device(), device());
  EXPECT_EQ(s.options().weight, 3u);
  EXPECT_EQ(s.options().priority, 1);
  EXPECT_TRUE(s.options().non_blocking);
  EXPECT_NE(s.raw(), nullptr);
  EXPECT_TRUE(device().default_stream().is_default());
}

TEST_F(StreamTest, InOrderChainOfKernels) {
  // Each kernel reads the previous one's result: x <- 2x + k, 50 times, in
  // place and ping-ponging between two buffers.  Any reordering changes the
  // result.
  constexpr uint32_t n = 256;
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  Stream s = NewStream();
  HostGate gate;  // queue everything before anything runs
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(Fill(s, a, 0.0f, n));
  double expected = 0.0;
  for (int k = 1; k <= 20; ++k) {
    const Buffer& src = (k % 2) ? a : b;
    const Buffer& dst = (k % 2) ? b : a;
    TS_ASSERT_OK(Affine(s, dst, src, 2.0f, float(k % 3), n));
    expected = 2.0 * expected + (k % 3);
  }
  gate.open();
  TS_ASSERT_OK(s.synchronize());
  EXPECT_FALSE(gate.timed_out());
  for (float v : Download<float>(a, n)) ASSERT_EQ(v, float(expected));
}

TEST_F(StreamTest, CopiesAndKernelsInterleaveInOrder) {
  constexpr uint32_t n = 128;
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(n * 4));
  Stream s = NewStream();
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(Fill(s, a, 1.0f, n));
  TS_ASSERT_OK(s.copy_async(b, a, n * 4));         // b = 1
  TS_ASSERT_OK(Affine(s, b, b, 3.0f, 1.0f, n));    // b = 4
  TS_ASSERT_OK(s.memset_async(a, 0, 0, n * 4));    // a = 0
  TS_ASSERT_OK(s.copy_async(pinned, b, n * 4));    // host = 4
  TS_ASSERT_OK(Affine(s, b, a, 1.0f, 5.0f, n));    // b = 5
  gate.open();
  TS_ASSERT_OK(s.synchronize());
  const float* host = static_cast<const float*>(pinned);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(host[i], 4.0f) << i;
  for (float v : Download<float>(b, n)) ASSERT_EQ(v, 5.0f);
  TS_EXPECT_OK(runtime_.pinned_free(pinned));
}

TEST_F(StreamTest, QueryReportsPendingWork) {
  Stream s = NewStream();
  TS_ASSERT_OK_AND_ASSIGN(bool idle, s.query());
  EXPECT_TRUE(idle);
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK_AND_ASSIGN(idle, s.query());
  EXPECT_FALSE(idle);
  gate.open();
  TS_ASSERT_OK(s.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(idle, s.query());
  EXPECT_TRUE(idle);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(StreamTest, TwoStreamsJoinedByEvent) {
  constexpr uint32_t n = 300;
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  Stream producer = NewStream(), consumer = NewStream();
  Event produced = NewEvent();
  HostGate gate;
  TS_ASSERT_OK(Gate(producer, gate));
  TS_ASSERT_OK(Fill(producer, x, 3.0f, n));
  TS_ASSERT_OK(producer.record(produced));
  TS_ASSERT_OK(consumer.wait(produced));
  TS_ASSERT_OK(Affine(consumer, y, x, 2.0f, 1.0f, n));  // y = 7 only after x
  gate.open();
  TS_ASSERT_OK(consumer.synchronize());
  for (float v : Download<float>(y, n)) ASSERT_EQ(v, 7.0f);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(StreamTest, DefaultStreamWaitsForBlockingStreams) {
  constexpr uint32_t n = 64;
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  TS_ASSERT_OK(memset(x, 0, 0, n * 4));
  Stream a = NewStream();  // blocking (default options)
  HostGate gate;
  TS_ASSERT_OK(Gate(a, gate));
  TS_ASSERT_OK(Fill(a, x, 5.0f, n));
  // Default-stream work issued later waits for everything before it.
  Stream def = device().default_stream();
  TS_ASSERT_OK(Affine(def, y, x, 1.0f, 1.0f, n));
  gate.open();
  TS_ASSERT_OK(def.synchronize());
  for (float v : Download<float>(y, n)) ASSERT_EQ(v, 6.0f);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(StreamTest, BlockingStreamsWaitForDefaultStream) {
  constexpr uint32_t n = 64;
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  TS_ASSERT_OK(memset(x, 0, 0, n * 4));
  Stream def = device().default_stream();
  Stream b = NewStream();  // blocking
  HostGate gate;
  TS_ASSERT_OK(Gate(def, gate));
  TS_ASSERT_OK(Fill(def, x, 2.0f, n));
  // Later work on a blocking stream waits for earlier default-stream work.
  TS_ASSERT_OK(Affine(b, y, x, 10.0f, 0.0f, n));
  gate.open();
  TS_ASSERT_OK(b.synchronize());
  for (float v : Download<float>(y, n)) ASSERT_EQ(v, 20.0f);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(StreamTest, DefaultStreamSequencesTwoBlockingStreams) {
  // A: x = 1 (gated).  default: x = 2x+1.  B: y = x + 10.  => y = 13.
  constexpr uint32_t n = 64;
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  Stream a = NewStream(), b = NewStream();
  HostGate gate;
  TS_ASSERT_OK(Gate(a, gate));
  TS_ASSERT_OK(Fill(a, x, 1.0f, n));
  TS_ASSERT_OK(Affine(device().default_stream(), x, x, 2.0f, 1.0f, n));
  TS_ASSERT_OK(Affine(b, y, x, 1.0f, 10.0f, n));
  gate.open();
  TS_ASSERT_OK(device().synchronize());
  for (float v : Download<float>(y, n)) ASSERT_EQ(v, 13.0f);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(StreamTest, NonBlockingStreamDoesNotWaitForDefaultStream) {
  Stream def = device().default_stream();
  StreamOptions options;
  options.non_blocking = true;
  Stream nb = NewStream(options);
  Buffer x = Alloc(64 * 4);
  HostGate gate;
  TS_ASSERT_OK(Gate(def, gate));
  TS_ASSERT_OK(Fill(nb, x, 4.0f, 64));
  // Completes while the default stream is still blocked by the gate.
  TS_ASSERT_OK(nb.synchronize());
  EXPECT_FALSE(gate.timed_out())
      << "the non-blocking stream waited for the default stream";
  gate.open();
  TS_ASSERT_OK(def.synchronize());
  for (float v : Download<float>(x, 64)) ASSERT_EQ(v, 4.0f);
}

TEST_F(StreamTest, DestroyedStreamIsInvalidHandle) {
  Stream s = NewStream();
  Stream alias = s;
  TS_ASSERT_OK(s.destroy());
  EXPECT_FALSE(s.valid());
  EXPECT_FALSE(alias.valid());
  Buffer x = Alloc(64);
  TS_EXPECT_CODE(alias.memset_async(x, 0, 0, 64), kInvalidHandle);
  TS_EXPECT_CODE(alias.synchronize(), kInvalidHandle);
  TS_EXPECT_CODE(alias.query(), kInvalidHandle);
  TS_EXPECT_CODE(alias.launch(kernel("empty"), {1, 1, 1}, {1, 1, 1}, {}),
                 kInvalidHandle);
  Event e = NewEvent();
  TS_EXPECT_CODE(alias.record(e), kInvalidHandle);
  TS_EXPECT_CODE(e.record(alias), kInvalidHandle);
  TS_EXPECT_CODE(alias.wait(e), kInvalidHandle);
  TS_EXPECT_CODE(alias.destroy(), kInvalidHandle);
}

TEST_F(StreamTest, DefaultStreamCannotBeDestroyed) {
  Stream def = device().default_stream();
  Status s = def.destroy();
  EXPECT_FALSE(s.ok());
  // Still usable.
  Buffer x = Alloc(64);
  TS_EXPECT_OK(def.memset_async(x, 0, 1, 64));
  TS_EXPECT_OK(def.synchronize());
}

TEST_F(StreamTest, DestroyWithPendingWorkReturnsAtOnceAndWorkCompletes) {
  constexpr uint32_t n = 128;
  Buffer x = Alloc(n * 4);
  TS_ASSERT_OK(memset(x, 0, 0, n * 4));
  Stream s = NewStream();
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(Fill(s, x, 9.0f, n));
  // Returns while the gate is still closed (if it waited for the queued
  // work, the gate would time out and the check below fails).
  TS_ASSERT_OK(s.destroy());
  EXPECT_FALSE(gate.timed_out()) << "Stream::destroy waited for queued work";
  gate.open();
  TS_ASSERT_OK(device().synchronize());
  for (float v : Download<float>(x, n)) ASSERT_EQ(v, 9.0f);
}

// Weighted scheduling: two streams of weight 3 and 1, both saturated with
// many small kernels that log their stream id in completion order.  Both
// become ready at the same moment (they wait on one gated event).  Among the
// first kCount completions the weight-3 stream must have between 2 and 4.5
// times as many as the weight-1 stream.
class StreamWeightTest : public StreamTest {
 protected:
  int NumThreads() const override { return 1; }  // if the plugin honours it
};

TEST_F(StreamWeightTest, CompletionsFollowWeights) {
  ASSERT_TRUE(device().info().stream_weights)
      << "the cpu plugin must report stream_weights";
  constexpr uint32_t kPerStream = 400;
  constexpr uint32_t kCount = 200;  // < kPerStream * 4/3: neither runs dry
  constexpr uint32_t kCapacity = 2 * kPerStream;
  Buffer log = Alloc((1 + kCapacity) * sizeof(uint32_t));
  TS_ASSERT_OK(memset(log, 0, 0, (1 + kCapacity) * sizeof(uint32_t)));

  StreamOptions heavy_options, light_options;
  heavy_options.weight = 3;
  light_options.weight = 1;
  Stream heavy = NewStream(heavy_options), light = NewStream(light_options);
  Stream gate_stream = NewStream();
  Event start = NewEvent(TS_EVENT_DISABLE_TIMING);
  HostGate gate;
  TS_ASSERT_OK(Gate(gate_stream, gate));
  TS_ASSERT_OK(gate_stream.record(start));
  TS_ASSERT_OK(heavy.wait(start));
  TS_ASSERT_OK(light.wait(start));

  Kernel log_stream = kernel("log_stream");
  const uint32_t spin = 2000;
  for (uint32_t i = 0; i < kPerStream; ++i) {
    TS_ASSERT_OK(heavy.launch(log_stream, {1, 1, 1}, {1, 1, 1},
                              {KernelArg::buffer(log), KernelArg::scalar(3u),
                               KernelArg::scalar(kCapacity),
                               KernelArg::scalar(spin)}));
    TS_ASSERT_OK(light.launch(log_stream, {1, 1, 1}, {1, 1, 1},
                              {KernelArg::buffer(log), KernelArg::scalar(1u),
                               KernelArg::scalar(kCapacity),
                               KernelArg::scalar(spin)}));
  }
  gate.open();
  TS_ASSERT_OK(heavy.synchronize());
  TS_ASSERT_OK(light.synchronize());
  EXPECT_FALSE(gate.timed_out());

  std::vector<uint32_t> entries = Download<uint32_t>(log, 1 + kCapacity);
  ASSERT_EQ(entries[0], 2 * kPerStream);  // every launch ran exactly once
  uint32_t heavy_count = 0, light_count = 0;
  for (uint32_t k = 0; k < kCount; ++k) {
    if (entries[1 + k] == 3) {
      ++heavy_count;
    } else if (entries[1 + k] == 1) {
      ++light_count;
    } else {
      ADD_FAILURE() << "bad log entry " << entries[1 + k] << " at " << k;
    }
  }
  ASSERT_GT(light_count, 0u) << "the weight-1 stream starved";
  double ratio = double(heavy_count) / double(light_count);
  EXPECT_GE(ratio, 2.0) << heavy_count << " vs " << light_count;
  EXPECT_LE(ratio, 4.5) << heavy_count << " vs " << light_count;
}

TEST_F(StreamWeightTest, EqualWeightsShareFairly) {
  constexpr uint32_t kPerStream = 200, kCount = 120, kCapacity = 2 * kPerStream;
  Buffer log = Alloc((1 + kCapacity) * sizeof(uint32_t));
  TS_ASSERT_OK(memset(log, 0, 0, (1 + kCapacity) * sizeof(uint32_t)));
  Stream a = NewStream(), b = NewStream(), gate_stream = NewStream();
  Event start = NewEvent(TS_EVENT_DISABLE_TIMING);
  HostGate gate;
  TS_ASSERT_OK(Gate(gate_stream, gate));
  TS_ASSERT_OK(gate_stream.record(start));
  TS_ASSERT_OK(a.wait(start));
  TS_ASSERT_OK(b.wait(start));
  Kernel log_stream = kernel("log_stream");
  for (uint32_t i = 0; i < kPerStream; ++i) {
    for (uint32_t id : {1u, 2u}) {
      TS_ASSERT_OK((id == 1 ? a : b).launch(
          log_stream, {1, 1, 1}, {1, 1, 1},
          {KernelArg::buffer(log), KernelArg::scalar(id),
           KernelArg::scalar(kCapacity), KernelArg::scalar(2000u)}));
    }
  }
  gate.open();
  TS_ASSERT_OK(device().synchronize());
  std::vector<uint32_t> entries = Download<uint32_t>(log, 1 + kCapacity);
  ASSERT_EQ(entries[0], 2 * kPerStream);
  uint32_t ones = 0;
  for (uint32_t k = 0; k < kCount; ++k) ones += entries[1 + k] == 1;
  EXPECT_GE(ones, kCount / 3);
  EXPECT_LE(ones, 2 * kCount / 3);
}

}  // namespace
}  // namespace tessera
