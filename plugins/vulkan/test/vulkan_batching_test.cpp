// The batching policy (stream.cpp) and pinned host memory, checked through
// the plugin's counters (TsVulkanDeviceStats, vulkan_ext.h) rather than only
// through results, which would be the same whatever the plugin submitted:
//  - an operation on an idle stream is submitted with no further call from
//    the host (the flusher, once the host is quiet for a moment);
//  - operations on a busy stream accumulate: one submit for many, or one per
//    kMaxOpsPerBatch (1024);
//  - a batch waiting behind running work is submitted when the stream
//    drains, again with no call from the host;
//  - pinned host memory is imported (VK_EXT_external_memory_host), never
//    copied through a staging buffer;
//  - the clock of completion times (timestamp.cpp) never waits for the
//    queue: with VK_EXT_calibrated_timestamps it runs no batch, without it
//    one when the device is created.
// "Busy" is made exact with a gate: a kernel that runs until the host opens
// it (its bound is a safety net, not a timing; test_shaders/gate.comp says
// why it is many groups on lavapipe).  Waits for the plugin's own actions
// are bounded polls (10 s): liveness checks, not timings.
#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "vulkan_test_util.hpp"

namespace tessera_vk_test {
namespace {

class VulkanBatching : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    LoadKernel("gate", &gate_exe_, &gate_);
    if (IsSkipped() || HasFatalFailure()) return;
    LoadKernel("fill", &fill_exe_, &fill_);
    if (IsSkipped() || HasFatalFailure()) return;
    gate_words_ = Alloc(256, TS_BUFFER_HOST_PINNED);
    words_ = static_cast<uint32_t*>(gate_words_.host_pointer());
    ASSERT_NE(words_, nullptr);
  }
  // Queues the gate on `s`: `s` stays busy until Open() (or, as a safety
  // net, about 8 s on lavapipe, which runs ~16 of these groups a second).
  Status QueueGate(const Stream& s) {
    std::memset(words_, 0, 256);
    const uint32_t iterations = 100u * 1000 * 1000;
    return s.launch(gate_, {kGateGroups, 1, 1}, {1, 1, 1},
                    {KernelArg::buffer(gate_words_), KernelArg::scalar(iterations)});
  }
  void Open() { __atomic_store_n(&words_[0], 1u, __ATOMIC_RELEASE); }
  bool GateTimedOut() const {
    return __atomic_load_n(&words_[2], __ATOMIC_ACQUIRE) == kGateGroups;
  }
  static constexpr uint32_t kGateGroups = 128;
  Status Fill(const Stream& s, const Buffer& b, uint32_t value, uint32_t n = 64) {
    return s.launch(fill_, {(n + 31) / 32, 1, 1}, {32, 1, 1},
                    {KernelArg::buffer(b), KernelArg::scalar(value), KernelArg::scalar(n)});
  }
  TsVulkanDeviceStats Now() { return Stats(rt_, dev_); }
  // Waits (at most 10 s) until the device has made `submits` submits.
  uint64_t AwaitSubmits(uint64_t submits) {
    uint64_t now = Now().queue_submits;
    for (int i = 0; i < 10000 && now < submits; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      now = Now().queue_submits;
    }
    return now;
  }

  Executable gate_exe_, fill_exe_;
  Kernel gate_, fill_;
  Buffer gate_words_;
  uint32_t* words_ = nullptr;
};

TEST_F(VulkanBatching, AnOperationOnAnIdleStreamIsSubmittedWithoutAHostCall) {
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  Buffer b = Alloc(256, TS_BUFFER_HOST_PINNED);
  auto* h = static_cast<uint32_t*>(b.host_pointer());
  ASSERT_NE(h, nullptr);
  std::memset(h, 0, 256);
  TS_ASSERT_OK(s->synchronize());
  const TsVulkanDeviceStats before = Now();
  TS_ASSERT_OK(Fill(*s, b, 5));
  // No synchronize, no query: the plugin submits it by itself, and it runs.
  EXPECT_EQ(AwaitSubmits(before.queue_submits + 1), before.queue_submits + 1);
  bool ran = false;
  for (int i = 0; i < 10000 && !ran; ++i) {
    ran = __atomic_load_n(&h[63], __ATOMIC_ACQUIRE) == 5u + 63;
    if (!ran) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(ran) << "a launch on an idle stream never ran without a host call";
  const TsVulkanDeviceStats after = Now();
  EXPECT_EQ(after.queue_submits, before.queue_submits + 1);
  EXPECT_EQ(after.submitted_commands, before.submitted_commands + 1);
  TS_ASSERT_OK(s->synchronize());
  EXPECT_EQ(Now().queue_submits, before.queue_submits + 1) << "synchronize submitted again";
}

// 256 launches behind running work + synchronize: one submit for all of them;
// past kMaxOpsPerBatch (1024) a busy stream submits each full batch.
TEST_F(VulkanBatching, LaunchesOnABusyStreamShareOneSubmit) {
  Stream s = dev_.default_stream();
  const uint32_t n = 64;
  Buffer a = Alloc(n * 4);
  TS_ASSERT_OK(s.synchronize());
  const TsVulkanDeviceStats start = Now();
  TS_ASSERT_OK(QueueGate(s));
  ASSERT_EQ(AwaitSubmits(start.queue_submits + 1), start.queue_submits + 1)
      << "the gate on an idle stream was not submitted";
  for (uint32_t v = 0; v < 256; ++v) TS_ASSERT_OK(Fill(s, a, v, n));
  TsVulkanDeviceStats mid = Now();
  EXPECT_EQ(mid.queue_submits, start.queue_submits + 1)
      << "launches on a busy stream were submitted one by one";
  Open();
  TS_ASSERT_OK(s.synchronize());
  ASSERT_FALSE(GateTimedOut());
  TsVulkanDeviceStats end = Now();
  EXPECT_EQ(end.queue_submits, start.queue_submits + 2) << "256 launches + synchronize";
  EXPECT_EQ(end.submitted_commands, start.submitted_commands + 257);
  std::vector<uint32_t> h(n);
  TS_ASSERT_OK(tessera::copy(h.data(), a, n * 4));
  EXPECT_EQ(h[0], 255u);
  EXPECT_EQ(h[63], 255u + 63);

  // 3000 launches behind a gate: full batches of 1024 go while it is
  // closed, the rest with the synchronize.
  const TsVulkanDeviceStats start2 = Now();
  TS_ASSERT_OK(QueueGate(s));
  ASSERT_EQ(AwaitSubmits(start2.queue_submits + 1), start2.queue_submits + 1);
  for (uint32_t v = 0; v < 3000; ++v) TS_ASSERT_OK(Fill(s, a, v, n));
  EXPECT_EQ(Now().queue_submits, start2.queue_submits + 3) << "the gate, then 2 full batches";
  Open();
  TS_ASSERT_OK(s.synchronize());
  ASSERT_FALSE(GateTimedOut());
  EXPECT_EQ(Now().queue_submits, start2.queue_submits + 4);
  TS_ASSERT_OK(tessera::copy(h.data(), a, n * 4));
  EXPECT_EQ(h[0], 2999u);
  EXPECT_EQ(h[63], 2999u + 63);
}

// Work queued behind running work starts when that work ends, with no call
// from the host: launch -> host work -> synchronize overlaps.  The
// second kernel's result must appear in host-visible memory while the host
// makes no call at all (bounded wait: a liveness check, not a timing).
TEST_F(VulkanBatching, QueuedWorkStartsWhenTheStreamDrains) {
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  Buffer out = Alloc(256, TS_BUFFER_HOST_PINNED);
  auto* h = static_cast<uint32_t*>(out.host_pointer());
  ASSERT_NE(h, nullptr);
  std::memset(h, 0, 256);
  const uint64_t before = Now().queue_submits;
  TS_ASSERT_OK(QueueGate(*s));
  ASSERT_EQ(AwaitSubmits(before + 1), before + 1);
  TS_ASSERT_OK(Fill(*s, out, 1000, 64));  // deferred behind the running gate
  const uint64_t submits = Now().queue_submits;
  ASSERT_EQ(submits, before + 1);
  Open();
  bool seen = false;
  for (int i = 0; i < 10000 && !seen; ++i) {
    seen = __atomic_load_n(&h[63], __ATOMIC_ACQUIRE) == 1063u;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(seen) << "the launch queued behind the gate never ran without a host call";
  EXPECT_EQ(Now().queue_submits, submits + 1);
  TS_ASSERT_OK(s->synchronize());
  ASSERT_FALSE(GateTimedOut());
}

// Context switches of the flusher threads (named "tessera:vkflush") of this
// process, from /proc: each time one sleeps it counts one.  -1: no such
// thread (not Linux, or no device).
int64_t FlusherSwitches() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int64_t total = -1;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(task + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "tessera:vkflush") continue;
    std::ifstream status(task + "/status");
    std::string line;
    int64_t n = 0;
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
          line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
        n += std::stoll(line.substr(line.find(':') + 1));
    total = (total < 0 ? 0 : total) + n;
  }
  closedir(dir);
  return total;
}

// What docs/vulkan.md and stream.cpp say the flusher does: it wakes every
// kFlusherPoll (1 ms) for kFlusherLinger (100 ms) after the last deferral,
// then sleeps until the next deferral notifies it.  Counted as context
// switches of its thread over a window; the bounds are an order of
// magnitude from the nominal 1 ms and 0 (no timing is asserted beyond
// "polls" against "sleeps").
TEST_F(VulkanBatching, FlusherPollsAfterADeferralThenSleeps) {
  if (FlusherSwitches() < 0) GTEST_SKIP() << "no tessera:vkflush thread in /proc/self/task";
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  Buffer b = Alloc(256);
  auto window = [](std::chrono::milliseconds ms) {
    const int64_t before = FlusherSwitches();
    std::this_thread::sleep_for(ms);
    return FlusherSwitches() - before;
  };
  // A deferral (the launch), then nothing deferred: it polls.
  TS_ASSERT_OK(Fill(*s, b, 1));
  TS_ASSERT_OK(s->synchronize());
  const int64_t polling = window(std::chrono::milliseconds(50));
  EXPECT_GE(polling, 5) << "the flusher did not poll within 100 ms of a deferral";
  // Past kFlusherLinger with no deferral: it sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const int64_t idle = window(std::chrono::milliseconds(100));
  EXPECT_LE(idle, 2) << "the flusher kept waking with nothing deferred for 150 ms";
  // The next deferral notifies the sleeping flusher: submitted with no host call.
  const uint64_t before = Now().queue_submits;
  TS_ASSERT_OK(Fill(*s, b, 2));
  EXPECT_EQ(AwaitSubmits(before + 1), before + 1) << "an idle flusher was not woken";
  TS_ASSERT_OK(s->synchronize());
}

// Pinned host memory (Host_Allocate, Host_Register) is imported into the
// device: async copies read and write it in place, never through a staging
// buffer.
TEST_F(VulkanTest, PinnedMemoryIsImportedNotStaged) {
  if (dev_.info().name.find("llvmpipe") == std::string::npos)
    GTEST_SKIP() << "checked on lavapipe, which has VK_EXT_external_memory_host";
  const size_t size = 1 << 20;
  Buffer b = Alloc(size);
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok());
  const TsVulkanDeviceStats before = Stats(rt_, dev_);
  auto p = rt_.pinned_malloc(size);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<uint8_t> reg(size + 123);
  TS_ASSERT_OK(rt_.register_host(reg.data() + 7, size));
  TsVulkanDeviceStats mid = Stats(rt_, dev_);
  EXPECT_EQ(mid.host_imports, before.host_imports + 2) << "pinned memory was not imported";

  std::memset(*p, 0x11, size);
  TS_ASSERT_OK(s->copy_async(b, *p, size));
  TS_ASSERT_OK(s->copy_async(reg.data() + 7, b, size));
  TS_ASSERT_OK(s->memset_async(b, 0, 0x22, size));
  TS_ASSERT_OK(s->copy_async(*p, b, size));
  TS_ASSERT_OK(s->synchronize());
  EXPECT_EQ(Stats(rt_, dev_).staged_copies, before.staged_copies)
      << "async copies of pinned memory went through a staging buffer";
  EXPECT_EQ(reg[7], 0x11);
  EXPECT_EQ(reg[7 + size - 1], 0x11);
  EXPECT_EQ(static_cast<uint8_t*>(*p)[size - 1], 0x22);
  TS_ASSERT_OK(rt_.unregister_host(reg.data() + 7));
  TS_ASSERT_OK(rt_.pinned_free(*p));
}

// The same copies on a device without VK_EXT_external_memory_host (masked by
// the plugin's test hook): nothing is imported, every copy of pinned memory
// is staged, and the results are the same.  (Shows the counters above would
// catch a plugin that staged.)
TEST(VulkanNoHostImport, PinnedMemoryIsStaged) {
  auto rt = CreateVulkanRuntime({{"test_mask_features", "VK_EXT_external_memory_host"}});
  if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable)
    GTEST_SKIP() << rt.status().ToString();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Device dev = rt->devices().at(0);
  const size_t size = 1 << 16;
  auto b = dev.allocate(size);
  auto s = dev.create_stream();
  ASSERT_TRUE(b.ok() && s.ok());
  const TsVulkanDeviceStats before = Stats(*rt, dev);
  auto p = rt->pinned_malloc(size);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::memset(*p, 0x33, size);
  TS_ASSERT_OK(s->copy_async(*b, *p, size));
  TS_ASSERT_OK(s->memset_async(*b, 0, 0x44, 16));
  TS_ASSERT_OK(s->copy_async(*p, *b, size));
  TS_ASSERT_OK(s->synchronize());
  const TsVulkanDeviceStats after = Stats(*rt, dev);
  EXPECT_EQ(after.host_imports, before.host_imports);
  EXPECT_EQ(after.staged_copies, before.staged_copies + 2);
  EXPECT_EQ(static_cast<uint8_t*>(*p)[0], 0x44);
  EXPECT_EQ(static_cast<uint8_t*>(*p)[size - 1], 0x33);
  TS_ASSERT_OK(rt->pinned_free(*p));
}

// The completion-time clock, with VK_EXT_calibrated_timestamps where the
// driver has it (lavapipe does), without it (masked by the test hook), and
// with a driver whose CLOCK_MONOTONIC reading is wrong (a test hook makes
// it 10 s late: the plugin must not trust it, and calibrates through the
// queue). Either way the first Stream_WriteTimestamp of a device returns
// while a gate holds the queue: a calibration through the queue then would
// wait behind the gate until it timed out (the bug this checks), and the
// time written is still that of the work before it.
enum class Clock { kAsOffered, kNoExtension, kBadDriverClock };

class VulkanStampClock : public VulkanBatching, public ::testing::WithParamInterface<Clock> {
 protected:
  VulkanStampClock() {
    if (GetParam() == Clock::kNoExtension)
      plugin_options_ = {{"test_mask_features", "VK_EXT_calibrated_timestamps"}};
    if (GetParam() == Clock::kBadDriverClock)
      plugin_options_ = {{"test_mask_features", "calibrated_timestamps_host_clock"}};
  }
  TsError* WriteTimestamp(const Stream& s, uint64_t* slot) {
    TsStream_WriteTimestamp_Args a{};
    a.struct_size = TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE;
    a.stream = s.raw();
    a.timestamp_ns = slot;
    return rt_.plugin_api()->Stream_WriteTimestamp(&a);
  }
  static uint64_t HostNs() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }
};

TEST_P(VulkanStampClock, TheFirstTimestampDoesNotWaitForTheQueue) {
  const TsVulkanDeviceStats created = Now();
  const bool lavapipe = std::strstr(dev_.info().name.c_str(), "llvmpipe") != nullptr;
  if (GetParam() == Clock::kAsOffered) {
    if (lavapipe)
      EXPECT_EQ(created.calibrated_timestamps, 1u) << "lavapipe (Mesa 22.3) has VK_EXT_calibrated_timestamps";
    if (created.calibrated_timestamps) EXPECT_EQ(created.queue_calibrations, 0u);
  } else {
    EXPECT_EQ(created.calibrated_timestamps, 0u);
    // Measured when the device is created: again (up to 3 times) while a
    // loaded host stretches the window.
    EXPECT_GE(created.queue_calibrations, 1u) << "the clock is measured when the device is created";
    EXPECT_LE(created.queue_calibrations, 3u);
  }
  auto s = dev_.create_stream();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  TS_ASSERT_OK(QueueGate(*s));
  uint64_t slot = 0;
  TsError* e = WriteTimestamp(*s, &slot);
  ASSERT_EQ(e, nullptr) << TakeError(rt_.plugin_api(), e);
  EXPECT_FALSE(GateTimedOut()) << "Stream_WriteTimestamp waited for the gate to time out";
  EXPECT_EQ(__atomic_load_n(&slot, __ATOMIC_ACQUIRE), 0u) << "written while the gate holds";
  const uint64_t opened = HostNs();
  Open();
  TS_ASSERT_OK(s->synchronize());
  const uint64_t after = HostNs();
  const uint64_t t = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  const uint64_t slack = 1000000;  // 1 ms: a converted device clock
  EXPECT_GE(t + slack, opened) << "the time is before the gate opened";
  EXPECT_LE(t, after + slack) << "the time is after the synchronize returned";
  // Nothing more ran on the queue for the clock (with the extension,
  // nothing ever does; without it, a renewal needs a quiet device).
  EXPECT_EQ(Now().queue_calibrations, created.queue_calibrations)
      << "a timestamp ran a calibration through the queue";
}

INSTANTIATE_TEST_SUITE_P(Calibration, VulkanStampClock,
                         ::testing::Values(Clock::kAsOffered, Clock::kNoExtension, Clock::kBadDriverClock),
                         [](const ::testing::TestParamInfo<Clock>& info) {
                           switch (info.param) {
                             case Clock::kAsOffered: return "AsTheDriverOffers";
                             case Clock::kNoExtension: return "WithoutCalibratedTimestampsExt";
                             case Clock::kBadDriverClock: return "DriverClockWrong";
                           }
                           return "unknown";
                         });

// A runtime whose next stream batch the driver cannot finish (the test
// hook test_mask_features=end_command_buffer_once).
class VulkanOutOfMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = CreateVulkanRuntime({{"test_mask_features", "end_command_buffer_once"}});
    if (!rt.ok() && rt.status().code() == StatusCode::kUnavailable) GTEST_SKIP() << rt.status().ToString();
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rt_ = std::move(*rt);
    dev = rt_.devices().at(0);
  }
  Runtime rt_;
  Device dev;
};

// A command buffer the driver cannot finish (out of host memory): the
// operations since the last submit are dropped with one error, and the
// stream goes on.  (The broken buffer stayed open: later operations were
// recorded into it, lavapipe corrupted its heap, and every synchronize
// failed again.)
TEST_F(VulkanOutOfMemory, AnUnfinishedCommandBufferIsDroppedAndTheStreamGoesOn) {
  auto b = dev.allocate(64);
  auto s = dev.create_stream();
  auto e = dev.create_event();
  ASSERT_TRUE(b.ok() && s.ok() && e.ok());
  TS_ASSERT_OK(s->memset_async(*b, 0, 0x11, 64));
  TS_ASSERT_OK(e->record(*s));
  Status st = s->synchronize();
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("were dropped"), std::string::npos) << st.ToString();
  Status ev = e->synchronize();  // its value was signalled: nothing waits for ever
  EXPECT_TRUE(ev.ok()) << ev.ToString();
  TS_ASSERT_OK(s->memset_async(*b, 0, 0x22, 64));
  TS_ASSERT_OK(s->synchronize());
  uint8_t host[64] = {};
  TS_ASSERT_OK(tessera::copy(host, *b, 64));
  EXPECT_EQ(host[0], 0x22);
  EXPECT_EQ(host[63], 0x22);
}

// The same failure in a batch another stream waits on: it is the other
// stream's to report; the waiting stream goes on (its flush submitted the
// failed one first, and returned that stream's error as its own).
TEST_F(VulkanOutOfMemory, ADroppedBatchIsReportedByItsOwnStream) {
  auto a = dev.allocate(64);
  auto b = dev.allocate(64);
  auto producer = dev.create_stream();
  auto consumer = dev.create_stream();
  auto e = dev.create_event();
  ASSERT_TRUE(a.ok() && b.ok() && producer.ok() && consumer.ok() && e.ok());
  TS_ASSERT_OK(producer->memset_async(*a, 0, 0x11, 64));
  TS_ASSERT_OK(e->record(*producer));
  TS_ASSERT_OK(consumer->wait(*e));
  TS_ASSERT_OK(consumer->memset_async(*b, 0, 0x22, 64));
  Status mine = consumer->synchronize();
  EXPECT_TRUE(mine.ok()) << "the consumer got the producer's failure: " << mine.ToString();
  Status theirs = producer->synchronize();
  EXPECT_EQ(theirs.code(), StatusCode::kResourceExhausted) << theirs.ToString();
  uint8_t host[64] = {};
  TS_ASSERT_OK(tessera::copy(host, *b, 64));
  EXPECT_EQ(host[0], 0x22);
}

}  // namespace
}  // namespace tessera_vk_test
