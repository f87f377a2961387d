// Area "graphs": stream capture (single stream and across streams joined by
// events), instantiate, replay == eager, replay many times, the unjoined
// capture error, and a GraphExec outliving its Graph.
#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Graphs : public CtsTest {
 protected:
  Status MulAdd(const Stream& s, const Buffer& x, uint32_t m, uint32_t a, uint64_t n,
                uint64_t offset = 0) {
    StatusOr<Kernel> k = kernel("mul_add_u32");
    if (!k.ok()) return k.status();
    const uint32_t group = GroupFor(*k, 32);
    return s.launch(*k, Dim(GroupsFor(n, group)), Dim(group),
                    {KernelArg::buffer(x, offset), KernelArg::scalar(m),
                     KernelArg::scalar(a), KernelArg::scalar(n)});
  }
  // The work of the cross-stream test, issued to (s0, s1), with events.
  Status TwoStreamWork(const Stream& s0, const Stream& s1, const Event& fork,
                       const Event& join, const Buffer& a, const Buffer& b, uint64_t n) {
    TESSERA_RETURN_IF_ERROR(s0.memset_async(a, 0, 0, n * 4));
    TESSERA_RETURN_IF_ERROR(MulAdd(s0, a, 1, 3, n));          // a = 3
    TESSERA_RETURN_IF_ERROR(s0.record(fork));
    TESSERA_RETURN_IF_ERROR(s1.wait(fork));                    // s1 joins
    TESSERA_RETURN_IF_ERROR(s1.copy_async(b, a, n * 4));       // b = 3
    TESSERA_RETURN_IF_ERROR(MulAdd(s1, b, 5, 1, n));           // b = 16
    TESSERA_RETURN_IF_ERROR(s1.record(join));
    TESSERA_RETURN_IF_ERROR(s0.wait(join));                    // joined back
    // Only after the join: s1's copy reads all of a, so s0 writing a
    // between fork and join would race with it.
    TESSERA_RETURN_IF_ERROR(MulAdd(s0, a, 2, 0, n));           // a = 6
    TESSERA_RETURN_IF_ERROR(s0.copy_async(MemoryRef(a, n * 2), MemoryRef(b), n * 2));
    return MulAdd(s0, a, 3, 1, n);  // a = 19 (first half) | 49
  }
};

#define CTS_REQUIRE_GRAPHS()                         \
  do {                                               \
    CTS_REQUIRE(info().graphs, "graphs");            \
    CTS_REQUIRE_KERNELS();                           \
  } while (0)

TEST_F(Graphs, CapturedWorkIsRecordedNotRun) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 256;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(MulAdd(s, x, 1, 7, n));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK(device().synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 0)) << "captured work ran during capture";
  EXPECT_GE(g.num_nodes(), 1u);
}

TEST_F(Graphs, ReplayEqualsEager) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 3000;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer eager, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer graphed, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  auto work = [&](const Buffer& x) -> Status {
    TESSERA_RETURN_IF_ERROR(s.memset_async(x, 0, 1, n * 4));
    for (uint32_t i = 0; i < 12; ++i) TESSERA_RETURN_IF_ERROR(MulAdd(s, x, 3 + i, i, n));
    return s.memset_async(x, 100, 0, 8);
  };
  CTS_ASSERT_OK(work(eager));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(work(graphed));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  EXPECT_GE(g.num_nodes(), 14u);
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_ASSERT_OK(s.launch(exec));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto want, Download<uint32_t>(eager, n));
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<uint32_t>(graphed, n));
  EXPECT_EQ(got, want);
}

TEST_F(Graphs, CaptureAcrossStreamsWithEventEdges) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 1024;
  CTS_ASSERT_OK_AND_ASSIGN(Stream s0, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event fork, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Event join, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
  // Eager first: the reference.
  CTS_ASSERT_OK(TwoStreamWork(s0, s1, fork, join, a, b, n));
  CTS_ASSERT_OK(s0.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto want_a, Download<uint32_t>(a, n));
  CTS_ASSERT_OK_AND_ASSIGN(auto want_b, Download<uint32_t>(b, n));
  for (uint64_t i = 0; i < n; ++i)
    ASSERT_EQ(want_a[i], i < n / 2 ? 19u : 49u) << "eager reference wrong at " << i;
  // Captured.
  CTS_ASSERT_OK(tessera::memset(a, 0, 0xEE, n * 4));
  CTS_ASSERT_OK(tessera::memset(b, 0, 0xEE, n * 4));
  CTS_ASSERT_OK(s0.begin_capture());
  CTS_ASSERT_OK(TwoStreamWork(s0, s1, fork, join, a, b, n));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s0.end_capture());
  EXPECT_GE(g.num_nodes(), 7u);
  EXPECT_GE(g.num_edges(), 2u) << "the cross-stream event edges were lost";
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_ASSERT_OK_AND_ASSIGN(Stream launcher, device().create_stream());
  for (int replay = 0; replay < 3; ++replay) {
    CTS_ASSERT_OK(launcher.launch(exec));
    CTS_ASSERT_OK(launcher.synchronize());
    CTS_ASSERT_OK_AND_ASSIGN(auto got_a, Download<uint32_t>(a, n));
    CTS_ASSERT_OK_AND_ASSIGN(auto got_b, Download<uint32_t>(b, n));
    EXPECT_EQ(got_a, want_a) << "replay " << replay;
    EXPECT_EQ(got_b, want_b) << "replay " << replay;
  }
}

TEST_F(Graphs, ReplayManyTimes) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 64;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(MulAdd(s, x, 1, 1, n));
  CTS_ASSERT_OK(MulAdd(s, x, 1, 2, n));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  constexpr uint32_t kReplays = 1000;
  for (uint32_t i = 0; i < kReplays; ++i) CTS_ASSERT_OK(s.launch(exec));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 3 * kReplays));
}

TEST_F(Graphs, ReplaysAreOrderedWithEagerWork) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 128;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(MulAdd(s, x, 2, 0, n));  // x *= 2
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  uint32_t want = 0;
  for (uint32_t i = 0; i < 10; ++i) {
    CTS_ASSERT_OK(MulAdd(s, x, 1, 1, n));  // x += 1, eager
    CTS_ASSERT_OK(s.launch(exec));         // x *= 2, replay
    want = (want + 1) * 2;
  }
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, want));
}

TEST_F(Graphs, ExecOutlivesItsGraph) {
  CTS_REQUIRE_GRAPHS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(16));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, 16));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(MulAdd(s, x, 1, 5, 4));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_ASSERT_OK(g.destroy());
  CTS_ASSERT_OK(s.launch(exec));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, 4));
  EXPECT_EQ(v, std::vector<uint32_t>(4, 5));
}

TEST_F(Graphs, UnjoinedCaptureIsAnError) {
  CTS_REQUIRE_GRAPHS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s0, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event fork, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(s0.begin_capture());
  CTS_ASSERT_OK(s0.record(fork));
  CTS_ASSERT_OK(s1.wait(fork));
  CTS_ASSERT_OK(MulAdd(s1, x, 1, 1, 16));
  // s1 never joined back.
  StatusOr<Graph> g = s0.end_capture();
  EXPECT_FALSE(g.ok()) << "end_capture accepted an unjoined stream";
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition) << g.status().ToString();
    EXPECT_FALSE(g.status().message().empty());
  }
  // Both streams are usable afterwards.
  CTS_EXPECT_OK(MulAdd(s0, x, 0, 1, 16));
  CTS_EXPECT_OK(MulAdd(s1, x, 0, 1, 16));
  CTS_EXPECT_OK(device().synchronize());
}

// A stream is joined back when the origin depends on its last work,
// however many streams the edge goes through (s1 -> s2 -> s0), and a
// stream that joined and issued nothing needs no join (CUDA's rules; the
// vulkan plugin refused both, the cpu plugin took them).
TEST_F(Graphs, JoinsAreTransitiveAndAnIdleJoinerNeedsNone) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 64;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s0, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s2, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream idle, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event fork, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Event hop, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Event join, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(s0.begin_capture());
  CTS_ASSERT_OK(MulAdd(s0, x, 1, 1, n));  // x = 1
  CTS_ASSERT_OK(s0.record(fork));
  CTS_ASSERT_OK(s1.wait(fork));
  CTS_ASSERT_OK(idle.wait(fork));  // joins, issues nothing
  CTS_ASSERT_OK(MulAdd(s1, x, 3, 0, n));  // x = 3
  CTS_ASSERT_OK(s1.record(hop));
  CTS_ASSERT_OK(s2.wait(hop));
  CTS_ASSERT_OK(MulAdd(s2, x, 1, 4, n));  // x = 7
  CTS_ASSERT_OK(s2.record(join));
  CTS_ASSERT_OK(s0.wait(join));  // s1 is joined back through s2
  CTS_ASSERT_OK(MulAdd(s0, x, 2, 0, n));  // x = 14
  StatusOr<Graph> g = s0.end_capture();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g->instantiate());
  CTS_ASSERT_OK(s0.launch(exec));
  CTS_ASSERT_OK(s0.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 14));
}

// Capture misuse every plugin refuses alike, FAILED_PRECONDITION: the
// default stream (it orders the blocking streams and synchronous copies:
// the vulkan plugin took it, and those stopped working), a graph launched
// into a capture (vulkan said UNSUPPORTED), and waiting on an event whose
// last record was inside a capture that has ended (the cpu plugin waited on
// the record before it).
TEST_F(Graphs, CaptureMisuseIsFailedPrecondition) {
  CTS_REQUIRE_GRAPHS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(256));
  CTS_EXPECT_ERROR(device().default_stream().begin_capture(), kFailedPrecondition);
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream other, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(s.memset_async(x, 0, 1, 256));
  CTS_ASSERT_OK(s.record(e));  // an eager record first
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(s.memset_async(x, 0, 2, 256));
  CTS_ASSERT_OK(s.record(e));  // then one inside the capture
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_EXPECT_ERROR(other.wait(e), kFailedPrecondition);
  {
    // The default stream cannot join a capture either (vulkan let it).
    CTS_ASSERT_OK_AND_ASSIGN(Stream origin, device().create_stream());
    CTS_ASSERT_OK_AND_ASSIGN(Event fork, device().create_event(TS_EVENT_DISABLE_TIMING));
    CTS_ASSERT_OK(origin.begin_capture());
    CTS_ASSERT_OK(origin.record(fork));
    CTS_EXPECT_ERROR(device().default_stream().wait(fork), kFailedPrecondition);
    CTS_ASSERT_OK(origin.end_capture().status());
  }
  CTS_ASSERT_OK(other.begin_capture());
  CTS_EXPECT_ERROR(other.launch(exec), kFailedPrecondition);
  CTS_ASSERT_OK(other.end_capture().status());
  CTS_ASSERT_OK(s.record(e));  // recorded again outside: usable again
  CTS_EXPECT_OK(other.wait(e));
  CTS_EXPECT_OK(device().synchronize());
}

// A capturing stream cannot wait on an event recorded outside the capture:
// the graph would replay without the dependency.  The wait is
// FAILED_PRECONDITION (docs/memory-model.md), the capture goes on, and a
// never-recorded event stays a no-op.  (The Vulkan plugin used to return OK
// and drop the edge.)
TEST_F(Graphs, WaitOnAnEventRecordedOutsideTheCaptureIsAnError) {
  CTS_REQUIRE(info().graphs, "graphs");
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(256));
  CTS_ASSERT_OK_AND_ASSIGN(Stream producer, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event outside, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Event never, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(producer.memset_async(x, 0, 1, 256));
  CTS_ASSERT_OK(producer.record(outside));
  CTS_ASSERT_OK(s.begin_capture());
  Status st = s.wait(outside);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition)
      << "a capturing stream waited on an event recorded outside the capture: "
      << st.ToString();
  EXPECT_FALSE(st.message().empty());
  CTS_EXPECT_OK(s.wait(never));  // never recorded: a no-op, also in a capture
  CTS_ASSERT_OK(s.memset_async(x, 0, 2, 256));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_ASSERT_OK(producer.synchronize());
  CTS_ASSERT_OK(s.launch(exec));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint8_t>(x, 256));
  EXPECT_EQ(v, std::vector<uint8_t>(256, 2));
}

// A graph keeps no buffer or executable alive.  Replaying one after an object
// it uses was destroyed must fail cleanly (FAILED_PRECONDITION, naming the
// object), not touch freed memory; the stream stays usable.  (Both plugins
// used to replay: the cpu plugin wrote freed memory, the Vulkan one
// submitted a command buffer naming a destroyed VkBuffer.)
TEST_F(Graphs, ReplayAfterABufferOrExecutableWasDestroyedIsAnError) {
  CTS_REQUIRE_GRAPHS();
  const uint64_t n = 64;
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  // A buffer.
  CTS_ASSERT_OK_AND_ASSIGN(Buffer kept, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer gone, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(kept, 0, 0, n * 4));
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(MulAdd(s, kept, 1, 1, n));
  CTS_ASSERT_OK(MulAdd(s, gone, 1, 1, n));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  CTS_ASSERT_OK(s.launch(exec));  // both alive: fine
  CTS_ASSERT_OK(gone.destroy());
  Status st = s.launch(exec);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition)
      << "replayed a graph whose buffer was destroyed: " << st.ToString();
  EXPECT_NE(st.message().find("buffer"), std::string::npos) << st.ToString();
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(kept, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 1)) << "the refused replay ran in part";

  // An executable.
  const KernelModule* module = ShippedModuleFor(info());
  ASSERT_NE(module, nullptr);
  CTS_ASSERT_OK_AND_ASSIGN(
      Executable exe,
      device().load_executable(module->format, KernelModulePath(*module, "mul_add_u32")));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, exe.kernel("mul_add_u32"));
  const uint32_t group = GroupFor(k, 32);
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(s.launch(k, Dim(GroupsFor(n, group)), Dim(group),
                         {KernelArg::buffer(kept), KernelArg::scalar(uint32_t{1}),
                          KernelArg::scalar(uint32_t{5}), KernelArg::scalar(n)}));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g2, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec2, g2.instantiate());
  CTS_ASSERT_OK(exe.destroy());
  st = s.launch(exec2);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition)
      << "replayed a graph whose executable was destroyed: " << st.ToString();
  EXPECT_NE(st.message().find("executable"), std::string::npos) << st.ToString();
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(v, Download<uint32_t>(kept, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 1));
}

}  // namespace
}  // namespace tessera::cts
