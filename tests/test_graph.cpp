// Graphs: capture kernels and copies on two streams joined with events,
// instantiate once, launch many times; the result equals eager execution.
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Iota;
using testing::Upload;

constexpr uint32_t kN = 200;

class GraphTest : public CpuTest {
 protected:
  struct Buffers {
    Buffer x, y, z, w, out, out_copy;
  };
  Buffers MakeBuffers() {
    Buffers b{Alloc(kN * 4), Alloc(kN * 4), Alloc(kN * 4),
              Alloc(kN * 4), Alloc(kN * 4), Alloc(kN * 4)};
    Upload(b.x, Iota(kN));
    for (const Buffer* buf : {&b.y, &b.z, &b.w, &b.out, &b.out_copy})
      EXPECT_TRUE(memset(*buf, 0, 0, kN * 4).ok());
    return b;
  }
  Status Add(const Stream& s, const Buffer& dst, const Buffer& src, float v) {
    return s.launch(kernel("add"), Groups(kN), Lanes(),
                    {KernelArg::buffer(dst), KernelArg::buffer(src),
                     KernelArg::scalar(v), KernelArg::scalar(kN)});
  }
  // One iteration of the workload; five nodes:
  //   1 (s1) x += 1            fork: e_fork
  //   2 (s2) z = x + 10        3 (s1) w = x * 2 (affine)
  //   join: e_join             4 (s1) out = z + w
  //   5 (s1) out_copy <- out (device-to-device copy)
  // Edges: 1->2, 1->3, 2->4, 3->4, 4->5.
  Status Issue(const Stream& s1, const Stream& s2, const Event& e_fork,
               const Event& e_join, const Buffers& b) {
    TESSERA_RETURN_IF_ERROR(Add(s1, b.x, b.x, 1.0f));
    TESSERA_RETURN_IF_ERROR(s1.record(e_fork));
    TESSERA_RETURN_IF_ERROR(s2.wait(e_fork));
    TESSERA_RETURN_IF_ERROR(Add(s2, b.z, b.x, 10.0f));
    TESSERA_RETURN_IF_ERROR(s1.launch(
        kernel("affine"), Groups(kN), Lanes(),
        {KernelArg::buffer(b.w), KernelArg::buffer(b.x),
         KernelArg::scalar(2.0f), KernelArg::scalar(0.0f),
         KernelArg::scalar(kN)}));
    TESSERA_RETURN_IF_ERROR(s2.record(e_join));
    TESSERA_RETURN_IF_ERROR(s1.wait(e_join));
    TESSERA_RETURN_IF_ERROR(s1.launch(
        kernel("sum2"), Groups(kN), Lanes(),
        {KernelArg::buffer(b.out), KernelArg::buffer(b.z),
         KernelArg::buffer(b.w), KernelArg::scalar(kN)}));
    return s1.copy_async(b.out_copy, b.out, kN * 4);
  }
};

TEST_F(GraphTest, DeviceSupportsGraphs) {
  EXPECT_TRUE(device().info().graphs);
}

TEST_F(GraphTest, CaptureInstantiateLaunchEqualsEager) {
  constexpr int kLaunches = 10;
  Stream s1 = NewStream(), s2 = NewStream();
  Event e_fork = NewEvent(TS_EVENT_DISABLE_TIMING);
  Event e_join = NewEvent(TS_EVENT_DISABLE_TIMING);

  // Eager reference.
  Buffers eager = MakeBuffers();
  for (int i = 0; i < kLaunches; ++i)
    TS_ASSERT_OK(Issue(s1, s2, e_fork, e_join, eager));
  TS_ASSERT_OK(device().synchronize());

  // Captured.
  Buffers captured = MakeBuffers();
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(Issue(s1, s2, e_fork, e_join, captured));
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s1.end_capture());
  // Capturing recorded the work; nothing ran.
  for (float v : Download<float>(captured.out_copy, kN)) ASSERT_EQ(v, 0.0f);
  auto x_after_capture = Download<float>(captured.x, kN);
  EXPECT_EQ(x_after_capture, Iota(kN));

  TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, graph.instantiate());
  for (int i = 0; i < kLaunches; ++i) TS_ASSERT_OK(s1.launch(exec));
  TS_ASSERT_OK(s1.synchronize());

  EXPECT_EQ(Download<float>(captured.x, kN), Download<float>(eager.x, kN));
  EXPECT_EQ(Download<float>(captured.out_copy, kN),
            Download<float>(eager.out_copy, kN));
  // And against the closed form: x_i = i + L, out = (x + 10) + 2x.
  auto out = Download<float>(captured.out_copy, kN);
  for (uint32_t i = 0; i < kN; ++i) {
    float x = float(i) + kLaunches;
    ASSERT_EQ(out[i], (x + 10.0f) + 2.0f * x) << i;
  }
}

TEST_F(GraphTest, NodeAndEdgeCounts) {
  Stream s1 = NewStream(), s2 = NewStream();
  Event e_fork = NewEvent(), e_join = NewEvent();
  Buffers b = MakeBuffers();
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(Issue(s1, s2, e_fork, e_join, b));
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s1.end_capture());
  EXPECT_TRUE(graph.valid());
  EXPECT_EQ(graph.num_nodes(), 5u);  // 4 kernels + 1 copy; events are edges
  // The five dependencies of the DAG (1->2, 1->3, 2->4, 3->4, 4->5) at least;
  // an implementation may keep redundant ones, but not more than all pairs.
  EXPECT_GE(graph.num_edges(), 5u);
  EXPECT_LE(graph.num_edges(), 10u);
}

TEST_F(GraphTest, GraphLaunchIsOrderedOnItsStream) {
  Stream s1 = NewStream(), s2 = NewStream();
  Event e_fork = NewEvent(), e_join = NewEvent();
  Buffers b = MakeBuffers();
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(Issue(s1, s2, e_fork, e_join, b));
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s1.end_capture());
  TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, graph.instantiate());
  // The graph can be destroyed once instantiated.
  TS_EXPECT_OK(graph.destroy());
  Stream s3 = NewStream();
  testing::HostGate gate;
  TS_ASSERT_OK(s3.launch(kernel("gate"), {1, 1, 1}, {1, 1, 1}, gate.args()));
  TS_ASSERT_OK(s3.launch(exec));  // after the gate
  TS_ASSERT_OK(Add(s3, b.y, b.out_copy, 0.5f));  // after the graph
  gate.open();
  TS_ASSERT_OK(s3.synchronize());
  auto y = Download<float>(b.y, kN);
  for (uint32_t i = 0; i < kN; ++i) {
    float x = float(i) + 1.0f;
    ASSERT_EQ(y[i], (x + 10.0f) + 2.0f * x + 0.5f) << i;
  }
}

TEST_F(GraphTest, UnjoinedCaptureIsAnError) {
  Stream s1 = NewStream(), s2 = NewStream();
  Event fork = NewEvent();
  Buffer x = Alloc(kN * 4), y = Alloc(kN * 4);
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(s1.memset_async(x, 0, 1, kN * 4));
  TS_ASSERT_OK(s1.record(fork));
  TS_ASSERT_OK(s2.wait(fork));  // s2 joins the capture ...
  TS_ASSERT_OK(Add(s2, y, x, 1.0f));
  auto graph = s1.end_capture();  // ... and is never joined back
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kFailedPrecondition)
      << graph.status().ToString();
}

TEST_F(GraphTest, EndCaptureWithoutBeginIsAnError) {
  Stream s = NewStream();
  EXPECT_FALSE(s.end_capture().ok());
}

TEST_F(GraphTest, DestroyedGraphExecIsInvalidHandle) {
  Stream s = NewStream();
  Buffer x = Alloc(64);
  TS_ASSERT_OK(s.begin_capture());
  TS_ASSERT_OK(s.memset_async(x, 0, 1, 64));
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s.end_capture());
  TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, graph.instantiate());
  TS_ASSERT_OK(exec.destroy());
  EXPECT_FALSE(exec.valid());
  TS_EXPECT_CODE(s.launch(exec), kInvalidHandle);
}

// A captured copy of pinned (Host_Allocate) or registered host memory
// notes the range: replaying it after pinned_free / unregister_host is
// FAILED_PRECONDITION naming it, never a copy from freed memory (the cpu
// plugin segfaulted; vulkan already refused).
TEST_F(GraphTest, CopyOfHostMemoryFreedAfterCaptureIsRefused) {
  for (const bool registered : {false, true}) {
    SCOPED_TRACE(registered ? "register_host" : "pinned_malloc");
    Stream s = NewStream();
    const size_t n = 1 << 20;
    Buffer b = Alloc(n);
    std::vector<char> mine;
    void* host = nullptr;
    if (registered) {
      mine.assign(n, 1);
      host = mine.data();
      TS_ASSERT_OK(runtime_.register_host(host, n));
    } else {
      TS_ASSERT_OK_AND_ASSIGN(host, runtime_.pinned_malloc(n));
      std::memset(host, 1, n);
    }
    TS_ASSERT_OK(s.begin_capture());
    TS_ASSERT_OK(s.copy_async(b, host, n));
    TS_ASSERT_OK_AND_ASSIGN(Graph graph, s.end_capture());
    TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, graph.instantiate());
    TS_ASSERT_OK(s.launch(exec));
    TS_ASSERT_OK(s.synchronize());
    TS_ASSERT_OK(registered ? runtime_.unregister_host(host) : runtime_.pinned_free(host));
    Status again = s.launch(exec);
    EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
    TS_EXPECT_CONTAINS(again.message(), registered ? "registered host memory" : "pinned host memory");
    TS_EXPECT_OK(s.synchronize());
  }
}

// Destroying a stream that is capturing: the plugin refuses, and the
// handle stays valid so the capture can still be ended (the core had
// invalidated it: end_capture said INVALID_HANDLE, and a stream that had
// joined stayed capturing for good, dropping the work issued to it).
TEST_F(GraphTest, DestroyingACapturingStreamKeepsItsHandle) {
  Stream s1 = NewStream(), s2 = NewStream();
  Event fork = NewEvent(), join = NewEvent();
  Buffer x = Alloc(kN * 4);
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(s1.record(fork));
  TS_ASSERT_OK(s2.wait(fork));
  TS_ASSERT_OK(s2.memset_async(x, 0, 1, kN * 4));
  TS_ASSERT_OK(s2.record(join));
  TS_ASSERT_OK(s1.wait(join));
  TS_EXPECT_CODE(s1.destroy(), kFailedPrecondition);
  EXPECT_TRUE(s1.valid());
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s1.end_capture());
  EXPECT_EQ(graph.num_nodes(), 1u);
  TS_EXPECT_OK(s1.destroy());
  EXPECT_FALSE(s1.valid());
  TS_EXPECT_OK(s2.synchronize());  // s2 is no longer capturing
}

// The last handle of a capturing stream dropped: the capture is ended and
// its graph discarded, so a stream that joined it works again.
TEST_F(GraphTest, DroppingACapturingStreamEndsItsCapture) {
  Stream s2 = NewStream();
  Buffer x = Alloc(kN * 4);
  {
    Stream s1 = NewStream();
    Event fork = NewEvent();
    TS_ASSERT_OK(s1.begin_capture());
    TS_ASSERT_OK(s1.record(fork));
    TS_ASSERT_OK(s2.wait(fork));  // s2 joins, and is never joined back
  }
  TS_ASSERT_OK(s2.memset_async(x, 0, 7, kN * 4));  // runs: s2 is not capturing
  TS_ASSERT_OK(s2.synchronize());
  EXPECT_EQ(Download<uint8_t>(x, 1)[0], 7);
}

// The host pointer of a HOST_PINNED buffer is pinned host memory too: a
// captured copy through it notes the buffer, and replaying after the
// buffer is destroyed is refused (it copied from unmapped memory).
TEST_F(GraphTest, CopyThroughAPinnedBuffersHostPointerNotesTheBuffer) {
  Stream s = NewStream();
  const size_t n = 1 << 20;
  Buffer b = Alloc(n);
  Buffer pinned = Alloc(n, TS_BUFFER_HOST_PINNED);
  ASSERT_NE(pinned.host_pointer(), nullptr);
  TS_ASSERT_OK(s.begin_capture());
  TS_ASSERT_OK(s.copy_async(b, pinned.host_pointer(), n));
  TS_ASSERT_OK_AND_ASSIGN(Graph graph, s.end_capture());
  TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, graph.instantiate());
  TS_ASSERT_OK(s.launch(exec));
  TS_ASSERT_OK(s.synchronize());
  TS_ASSERT_OK(pinned.destroy());
  Status again = s.launch(exec);
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
  TS_EXPECT_CONTAINS(again.message(), "through its host pointer");
  TS_EXPECT_OK(s.synchronize());
}

class GraphTwoDevicesTest : public GraphTest {
 protected:
  int NumDevices() const override { return 2; }
};

// A graph replays on its capture's device: a stream of another device that
// would join (its work replayed where its device's synchronize does not
// wait: a stale read after Device::synchronize) is refused, naming both.
TEST_F(GraphTwoDevicesTest, AStreamOfAnotherDeviceCannotJoinACapture) {
  Stream s0 = NewStream({}, 0), s1 = NewStream({}, 1);
  Event fork = NewEvent(0, 0);
  Buffer x = Alloc(kN * 4);
  TS_ASSERT_OK(s0.begin_capture());
  TS_ASSERT_OK(s0.memset_async(x, 0, 1, kN * 4));
  TS_ASSERT_OK(s0.record(fork));
  Status join = s1.wait(fork);
  EXPECT_EQ(join.code(), StatusCode::kFailedPrecondition) << join.ToString();
  TS_EXPECT_CONTAINS(join.message(), "a stream of device 1 cannot join a capture begun on device 0");
  TS_EXPECT_OK(s0.end_capture().status());
}

// Buffer::destroy waits for work on every device's streams that uses the
// buffer (peer access), not only its own device's: the copy below ran from
// unmapped memory (SIGSEGV) when it waited for device 0 alone.
TEST_F(GraphTwoDevicesTest, DestroyWaitsForAnotherDevicesWorkOnTheBuffer) {
  Stream s1 = NewStream({}, 1);
  const uint64_t n = 64ull << 20;  // mmap'ed: freed memory is unmapped
  Buffer a = Alloc(n, TS_BUFFER_DEVICE, 0);
  Buffer b = Alloc(n, TS_BUFFER_DEVICE, 1);
  TS_ASSERT_OK(memset(a, 0, 7, n));
  testing::HostGate gate;
  TS_ASSERT_OK(s1.launch(kernel("gate", 1), {1, 1, 1}, {1, 1, 1}, gate.args()));
  TS_ASSERT_OK(s1.copy_async(b, a, n));  // device 1 reads device 0's buffer
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
  });
  TS_EXPECT_OK(a.destroy());  // returns once the copy is done
  opener.join();
  TS_ASSERT_OK(s1.synchronize());
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(Download<uint8_t>(b, 1)[0], 7);
}

}  // namespace
}  // namespace tessera
