// Events: record / query / synchronize / elapsed time, the semantics of an
// event never recorded, re-recording, destroyed events and DISABLE_TIMING.
// Elapsed times are checked for sanity (>= 0), never against a duration.
#include <chrono>
#include <thread>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::HostGate;

class EventTest : public CpuTest {
 protected:
  Status Gate(const Stream& s, const HostGate& gate) {
    return s.launch(kernel("gate"), {1, 1, 1}, {1, 1, 1}, gate.args());
  }
};

TEST_F(EventTest, RecordQuerySynchronize) {
  Stream s = NewStream();
  Event e = NewEvent();
  ASSERT_TRUE(e.valid());
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(e.record(s));
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_FALSE(done);  // the gate is closed: the event cannot be complete
  gate.open();
  TS_ASSERT_OK(e.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_TRUE(done);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(EventTest, StreamRecordIsEventRecord) {
  Stream s = NewStream();
  Event e = NewEvent();
  TS_ASSERT_OK(s.record(e));
  TS_ASSERT_OK(e.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_TRUE(done);
}

// Forward: the time the spin took (>= 0).  The events passed in the other
// order: the same time negated, as cuEventElapsedTime gives it (the core
// took a negative answer for a broken plugin).
TEST_F(EventTest, ElapsedTimeIsSignedByTheEventsOrder) {
  Stream s = NewStream();
  Event start = NewEvent(), end = NewEvent();
  TS_ASSERT_OK(start.record(s));
  TS_ASSERT_OK(s.launch(kernel("spin_us"), {1, 1, 1}, {1, 1, 1},
                        {KernelArg::scalar(200u)}));
  TS_ASSERT_OK(end.record(s));
  TS_ASSERT_OK(end.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(double forward, Event::elapsed_ms(start, end));
  TS_ASSERT_OK_AND_ASSIGN(double backward, Event::elapsed_ms(end, start));
  EXPECT_GT(forward, 0.0);
  EXPECT_DOUBLE_EQ(backward, -forward);
}

TEST_F(EventTest, ElapsedTimeOfPendingEventIsNotReady) {
  Stream s = NewStream();
  Event start = NewEvent(), end = NewEvent();
  HostGate gate;
  TS_ASSERT_OK(start.record(s));
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(end.record(s));
  TS_EXPECT_CODE(Event::elapsed_ms(start, end), kNotReady);
  gate.open();
  TS_ASSERT_OK(end.synchronize());
  TS_EXPECT_OK(Event::elapsed_ms(start, end));
}

TEST_F(EventTest, NeverRecordedEvent) {
  Event e = NewEvent();
  // query: complete.
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_TRUE(done);
  // synchronize: returns at once.
  TS_EXPECT_OK(e.synchronize());
  // wait: a no-op; the stream still runs its work.
  Stream s = NewStream();
  TS_EXPECT_OK(s.wait(e));
  Buffer x = Alloc(64);
  TS_EXPECT_OK(s.memset_async(x, 0, 5, 64));
  TS_EXPECT_OK(s.synchronize());
  for (uint8_t b : testing::Download<uint8_t>(x, 64)) EXPECT_EQ(b, 5);
  // elapsed: FAILED_PRECONDITION, with either event unrecorded.
  Event recorded = NewEvent();
  TS_ASSERT_OK(recorded.record(s));
  TS_ASSERT_OK(recorded.synchronize());
  TS_EXPECT_CODE(Event::elapsed_ms(e, recorded), kFailedPrecondition);
  TS_EXPECT_CODE(Event::elapsed_ms(recorded, e), kFailedPrecondition);
  TS_EXPECT_CODE(Event::elapsed_ms(e, e), kFailedPrecondition);
}

TEST_F(EventTest, ReRecordingReplacesTheCapturedWork) {
  Stream s = NewStream();
  Event e = NewEvent();
  TS_ASSERT_OK(e.record(s));
  TS_ASSERT_OK(e.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_TRUE(done);
  // Record again behind pending work: now it is incomplete.
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(e.record(s));
  TS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_FALSE(done);
  gate.open();
  TS_ASSERT_OK(e.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_TRUE(done);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(EventTest, ReRecordingOnAnotherStream) {
  Stream a = NewStream(), b = NewStream();
  Event e = NewEvent();
  HostGate gate_a;
  TS_ASSERT_OK(Gate(a, gate_a));
  TS_ASSERT_OK(e.record(a));
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_FALSE(done);
  // Re-recorded on an idle stream: it now captures b's (empty) work only.
  TS_ASSERT_OK(e.record(b));
  TS_ASSERT_OK(e.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(done, e.query());
  EXPECT_TRUE(done);
  EXPECT_FALSE(gate_a.timed_out()) << "the event still waited for stream a";
  gate_a.open();
  TS_ASSERT_OK(a.synchronize());
}

TEST_F(EventTest, WaitOrdersAcrossStreamsOnlyAfterRecord) {
  // b waits for the event recorded on a; a later re-record of the event does
  // not change what b already waits for.
  constexpr uint32_t n = 64;
  Buffer x = Alloc(n * 4), y = Alloc(n * 4);
  Stream a = NewStream(), b = NewStream();
  Event e = NewEvent();
  HostGate gate;
  TS_ASSERT_OK(Gate(a, gate));
  TS_ASSERT_OK(a.launch(kernel("fill"), {2, 1, 1}, {32, 1, 1},
                        {KernelArg::buffer(x), KernelArg::scalar(8.0f),
                         KernelArg::scalar(n)}));
  TS_ASSERT_OK(e.record(a));
  TS_ASSERT_OK(b.wait(e));
  TS_ASSERT_OK(b.launch(kernel("add"), {2, 1, 1}, {32, 1, 1},
                        {KernelArg::buffer(y), KernelArg::buffer(x),
                         KernelArg::scalar(1.0f), KernelArg::scalar(n)}));
  TS_ASSERT_OK(e.record(b));  // re-record; b's wait is already queued
  gate.open();
  TS_ASSERT_OK(b.synchronize());
  for (float v : testing::Download<float>(y, n)) ASSERT_EQ(v, 9.0f);
}

// A record adds no marker of its own where it can: on the cpu plugin it
// takes the completion of the stream's last queued operation.  These pin
// what that must keep: the time is when that operation completes (not
// when the record was called), a Stream::wait queued before the record
// still holds the event back, and so do the default stream's rules.
TEST_F(EventTest, RecordBehindPendingWorkIsTimedWhenTheWorkCompletes) {
  Stream s = NewStream();
  Event start = NewEvent(), end = NewEvent();
  TS_ASSERT_OK(start.record(s));  // idle stream: complete at once
  HostGate gate;
  TS_ASSERT_OK(Gate(s, gate));
  TS_ASSERT_OK(end.record(s));
  // Only a lower bound: the gate stays closed at least this long.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  TS_ASSERT_OK_AND_ASSIGN(bool done, end.query());
  EXPECT_FALSE(done);
  gate.open();
  TS_ASSERT_OK(end.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(double ms, Event::elapsed_ms(start, end));
  EXPECT_GE(ms, 20.0) << "end took the time of its record call, not of the "
                         "completion of the work before it";
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(EventTest, RecordAfterAWaitIncludesTheWait) {
  Stream a = NewStream(), b = NewStream();
  Event on_a = NewEvent(), on_b = NewEvent();
  HostGate gate;
  TS_ASSERT_OK(Gate(a, gate));
  TS_ASSERT_OK(on_a.record(a));
  TS_ASSERT_OK(b.wait(on_a));  // b is otherwise idle
  TS_ASSERT_OK(on_b.record(b));
  TS_ASSERT_OK_AND_ASSIGN(bool done, on_b.query());
  EXPECT_FALSE(done) << "the record on b dropped b's wait for a";
  // And a stream waiting for on_b waits for a's gate too.
  Stream c = NewStream();
  Event on_c = NewEvent();
  TS_ASSERT_OK(c.wait(on_b));
  TS_ASSERT_OK(on_c.record(c));
  TS_ASSERT_OK_AND_ASSIGN(done, on_c.query());
  EXPECT_FALSE(done);
  gate.open();
  TS_ASSERT_OK(on_c.synchronize());
  TS_ASSERT_OK_AND_ASSIGN(done, on_b.query());
  EXPECT_TRUE(done);
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(EventTest, RecordOnABlockingStreamWaitsForTheDefaultStream) {
  Stream def = device().default_stream();
  Stream s = NewStream();  // blocking: ordered after the default stream
  Event e = NewEvent();
  HostGate gate;
  TS_ASSERT_OK(Gate(def, gate));
  TS_ASSERT_OK(e.record(s));
  TS_ASSERT_OK_AND_ASSIGN(bool done, e.query());
  EXPECT_FALSE(done) << "the record skipped the default stream's rule";
  gate.open();
  TS_ASSERT_OK(e.synchronize());
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(EventTest, DestroyedEventIsInvalidHandle) {
  Stream s = NewStream();
  Event e = NewEvent();
  Event alias = e;
  TS_ASSERT_OK(e.destroy());
  EXPECT_FALSE(e.valid());
  EXPECT_FALSE(alias.valid());
  TS_EXPECT_CODE(alias.record(s), kInvalidHandle);
  TS_EXPECT_CODE(alias.query(), kInvalidHandle);
  TS_EXPECT_CODE(alias.synchronize(), kInvalidHandle);
  TS_EXPECT_CODE(s.wait(alias), kInvalidHandle);
  TS_EXPECT_CODE(s.record(alias), kInvalidHandle);
  Event other = NewEvent();
  TS_ASSERT_OK(other.record(s));
  TS_EXPECT_CODE(Event::elapsed_ms(alias, other), kInvalidHandle);
  TS_EXPECT_CODE(alias.destroy(), kInvalidHandle);
}

TEST_F(EventTest, DisableTimingMakesElapsedAnError) {
  Stream s = NewStream();
  Event start = NewEvent(TS_EVENT_DISABLE_TIMING);
  Event end = NewEvent(TS_EVENT_DISABLE_TIMING);
  Event timed = NewEvent();
  TS_ASSERT_OK(start.record(s));
  TS_ASSERT_OK(timed.record(s));
  TS_ASSERT_OK(end.record(s));
  TS_ASSERT_OK(s.synchronize());
  auto ms = Event::elapsed_ms(start, end);
  EXPECT_FALSE(ms.ok());
  EXPECT_FALSE(Event::elapsed_ms(start, timed).ok());
  EXPECT_FALSE(Event::elapsed_ms(timed, end).ok());
  // Synchronisation still works.
  TS_ASSERT_OK_AND_ASSIGN(bool done, end.query());
  EXPECT_TRUE(done);
}

// Objects of two Runtimes (of the same plugin) never mix, and the error
// says that, not that two equal devices differ: an event recorded on a
// stream of another Runtime, a kernel launched on one (the core did not
// check; the cpu plugin's message named "device 0" twice), a buffer
// prefetched on one (accepted with OK).
TEST_F(EventTest, ObjectsOfAnotherRuntimeAreRefusedSayingSo) {
  auto other = testing::CreateCpuRuntime(1, 0);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const Device& theirs = other->devices()[0];
  TS_ASSERT_OK_AND_ASSIGN(Stream their_stream, theirs.create_stream());
  Event mine = NewEvent();
  Status record = mine.record(their_stream);
  TS_EXPECT_CODE(record, kInvalidArgument);
  TS_EXPECT_CONTAINS(record.message(), "another Runtime");

  Buffer x = Alloc(256);
  Status launch = their_stream.launch(kernel("count"), {1, 1, 1}, {1, 1, 1}, {KernelArg::buffer(x)});
  TS_EXPECT_CODE(launch, kInvalidArgument);
  TS_EXPECT_CONTAINS(launch.message(), "the kernel was loaded by another Runtime");

  Buffer managed = Alloc(4096, TS_BUFFER_MANAGED);
  auto prefetch = their_stream.prefetch(managed, nullptr);
  ASSERT_FALSE(prefetch.ok());
  TS_EXPECT_CODE(prefetch.status(), kInvalidArgument);
  TS_EXPECT_CONTAINS(prefetch.status().message(), "the buffer belongs to another Runtime");
  TS_EXPECT_OK(their_stream.synchronize());
}

}  // namespace
}  // namespace tessera
