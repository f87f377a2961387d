// Area "events": record, wait across streams, query, synchronize, elapsed
// time, never-recorded events (docs/memory-model.md table), re-recording.
#include <chrono>
#include <thread>
#include "areas/sched_util.hpp"

namespace tessera::cts {
namespace {

class Events : public CtsTest {
 protected:
  Status DelayedStore(const Stream& s, const Buffer& dst, uint32_t value, uint32_t us) {
    StatusOr<Kernel> k = kernel("delayed_store");
    if (!k.ok()) return k.status();
    return s.launch(*k, Dim(1), Dim(1),
                    {KernelArg::buffer(dst), KernelArg::scalar(value), KernelArg::scalar(us)});
  }
  // ---- Stream_WriteTimestamp (ABI 1.3, optional)
  static constexpr uint64_t kClockSlackNs = 1000000;  // a device clock converted: 1 ms
  static uint64_t Now() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }
  bool TimestampsProvided() {
    const TsPluginApi* api = runtime().plugin_api();
    return api->struct_size >= TS_STRUCT_SIZE(TsPluginApi, Stream_WriteTimestamp) &&
           api->Stream_WriteTimestamp != nullptr;
  }
  std::string WriteTimestamp(const Stream& s, uint64_t* slot) {
    TsStream_WriteTimestamp_Args a{};
    a.struct_size = TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE;
    a.stream = s.raw();
    a.timestamp_ns = slot;
    return TakeError(runtime().plugin_api()->Stream_WriteTimestamp(&a));
  }
  static uint64_t ReadTimestamp(const uint64_t* slot) {
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  }
  // Two non-blocking streams: the gate queued on *a, *e recorded after it,
  // and *b waiting for *e (b's work is held behind the closed gate).
  Status WaitBehindGate(HostGate& gate, Stream* a, Stream* b, Event* e) {
    StatusOr<Kernel> k = kernel("gate");
    if (!k.ok()) return k.status();
    TESSERA_RETURN_IF_ERROR(gate.Init(device()));
    StreamOptions nb;
    nb.non_blocking = true;
    auto sa = device().create_stream(nb), sb = device().create_stream(nb);
    auto ev = device().create_event(TS_EVENT_DISABLE_TIMING);
    if (!sa.ok()) return sa.status();
    if (!sb.ok()) return sb.status();
    if (!ev.ok()) return ev.status();
    *a = *sa;
    *b = *sb;
    *e = *ev;
    TESSERA_RETURN_IF_ERROR(gate.Queue(*a, *k));
    TESSERA_RETURN_IF_ERROR(a->record(*e));
    return b->wait(*e);
  }
  Status CopyWord(const Stream& s, const Buffer& dst, const Buffer& src) {
    StatusOr<Kernel> k = kernel("copy_u32");
    if (!k.ok()) return k.status();
    return s.launch(*k, Dim(1), Dim(1),
                    {KernelArg::buffer(dst), KernelArg::buffer(src),
                     KernelArg::scalar(uint64_t(1))});
  }
};

TEST_F(Events, RecordQuerySynchronize) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(s.record(e));
  CTS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_FALSE(done) << "query() says complete while the recorded work waits";
  gate.open();
  CTS_ASSERT_OK(e.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_TRUE(done);
  EXPECT_FALSE(gate.timed_out());
}

// An event covers the work queued before its record, not what follows on
// the same stream (plugin.h, Event_Record): with a closed gate queued after
// the record, synchronizing the event returns, and a stream waiting on it
// runs.  (The vulkan plugin's event pointed at a batch that later work
// joined, and both waited for the gate.)
TEST_F(Events, AnEventDoesNotCoverWorkQueuedAfterIt) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer word, device().allocate(4));
  CTS_ASSERT_OK(tessera::memset(word, 0, 0, 4));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  StreamOptions nb;
  nb.non_blocking = true;
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream(nb));
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK(DelayedStore(s, word, 3, 0));
  CTS_ASSERT_OK(s.record(e));
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));  // after the record
  CTS_ASSERT_OK(e.synchronize());
  EXPECT_FALSE(gate.timed_out()) << "Event::synchronize waited for work queued after the record";
  // Destroying an event whose record is done while later work waits does
  // not wait for that work either.
  CTS_ASSERT_OK(e.destroy());
  EXPECT_FALSE(gate.timed_out()) << "Event::destroy waited for work queued after the record";
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  // Read last: a synchronous copy may queue behind the gate (one queue).
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(word, 1));
  EXPECT_EQ(v[0], 3u);
}

// Event::destroy returns at once, as cudaEventDestroy does, even while its
// record still waits behind a closed gate: the record completes later.
TEST_F(Events, DestroyDoesNotWaitForThePendingRecord) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());  // a timing event
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(s.record(e));
  CTS_ASSERT_OK(e.destroy());
  EXPECT_FALSE(gate.timed_out()) << "Event::destroy waited for the work before its record";
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
}

TEST_F(Events, WaitOrdersWorkAcrossStreams) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flag, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer out, device().allocate(4));
  CTS_ASSERT_OK(tessera::memset(flag, 0, 0, 4));
  CTS_ASSERT_OK(tessera::memset(out, 0, 0xff, 4));
  StreamOptions nb;
  nb.non_blocking = true;  // only the event orders them
  CTS_ASSERT_OK_AND_ASSIGN(Stream a, device().create_stream(nb));
  CTS_ASSERT_OK_AND_ASSIGN(Stream b, device().create_stream(nb));
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(DelayedStore(a, flag, 5, 30000));
  CTS_ASSERT_OK(a.record(e));
  CTS_ASSERT_OK(b.wait(e));
  CTS_ASSERT_OK(CopyWord(b, out, flag));
  CTS_ASSERT_OK(b.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(out, 1));
  EXPECT_EQ(v[0], 5u) << "work after Stream::wait ran before the event's work";
}

TEST_F(Events, WaitDoesNotBlockTheHost) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream a, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream b, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK(gate.Queue(a, gate_kernel));
  CTS_ASSERT_OK(a.record(e));
  CTS_ASSERT_OK(b.wait(e));  // must return while the gate is closed
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(4));
  CTS_ASSERT_OK(DelayedStore(b, x, 1, 0));  // queued behind the wait
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, b.query());
  EXPECT_FALSE(idle) << "work queued after a wait on a pending event already ran";
  EXPECT_FALSE(gate.timed_out());
  gate.open();
  CTS_ASSERT_OK(b.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_TRUE(done) << "b finished its wait before the event completed";
}

// A wait is work of the stream (as in CUDA) even with nothing queued after
// it: the stream is busy until the event completes, and synchronize
// returns after it.  (A program's communication stream ends this way: a
// collective provider synchronizes it and then reads the data.)
TEST_F(Events, AWaitAtTheEndOfAStreamIsPartOfItsWork) {
  CTS_REQUIRE_GATE();
  HostGate gate;
  Stream a, b;
  Event e;
  CTS_ASSERT_OK(WaitBehindGate(gate, &a, &b, &e));
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, b.query());
  EXPECT_FALSE(idle) << "a stream whose last operation waits for a pending event says it is idle";
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open();
  });
  Status synced = b.synchronize();
  StatusOr<bool> done = e.query();
  opener.join();
  CTS_ASSERT_OK(synced);
  CTS_ASSERT_OK(done.status());
  EXPECT_TRUE(*done) << "Stream::synchronize returned before the event the stream waits for completed";
  EXPECT_FALSE(gate.timed_out());
  CTS_ASSERT_OK(a.synchronize());
}

TEST_F(Events, ElapsedTimeBetweenTimingEvents) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flag, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event start, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event end, device().create_event());
  CTS_ASSERT_OK(s.record(start));
  CTS_ASSERT_OK(DelayedStore(s, flag, 1, 5000));
  CTS_ASSERT_OK(s.record(end));
  CTS_ASSERT_OK(end.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(double ms, Event::elapsed_ms(start, end));
  // Not a timing assertion: only that the value is a sane duration.
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60000.0);
  CTS_ASSERT_OK_AND_ASSIGN(double same, Event::elapsed_ms(start, start));
  EXPECT_EQ(same, 0.0);
}

TEST_F(Events, ElapsedTimeOfPendingEventIsNotReady) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event start, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event end, device().create_event());
  CTS_ASSERT_OK(s.record(start));
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(s.record(end));
  CTS_EXPECT_ERROR(Event::elapsed_ms(start, end), kNotReady);
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  CTS_EXPECT_OK(Event::elapsed_ms(start, end));
}

// Reading two completed events' times never waits for work queued after
// them, and a pending one is NOT_READY at once, even while the device is
// already running what came after (lavapipe's vkGetQueryPoolResults with
// WAIT_BIT waited for the whole queue: here, for the gate to give up).
TEST_F(Events, ElapsedTimeDoesNotWaitForLaterWork) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event start, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event end, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event late, device().create_event());
  CTS_ASSERT_OK(s.record(start));
  CTS_ASSERT_OK(s.record(end));
  CTS_ASSERT_OK(end.synchronize());
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(s.record(late));
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, s.query());  // the gate is on its way to the device
  EXPECT_FALSE(idle);
  CTS_EXPECT_OK(Event::elapsed_ms(start, end));
  CTS_EXPECT_ERROR(Event::elapsed_ms(start, late), kNotReady);
  CTS_EXPECT_ERROR(Event::elapsed_ms(late, end), kNotReady);
  EXPECT_FALSE(gate.timed_out()) << "Event::elapsed_ms waited for the gate queued after the events";
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  CTS_EXPECT_OK(Event::elapsed_ms(start, late));
}

TEST_F(Events, NeverRecordedEvent) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event other, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_TRUE(done) << "a never-recorded event is complete";
  CTS_EXPECT_OK(e.synchronize());
  // Waiting on it is a no-op: later work runs.
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(4));
  CTS_ASSERT_OK(s.wait(e));
  CTS_ASSERT_OK(DelayedStore(s, x, 3, 0));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, 1));
  EXPECT_EQ(v[0], 3u);
  CTS_ASSERT_OK(s.record(other));
  CTS_ASSERT_OK(other.synchronize());
  CTS_EXPECT_ERROR(Event::elapsed_ms(e, other), kFailedPrecondition);
  CTS_EXPECT_ERROR(Event::elapsed_ms(other, e), kFailedPrecondition);
}

TEST_F(Events, ReRecordingReplacesThePreviousRecord) {
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK(s.record(e));
  CTS_ASSERT_OK(e.synchronize());
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK(s.record(e));  // now behind the gate
  CTS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_FALSE(done) << "query() answered for the old record";
  gate.open();
  CTS_ASSERT_OK(e.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_TRUE(done);
  // And once more on another stream.
  CTS_ASSERT_OK_AND_ASSIGN(Stream t, device().create_stream());
  CTS_ASSERT_OK(t.record(e));
  CTS_EXPECT_OK(e.synchronize());
}

TEST_F(Events, RecordOnTheDefaultStream) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  Stream def = device().default_stream();
  CTS_ASSERT_OK(DelayedStore(def, x, 11, 1000));
  CTS_ASSERT_OK(def.record(e));
  CTS_ASSERT_OK(e.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(x, 1));
  EXPECT_EQ(v[0], 11u);
}

TEST_F(Events, ManyEventsOnManyStreams) {
  CTS_REQUIRE_KERNELS();
  // A chain s0 -> s1 -> ... -> s7 through events; the last sees the first.
  // Word i is at byte 256*i: a buffer argument's offset must respect the
  // storage-buffer offset alignment (Vulkan allows up to 256).
  constexpr uint64_t kStride = 256;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(8 * kStride));
  CTS_ASSERT_OK(tessera::memset(x, 0, 0, 8 * kStride));
  std::vector<Stream> streams;
  std::vector<Event> events;
  for (int i = 0; i < 8; ++i) {
    CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
    CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event(TS_EVENT_DISABLE_TIMING));
    streams.push_back(s);
    events.push_back(e);
  }
  CTS_ASSERT_OK_AND_ASSIGN(Kernel copy, kernel("copy_u32"));
  CTS_ASSERT_OK(DelayedStore(streams[0], x, 42, 20000));
  CTS_ASSERT_OK(streams[0].record(events[0]));
  for (int i = 1; i < 8; ++i) {
    CTS_ASSERT_OK(streams[i].wait(events[i - 1]));
    CTS_ASSERT_OK(streams[i].launch(copy, Dim(1), Dim(1),
                                    {KernelArg::buffer(x, kStride * i), KernelArg::buffer(x, kStride * (i - 1)),
                                     KernelArg::scalar(uint64_t(1))}));
    CTS_ASSERT_OK(streams[i].record(events[i]));
  }
  CTS_ASSERT_OK(events[7].synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto all, Download<uint32_t>(x, 8 * kStride / 4));
  std::vector<uint32_t> v;
  for (int i = 0; i < 8; ++i) v.push_back(all[i * kStride / 4]);
  EXPECT_EQ(v, std::vector<uint32_t>(8, 42));
}

// Stream_WriteTimestamp: the time the stream's work so far completed, in the
// host's steady clock, written into the caller's memory.  Bounds only, never
// a duration: a write lands between the moment its work could first
// complete and the return of the synchronize that covers it.
TEST_F(Events, WriteTimestampOnAnIdleStream) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  uint64_t slot = 0;
  ASSERT_EQ(WriteTimestamp(s, &slot), "");
  CTS_ASSERT_OK(s.synchronize());
  const uint64_t after = Now();
  const uint64_t t = ReadTimestamp(&slot);
  EXPECT_NE(t, 0u) << "not written by the time Stream_Synchronize returned";
  EXPECT_LE(t, after + kClockSlackNs) << "a completion time after the synchronize returned";
}

TEST_F(Events, WriteTimestampWaitsForTheWorkBeforeIt) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  uint64_t first = 0, second = 0;
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  ASSERT_EQ(WriteTimestamp(s, &first), "");
  ASSERT_EQ(WriteTimestamp(s, &second), "");  // two at one point: both written
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ReadTimestamp(&first), 0u) << "written while the work before it waits";
  const uint64_t opened = Now();
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  const uint64_t after = Now();
  EXPECT_FALSE(gate.timed_out());
  for (const uint64_t* slot : {&first, &second}) {
    const uint64_t t = ReadTimestamp(slot);
    ASSERT_NE(t, 0u) << "not written by the time Stream_Synchronize returned";
    EXPECT_GE(t + kClockSlackNs, opened) << "the work completed before the gate opened";
    EXPECT_LE(t, after + kClockSlackNs);
  }
}

// A point whose work completed is written without waiting for work queued
// after it (the vulkan plugin read it with vkGetQueryPoolResults, which
// lavapipe answers once the whole queue is idle: behind the gate, holding
// the device's lock).
TEST_F(Events, WriteTimestampDoesNotWaitForLaterWork) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  uint64_t slot = 0;
  ASSERT_EQ(WriteTimestamp(s, &slot), "");
  CTS_ASSERT_OK(s.record(e));
  CTS_ASSERT_OK(gate.Queue(s, gate_kernel));
  CTS_ASSERT_OK_AND_ASSIGN(bool idle, s.query());  // the gate is on its way to the device
  EXPECT_FALSE(idle);
  CTS_ASSERT_OK(e.synchronize());
  const uint64_t after = Now();
  EXPECT_FALSE(gate.timed_out()) << "the point was written only after the gate queued after it";
  const uint64_t t = ReadTimestamp(&slot);
  EXPECT_NE(t, 0u) << "not written by the time a later event's synchronize returned";
  EXPECT_LE(t, after + kClockSlackNs);
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
}

// A Stream::wait before the point is work before it: the time is not
// written while the waited-for work is held back (on a stream that is
// otherwise idle).
TEST_F(Events, WriteTimestampIncludesAWaitBeforeIt) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE_GATE();
  HostGate gate;
  Stream a, b;
  Event e;
  CTS_ASSERT_OK(WaitBehindGate(gate, &a, &b, &e));
  uint64_t slot = 0;
  ASSERT_EQ(WriteTimestamp(b, &slot), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ReadTimestamp(&slot), 0u) << "written while the stream still waits for the event";
  const uint64_t opened = Now();
  gate.open();
  CTS_ASSERT_OK(b.synchronize());
  const uint64_t t = ReadTimestamp(&slot);
  ASSERT_NE(t, 0u);
  EXPECT_GE(t + kClockSlackNs, opened);
  EXPECT_FALSE(gate.timed_out());
  CTS_ASSERT_OK(a.synchronize());
}

TEST_F(Events, WriteTimestampsFollowTheStreamOrder) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer flag, device().allocate(4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  uint64_t t[3] = {0, 0, 0};
  ASSERT_EQ(WriteTimestamp(s, &t[0]), "");
  CTS_ASSERT_OK(DelayedStore(s, flag, 1, 2000));
  ASSERT_EQ(WriteTimestamp(s, &t[1]), "");
  CTS_ASSERT_OK(DelayedStore(s, flag, 2, 2000));
  ASSERT_EQ(WriteTimestamp(s, &t[2]), "");
  CTS_ASSERT_OK(s.synchronize());
  for (int i = 0; i < 3; ++i) ASSERT_NE(ReadTimestamp(&t[i]), 0u) << i;
  EXPECT_LE(t[0], t[1]);
  EXPECT_LE(t[1], t[2]);
}

// TsKernel_Launch_Args.completion_ns: the launch's own completion time,
// written as Stream_WriteTimestamp right after it would be.  The launch is
// of the gate, so the kernel's end is known without timing it: the time is
// not written while the gate holds, and lies after the host opened it.
TEST_F(Events, LaunchWritesItsCompletionTime) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE_GATE();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, kernel("gate"));
  HostGate gate;
  CTS_ASSERT_OK(gate.Init(device()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  const uint32_t limit_ms = 10000;
  TsKernelArg raw[3];
  TsKernel_Launch_Args a{};
  a.struct_size = TS_KERNEL_LAUNCH_ARGS_STRUCT_SIZE;
  a.stream = s.raw();
  gate.FillLaunch(gate_kernel, &a, raw, &limit_ms);
  uint64_t slot = 0;
  a.completion_ns = &slot;
  ASSERT_EQ(TakeError(runtime().plugin_api()->Kernel_Launch(&a)), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ReadTimestamp(&slot), 0u) << "written while the kernel waits for the gate";
  const uint64_t opened = Now();
  gate.open();
  CTS_ASSERT_OK(s.synchronize());
  const uint64_t after = Now();
  EXPECT_FALSE(gate.timed_out());
  const uint64_t t = ReadTimestamp(&slot);
  ASSERT_NE(t, 0u) << "not written by the time Stream_Synchronize returned";
  EXPECT_GE(t + kClockSlackNs, opened) << "the completion time is before the kernel finished";
  EXPECT_LE(t, after + kClockSlackNs);
}

TEST_F(Events, WriteTimestampWhileCapturingIsRefused) {
  CTS_REQUIRE(TimestampsProvided(), "entry point Stream_WriteTimestamp");
  CTS_REQUIRE(info().graphs, "graphs");
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.begin_capture());
  uint64_t slot = 0;
  const std::string err = WriteTimestamp(s, &slot);
  EXPECT_EQ(err.rfind("code " + std::to_string(TS_ERROR_FAILED_PRECONDITION) + ":", 0), 0u)
      << "got: " << (err.empty() ? "success" : err);
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  (void)g;
}

}  // namespace
}  // namespace tessera::cts
