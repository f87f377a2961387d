// What Stream_WriteTimestamp must do on a plugin that writes the time
// itself when it sees the work complete (cuda and hip: timing events,
// plugins/common/event_timestamps.hpp; level_zero: the global timer written
// into host USM), beyond what the conformance suite asks and what the trace
// relies on: points on a busy stream are written as later points are
// recorded, without a synchronize (cuda and hip: once 32 wait; level_zero:
// when a progress marker is seen); the points of a destroyed stream are
// written by a device-wide synchronize; an event recorded after a point
// writes it when the event is synchronized; a point over a second later
// lands after the earlier ones (the calibration renewed without moving the
// clock backwards).  Runs on the plugin's hardware only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "tessera/runtime.hpp"

namespace tessera_test {

inline void check_event_clock_timestamps(tessera::Runtime& rt, tessera::Device& dev) {
  using tessera::Stream;

  const TsPluginApi* api = rt.plugin_api();
  ASSERT_NE(api->Stream_WriteTimestamp, nullptr);
  auto write = [&](const Stream& s, uint64_t* slot) {
    TsStream_WriteTimestamp_Args a{};
    a.struct_size = TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE;
    a.stream = s.raw();
    a.timestamp_ns = slot;
    TsError* e = api->Stream_WriteTimestamp(&a);
    std::string m;
    if (e) {
      TsError_Message_Args ma{TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE, nullptr, e, nullptr, 0};
      api->Error_Message(&ma);
      m.assign(ma.message, ma.message_size);
      TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
      api->Error_Destroy(&da);
    }
    return m;
  };
  auto read = [](const uint64_t* slot) { return __atomic_load_n(slot, __ATOMIC_ACQUIRE); };
  auto s = dev.create_stream();
  TS_ASSERT_OK(s);
  // Points on an idle stream complete at once on the device; once enough
  // wait, a new point writes the completed ones.
  std::vector<uint64_t> slots(200, 0);
  ASSERT_EQ(write(*s, &slots[0]), "");
  size_t written_after = 0;
  for (size_t i = 1; i < slots.size() && !read(&slots[0]); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(write(*s, &slots[i]), "");
    written_after = i;
  }
  EXPECT_NE(read(&slots[0]), 0u) << "later points did not write a completed one";
  EXPECT_LE(written_after, 40u) << "the queue was not drained once 32 points waited";
  TS_ASSERT_OK(s->synchronize());
  for (size_t i = 1; i <= written_after; ++i) {
    ASSERT_NE(read(&slots[i]), 0u) << i;
    EXPECT_LE(read(&slots[i - 1]), read(&slots[i])) << i;
  }
  const uint64_t& second = slots[written_after];

  // A destroyed stream's point: written by Device_Synchronize.
  uint64_t orphan = 0;
  {
    auto gone = dev.create_stream();
    TS_ASSERT_OK(gone);
    ASSERT_EQ(write(*gone, &orphan), "");
  }
  TS_ASSERT_OK(dev.synchronize());
  EXPECT_NE(read(&orphan), 0u) << "the point of a destroyed stream was never written";

  // An event recorded after a point: synchronizing it writes the point.
  uint64_t before_event = 0;
  auto ev = dev.create_event();
  TS_ASSERT_OK(ev);
  ASSERT_EQ(write(*s, &before_event), "");
  TS_ASSERT_OK(s->record(*ev));
  TS_ASSERT_OK(ev->synchronize());
  EXPECT_NE(read(&before_event), 0u);
  // Over a second later a point still lands after the earlier ones: the
  // calibration is renewed without moving the clock backwards.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  uint64_t later = 0;
  ASSERT_EQ(write(*s, &later), "");
  TS_ASSERT_OK(s->synchronize());
  EXPECT_GE(read(&later), read(&before_event) + 1000000000ull - 1000000ull);
  EXPECT_GE(read(&before_event), read(&second));
}

}  // namespace tessera_test
