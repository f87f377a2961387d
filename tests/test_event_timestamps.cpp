// plugins/common/event_timestamps.hpp: Stream_WriteTimestamp over timing
// events, as the cuda and hip plugins use it.  No GPU reaches these
// machines, so the scheme runs here against a simulated event runtime: a
// host clock the test moves, streams whose recorded events complete when
// the test runs them, and a device clock offset from the host's.  What is
// checked is what the ABI promises: the time written is the host time the
// work completed, never 0, in stream order, written at the latest by the
// observing call, and nothing leaks.
#include "event_timestamps.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "plugin_support.hpp"

namespace ps = tessera::plugin_support;

namespace {

struct SimEvent {
  bool complete = true;  // never recorded: complete, as in CUDA and HIP
  bool failed = false;
  double device_ms = 0;
};

struct SimStream {
  bool is_clock = false;
  std::deque<SimEvent*> queue;  // recorded, not yet run
};

// The simulated runtime.  Device time runs kOffsetMs ahead of host time.
struct SimRuntime {
  static constexpr double kOffsetMs = 123456.0;
  uint64_t host_ns = 1000000000;  // the test's clock
  uint64_t tick_per_read = 0;     // host time passing while the scheme polls
  bool clock_stream_stuck = false;
  bool fail_record = false;
  int events_created = 0, events_destroyed = 0, streams_created = 0, streams_destroyed = 0;
  std::vector<std::unique_ptr<SimEvent>> events;
  std::vector<std::unique_ptr<SimStream>> streams;
  std::vector<SimEvent*> stuck;  // calibration events waiting behind other work

  double device_now_ms() const { return host_ns * 1e-6 + kOffsetMs; }
  void complete(SimEvent* e) {
    e->complete = true;
    e->device_ms = device_now_ms();
  }
  SimStream* new_stream() {
    streams.push_back(std::make_unique<SimStream>());
    return streams.back().get();
  }
  // Runs the first `n` recorded events of `s`, each `step_ns` after the last.
  void run(SimStream* s, size_t n, uint64_t step_ns) {
    for (size_t i = 0; i < n && !s->queue.empty(); ++i) {
      host_ns += step_ns;
      complete(s->queue.front());
      s->queue.pop_front();
    }
  }
};

struct SimDriver {
  using Event = SimEvent*;
  using Stream = SimStream*;
  SimRuntime* rt;

  uint64_t now_ns() const {
    const uint64_t t = rt->host_ns;
    rt->host_ns += rt->tick_per_read;
    return t;
  }
  TsError* create_event(SimEvent** e, const char*) const {
    rt->events.push_back(std::make_unique<SimEvent>());
    ++rt->events_created;
    *e = rt->events.back().get();
    return nullptr;
  }
  void destroy_event(SimEvent*) const { ++rt->events_destroyed; }
  TsError* record(SimEvent* e, SimStream* s, const char* what) const {
    if (rt->fail_record) return ps::errorf(TS_ERROR_INTERNAL, "sim: record(%s) failed", what);
    e->complete = false;
    e->failed = false;
    if (s->is_clock && !rt->clock_stream_stuck) {
      rt->complete(e);
    } else if (s->is_clock) {
      rt->stuck.push_back(e);
    } else {
      s->queue.push_back(e);
    }
    return nullptr;
  }
  ps::EventState query(SimEvent* e, TsError** error) const {
    if (e->failed) {
      if (error) *error = ps::errorf(TS_ERROR_INTERNAL, "sim: the stream failed");
      return ps::EventState::kFailed;
    }
    return e->complete ? ps::EventState::kComplete : ps::EventState::kNotReady;
  }
  TsError* synchronize(SimEvent* e, const char*) const {
    if (!e->complete) rt->complete(e);
    return nullptr;
  }
  bool elapsed_ms(SimEvent* from, SimEvent* to, float* ms) const {
    if (!from->complete || !to->complete || to->failed) return false;
    *ms = static_cast<float>(to->device_ms - from->device_ms);
    return true;
  }
  TsError* create_clock_stream(SimStream** s) const {
    ++rt->streams_created;
    *s = rt->new_stream();
    (*s)->is_clock = true;
    return nullptr;
  }
  void destroy_stream(SimStream*) const { ++rt->streams_destroyed; }
};

using Stamps = ps::EventTimestamps<SimDriver>;

uint64_t load(const uint64_t& slot) { return __atomic_load_n(&slot, __ATOMIC_ACQUIRE); }

// The float milliseconds of the elapsed time resolve about 0.06 us at 1 s.
constexpr uint64_t kFloatSlackNs = 200;

class EventTimestampsTest : public ::testing::Test {
 protected:
  SimRuntime rt;
  Stamps stamps{SimDriver{&rt}};
  Stamps::Queue queue;
  SimStream* stream = rt.new_stream();

  void TearDown() override {
    stamps.release(&queue);
    EXPECT_EQ(rt.events_created, rt.events_destroyed) << "an event leaked";
    EXPECT_EQ(rt.streams_created, rt.streams_destroyed) << "the calibration stream leaked";
  }
};

TEST_F(EventTimestampsTest, WritesTheHostTimeTheWorkCompletedAtTheObservingCall) {
  uint64_t slot[3] = {0, 0, 0};
  for (auto& s : slot) ASSERT_EQ(stamps.record(queue, stream, &s), nullptr);
  EXPECT_TRUE(stamps.any_pending());
  std::vector<uint64_t> completed;
  for (int i = 0; i < 3; ++i) {
    rt.run(stream, 1, 7000 + 1000 * i);
    completed.push_back(rt.host_ns);
  }
  for (auto& s : slot) EXPECT_EQ(load(s), 0u) << "written before any call observed the work";
  rt.host_ns += 50000000;  // the observer comes much later
  stamps.flush(queue, /*synchronized=*/true);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(static_cast<double>(load(slot[i])), static_cast<double>(completed[i]),
                kFloatSlackNs)
        << "point " << i << ": the device clock's offset must cancel";
  }
  EXPECT_LT(load(slot[0]), load(slot[1]));
  EXPECT_LT(load(slot[1]), load(slot[2]));
  EXPECT_FALSE(stamps.any_pending());
}

TEST_F(EventTimestampsTest, AnUnsynchronizedFlushWritesOnlyTheCompletedPrefix) {
  uint64_t slot[3] = {0, 0, 0};
  for (auto& s : slot) ASSERT_EQ(stamps.record(queue, stream, &s), nullptr);
  rt.run(stream, 1, 1000);
  stamps.flush(queue, /*synchronized=*/false);
  EXPECT_NE(load(slot[0]), 0u);
  EXPECT_EQ(load(slot[1]), 0u);
  EXPECT_EQ(load(slot[2]), 0u);
  // Out of order on the device (cannot happen in one stream, but the
  // scheme must not pop past a point that is not written): the third
  // completes, the second not: nothing more is written.
  rt.complete(stream->queue[1]);
  stamps.flush(queue, false);
  EXPECT_EQ(load(slot[1]), 0u);
  EXPECT_EQ(load(slot[2]), 0u);
  rt.run(stream, 2, 1000);
  stamps.flush(queue, false);
  EXPECT_NE(load(slot[1]), 0u);
  EXPECT_NE(load(slot[2]), 0u);
}

TEST_F(EventTimestampsTest, ALongQueueDrainsAsNewPointsAreRecorded) {
  std::vector<uint64_t> slot(Stamps::kDrainAt + 1, 0);
  for (size_t i = 0; i < Stamps::kDrainAt; ++i) ASSERT_EQ(stamps.record(queue, stream, &slot[i]), nullptr);
  rt.run(stream, Stamps::kDrainAt, 1000);
  for (size_t i = 0; i < Stamps::kDrainAt; ++i) EXPECT_EQ(load(slot[i]), 0u);
  // The next point finds kDrainAt waiting and writes the completed ones,
  // without any synchronize: what a trace reads while a loop runs.
  ASSERT_EQ(stamps.record(queue, stream, &slot.back()), nullptr);
  for (size_t i = 0; i < Stamps::kDrainAt; ++i) EXPECT_NE(load(slot[i]), 0u) << i;
  EXPECT_EQ(load(slot.back()), 0u);
  // Their events are reused: no new event for the points that follow.
  const int created = rt.events_created;
  uint64_t more = 0;
  ASSERT_EQ(stamps.record(queue, stream, &more), nullptr);
  EXPECT_EQ(rt.events_created, created);
  stamps.flush(queue, true);
}

TEST_F(EventTimestampsTest, AFailedStreamGetsTheObservingTimeNeverZero) {
  uint64_t slot = 0;
  ASSERT_EQ(stamps.record(queue, stream, &slot), nullptr);
  SimEvent* e = stream->queue.front();
  stream->queue.clear();
  e->failed = true;  // a kernel fault: the event never completes
  rt.host_ns += 3000;
  const uint64_t observed = rt.host_ns;
  stamps.flush(queue, false);
  EXPECT_EQ(load(slot), observed);
}

TEST_F(EventTimestampsTest, AStuckRenewalKeepsTheOldCalibrationAndRetriesLater) {
  uint64_t first = 0;
  ASSERT_EQ(stamps.record(queue, stream, &first), nullptr);  // calibrates, waiting
  rt.run(stream, 1, 1000);
  stamps.flush(queue, true);
  // More than a second later, with the calibration stream behind other work.
  rt.host_ns += Stamps::kRecalibrateNs + 1;
  rt.clock_stream_stuck = true;
  rt.tick_per_read = 10000;  // 10 us per clock read while polling
  const uint64_t before = rt.host_ns;
  uint64_t second = 0;
  ASSERT_EQ(stamps.record(queue, stream, &second), nullptr);
  const uint64_t waited = rt.host_ns - before;
  EXPECT_LT(waited, Stamps::kRenewWaitNs + 100000) << "the renewal blocked the host";
  EXPECT_GE(waited, Stamps::kRenewWaitNs);
  // Within the retry delay no new calibration is attempted.
  const size_t stuck = rt.stuck.size();
  uint64_t third = 0;
  ASSERT_EQ(stamps.record(queue, stream, &third), nullptr);
  EXPECT_EQ(rt.stuck.size(), stuck);
  rt.tick_per_read = 0;
  rt.run(stream, 2, 1000);
  const uint64_t completed = rt.host_ns;
  stamps.flush(queue, true);
  // Still right through the old calibration (the float milliseconds at
  // about 1 s resolve well under a microsecond).
  EXPECT_NEAR(static_cast<double>(load(third)), static_cast<double>(completed), 1000.0);
  EXPECT_LT(load(second), load(third));
  // After the delay, with the stream free again, a renewal succeeds.
  rt.host_ns += Stamps::kRetryNs + 1;
  rt.clock_stream_stuck = false;
  uint64_t fourth = 0;
  ASSERT_EQ(stamps.record(queue, stream, &fourth), nullptr);
  rt.run(stream, 1, 5000);
  const uint64_t at = rt.host_ns;
  stamps.flush(queue, true);
  EXPECT_NEAR(static_cast<double>(load(fourth)), static_cast<double>(at), kFloatSlackNs);
  for (SimEvent* e : rt.stuck) rt.complete(e);
}

TEST_F(EventTimestampsTest, PointsOfADestroyedStreamAreWrittenByTheDevice) {
  Stamps::Queue doomed;
  SimStream* other = rt.new_stream();
  uint64_t slot = 0;
  ASSERT_EQ(stamps.record(doomed, other, &slot), nullptr);
  stamps.orphan(doomed);
  rt.run(other, 1, 1000);
  const uint64_t completed = rt.host_ns;
  stamps.flush(doomed, true);  // the stream's queue no longer has it
  EXPECT_EQ(load(slot), 0u);
  stamps.flush_orphans(false);
  EXPECT_NEAR(static_cast<double>(load(slot)), static_cast<double>(completed), kFloatSlackNs);
}

TEST_F(EventTimestampsTest, AFailedRecordReturnsTheErrorAndLeavesNothingPending) {
  uint64_t ok = 0;
  ASSERT_EQ(stamps.record(queue, stream, &ok), nullptr);
  rt.run(stream, 1, 1000);
  stamps.flush(queue, true);
  rt.fail_record = true;
  uint64_t slot = 0;
  TsError* e = stamps.record(queue, stream, &slot);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(std::string(e->message).find("record(timestamp) failed"), std::string::npos) << e->message;
  TsError_Destroy_Args d{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  ps::Error_Destroy(&d);
  EXPECT_FALSE(stamps.any_pending());
  rt.fail_record = false;
}

TEST_F(EventTimestampsTest, ReleaseFreesThePointsNeverWritten) {
  uint64_t slot[4] = {0, 0, 0, 0};
  Stamps::Queue doomed;
  for (auto& s : slot) ASSERT_EQ(stamps.record(queue, stream, &s), nullptr);
  ASSERT_EQ(stamps.record(doomed, stream, &slot[0]), nullptr);
  stamps.orphan(doomed);
  // TearDown releases with the work still queued: every event is freed.
}

}  // namespace
