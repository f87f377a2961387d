// Stream_WriteTimestamp (ABI 1.3) and TsKernel_Launch_Args.completion_ns.
//
// A point is a timestamp query written at the end of the stream's open
// batch (vkCmdWriteTimestamp, BOTTOM_OF_PIPE: after everything recorded
// before it).  When the batch is reaped (its timeline value reached), the
// query is read, converted to host CLOCK_MONOTONIC and stored into the
// caller's memory.  Every call that lets the caller observe completion
// reaps first: Stream_Synchronize and Event_Synchronize (wait_value),
// Stream_Query idle, Event_Query complete, Device_Synchronize.
//
// CLOCK.  A tick converts to host time through an offset: a device tick
// and the host time it was read at.
//  - With VK_EXT_calibrated_timestamps (lavapipe, and the desktop drivers),
//    vkGetCalibratedTimestampsEXT reads the tick counter and CLOCK_MONOTONIC
//    together, with no queue work; the offset is re-read each second.
//  - Without it, a private stream writes a timestamp (TOP_OF_PIPE) in a
//    batch of its own and the host notes the time before the submit and
//    after the wait: the middle of that window is the tick's host time,
//    known to within half the window.  That wait would sit behind whatever
//    the queue runs (one queue for every stream: behind a kernel that waits
//    for the host, until it times out), so it is done when the device is
//    created, on an idle queue (again, up to 3 times, while the window is
//    wider than 100 us: a loaded host stretches it), and renewed for drift
//    after a minute only when the device is quiet at the time a timestamp
//    is asked for: nothing in flight and nothing recorded on any stream.
//    (Submitting first is not enough: lavapipe signalled a calibration
//    submitted before a gated kernel only after that kernel ended.)
// Either way a wider window than the offset's never replaces it (before
// it is a minute old).  No anchor needs renewing for the counter's wrap
// (36 bits of 1 ns ticks wrap in 69 s): a point is converted to the latest
// time, by whole wraps, not after a quarter wrap past the moment it is
// read, which is right while points are read within 3/4 of a wrap of
// their completion.
//
// LOCKS.  Query slots, the clock and the batches' points are guarded by the
// device's mu; calibrate_mu serializes calibrations and is taken first.
#include <algorithm>
#include <cmath>

#include "internal.hpp"
#include "plugin_log.hpp"

namespace tessera::vk {

namespace {

constexpr uint32_t kStampsPerPool = 1024;
constexpr uint64_t kResultBytes = 2 * sizeof(uint64_t);  // ticks, availability
constexpr uint64_t kSecondNs = 1000ull * 1000 * 1000;
constexpr uint64_t kExtensionRereadNs = kSecondNs;      // calibrated timestamps
constexpr uint64_t kQueueLookNs = 10 * kSecondNs;       // queue: the offset's age
constexpr uint64_t kOffsetMaxAgeNs = 60 * kSecondNs;    // either: replaced even by a wider window
// Queue: a window this narrow is good enough; a wider one is measured again
// when the device is created, up to kCreationTries times.
constexpr uint64_t kGoodWindowNs = 100 * 1000;
constexpr int kCreationTries = 3;

uint64_t tick_mask(const TsDevice* dev) {
  return dev->timestamp_bits >= 64 ? ~0ull : (1ull << dev->timestamp_bits) - 1;
}

// Signed nanoseconds from tick `from` to tick `to`, the shorter way round
// the counter's wrap.
double ticks_to_ns(const TsDevice* dev, uint64_t from, uint64_t to) {
  const uint64_t mask = tick_mask(dev);
  uint64_t d = (to - from) & mask;
  double ticks = d > mask / 2 ? -static_cast<double>((mask - d) + 1) : static_cast<double>(d);
  return ticks * dev->props.limits.timestampPeriod;
}

// The host time of `ticks`, read at host time `now` (see CLOCK).
uint64_t ticks_to_host_ns(const TsDevice* dev, uint64_t ticks, uint64_t now) {
  const auto& c = dev->stamp_clock;
  const double wrap = (static_cast<double>(tick_mask(dev)) + 1.0) * dev->props.limits.timestampPeriod;
  double ns = static_cast<double>(c.host_ns) + ticks_to_ns(dev, c.ticks, ticks);
  const double latest = static_cast<double>(now) + wrap / 4;
  ns += std::floor((latest - ns) / wrap) * wrap;
  return ns >= 1 ? static_cast<uint64_t>(std::llround(ns)) : 1;
}

// A measured offset: `ticks` at host time `host_ns`, known to within
// window_ns / 2, measured at `now` (mu held).
void offer_offset_locked(TsDevice* dev, uint64_t ticks, uint64_t host_ns, uint64_t window_ns,
                         uint64_t now) {
  auto& c = dev->stamp_clock;
  if (c.valid && window_ns > c.window_ns && now - c.taken_ns <= kOffsetMaxAgeNs) return;
  c.ticks = ticks;
  c.host_ns = host_ns;
  c.window_ns = window_ns;
  c.taken_ns = now;
  c.valid = true;
}

// The slots of destroyed events whose records have all completed go back
// (mu held).
void reclaim_retiring_locked(TsDevice* dev) {
  auto& r = dev->retiring_stamps;
  for (size_t i = 0; i < r.size();) {
    if (std::all_of(r[i].writers.begin(), r[i].writers.end(), event_writer_done)) {
      dev->free_stamps.push_back(r[i].slot);
      r[i] = std::move(r.back());
      r.pop_back();
    } else {
      ++i;
    }
  }
}

}  // namespace

bool event_writer_done(const EventWriter& w) {
  std::shared_ptr<StreamState> s = w.stream.lock();
  return !s || counter_value(*s) >= w.value;
}

TsError* take_stamp_slot_locked(TsDevice* dev, StampSlot* out) {
  if (dev->free_stamps.empty()) reclaim_retiring_locked(dev);
  if (dev->free_stamps.empty()) {
    TsDevice::StampPool p;
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = kStampsPerPool;
    TS_VK_CALL(dev->fn.vkCreateQueryPool(dev->device, &qci, nullptr, &p.queries),
               "vkCreateQueryPool(TIMESTAMP)");
    if (TsError* e = allocate(dev, uint64_t{kStampsPerPool} * kResultBytes, MemoryUse::kHost,
                              &p.readback, "timestamp results", alignof(uint64_t))) {
      dev->fn.vkDestroyQueryPool(dev->device, p.queries, nullptr);
      return e;
    }
    dev->stamp_pools.push_back(p);
    auto* words = reinterpret_cast<uint64_t*>(p.readback.mapped);
    for (uint32_t i = kStampsPerPool; i-- > 0;)
      dev->free_stamps.push_back({p.queries, i, p.readback.buffer, words + 2 * i, nullptr});
  }
  *out = dev->free_stamps.back();
  dev->free_stamps.pop_back();
  return nullptr;
}

void record_stamp_commands(TsDevice* dev, VkCommandBuffer cb, const StampSlot& slot,
                           VkPipelineStageFlagBits stage) {
  // Cleared by the host before the submit: a batch that never runs (its
  // submit failed) leaves it 0, which read_stamp reports.
  __atomic_store_n(&slot.result[1], uint64_t{0}, __ATOMIC_RELAXED);
  dev->fn.vkCmdResetQueryPool(cb, slot.pool, slot.index, 1);
  dev->fn.vkCmdWriteTimestamp(cb, stage, slot.pool, slot.index);
  // WAIT_BIT makes the device (not the host) wait for the write.  A
  // transfer write: the batch's closing barrier makes it visible to the host.
  dev->fn.vkCmdCopyQueryPoolResults(
      cb, slot.pool, slot.index, 1, slot.readback, uint64_t{slot.index} * kResultBytes, kResultBytes,
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
}

bool read_stamp(const StampSlot& slot, uint64_t* ticks) {
  if (__atomic_load_n(&slot.result[1], __ATOMIC_ACQUIRE) == 0) return false;
  *ticks = __atomic_load_n(&slot.result[0], __ATOMIC_RELAXED);
  return true;
}

namespace {

// Records a timestamp at `stage` at the end of the open batch of `s`,
// through the op path: the default-stream waits, a barrier after the work
// before it, the flusher's batching.  With `point`, the slot joins the
// batch's points (written when it is reaped); begin_op may have closed the
// batch holding earlier work, so it goes into whatever batch is open then.
// *recorded: whether the command was recorded (else the slot is unused).
TsError* write_query_locked(StreamState& s, const StampSlot& slot, VkPipelineStageFlagBits stage,
                            bool point, bool* recorded) {
  *recorded = false;
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  record_stamp_commands(s.dev, cl->cb, slot, stage);
  *recorded = true;
  if (point) s.open.stamps.push_back(slot);
  return end_op_locked(s);
}

// Whether the device is quiet (mu held): every submitted batch of every
// stream has completed, and no stream has work recorded for a later submit.
bool device_quiet_locked(TsDevice* dev) {
  for (const auto* list : {&dev->streams, &dev->retired})
    for (const auto& s : *list)
      if (counter_value(*s) < s->submitted || s->open.cl.commands != 0 || !s->open.waits.empty())
        return false;
  return true;
}

// A calibration through the queue: a tick and the host window around it
// (waits for whatever the queue runs before it).  With `only_if_quiet`,
// nothing is done unless the device is quiet when the batch is submitted
// (the check and the submit under one hold of mu).  calibrate_mu held.
TsError* calibrate_through_queue(TsDevice* dev, bool only_if_quiet = false) {
  StampSlot slot;
  std::shared_ptr<StreamState> cal;
  uint64_t value = 0, t0 = 0;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    if (only_if_quiet && !device_quiet_locked(dev)) return nullptr;
    if (!dev->calibration_stream) {
      TS_VK_RETURN_IF_ERROR(create_stream_state(dev, false, true, &dev->calibration_stream));
      dev->calibration_stream->label = "the timestamp calibration stream";
    }
    cal = dev->calibration_stream;
    TS_VK_RETURN_IF_ERROR(take_stamp_slot_locked(dev, &slot));
    bool recorded = false;
    TsError* e = write_query_locked(*cal, slot, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, false, &recorded);
    t0 = plugin_support::steady_clock_ns();
    if (!e) e = flush_locked(*cal);
    if (e) {
      dev->free_stamps.push_back(slot);
      return e;
    }
    value = cal->submitted;
  }
  dev->stat_queue_calibrations.fetch_add(1, std::memory_order_relaxed);
  TsError* e = wait_value(*cal, value);
  const uint64_t t1 = plugin_support::steady_clock_ns();
  uint64_t ticks = 0;
  const bool ok = !e && read_stamp(slot, &ticks);
  std::lock_guard<std::mutex> lk(dev->mu);
  dev->free_stamps.push_back(slot);
  if (e) return e;
  if (!ok) return errorf(TS_ERROR_INTERNAL, "vulkan: the timestamp calibration's query was not written");
  offer_offset_locked(dev, ticks, t0 + (t1 - t0) / 2, t1 - t0, t1);
  return nullptr;
}

// A calibration by VK_EXT_calibrated_timestamps: no queue work.
TsError* calibrate_with_extension(TsDevice* dev) {
  VkCalibratedTimestampInfoEXT info[2] = {
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  uint64_t stamps[2] = {0, 0}, deviation = 0;
  const uint64_t before = plugin_support::steady_clock_ns();
  TS_VK_CALL(dev->fn.vkGetCalibratedTimestampsEXT(dev->device, 2, info, stamps, &deviation),
             "vkGetCalibratedTimestampsEXT(DEVICE, CLOCK_MONOTONIC)");
  const uint64_t now = plugin_support::steady_clock_ns();
  if (dev->test_skew_calibrated_host) stamps[1] += 10 * kSecondNs;
  // The driver's answer is checked, not trusted: its CLOCK_MONOTONIC
  // reading is the host clock read between `before` and `now` (1 ms of
  // slack), and the deviation bounds the window without overflowing.
  constexpr uint64_t kSlackNs = 1000 * 1000;
  if (stamps[1] + kSlackNs < before || stamps[1] > now + kSlackNs) {
    // An offset it gave before is dropped too.
    dev->calibrated_timestamps_bad.store(true, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lk(dev->mu);
      dev->stamp_clock.valid = false;
    }
    plugin_support::LogWarning(strprintf(
        "vulkan: vkGetCalibratedTimestampsEXT on %s read CLOCK_MONOTONIC as %llu ns, outside the "
        "host's reads around the call [%llu, %llu]: its calibrated timestamps are not used; "
        "completion times are calibrated through the queue",
        dev->props.deviceName, static_cast<unsigned long long>(stamps[1]),
        static_cast<unsigned long long>(before), static_cast<unsigned long long>(now)));
    return nullptr;
  }
  const uint64_t window = deviation > UINT64_MAX / 2 ? UINT64_MAX : 2 * deviation;
  std::lock_guard<std::mutex> lk(dev->mu);
  offer_offset_locked(dev, stamps[0] & tick_mask(dev), stamps[1], window, now);
  return nullptr;
}

void discard(TsError* e) {
  if (!e) return;
  TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  plugin_support::Error_Destroy(&da);
}

}  // namespace

void calibrate_stamp_clock_at_creation(TsDevice* dev) {
  std::lock_guard<std::mutex> calib(dev->calibrate_mu);
  if (dev->calibrated_timestamps) {
    // The extension's answer is checked now, while the queue is idle: a
    // driver whose clock disagrees is calibrated through the queue below.
    discard(calibrate_with_extension(dev));
    if (!dev->calibrated_timestamps_bad.load(std::memory_order_relaxed)) return;
  }
  // A window widened by the host being descheduled (a loaded machine) is
  // measured again: the narrowest of a few is kept (offer_offset_locked).
  for (int i = 0; i < kCreationTries; ++i) {
    TsError* e = calibrate_through_queue(dev);
    if (e) return discard(e);
    std::lock_guard<std::mutex> lk(dev->mu);
    if (dev->stamp_clock.window_ns <= kGoodWindowNs) return;
  }
}

TsError* ensure_stamp_clock(TsDevice* dev) {
  if (!dev->timestamps)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: the queue family of %s has no timestamps (timestampValidBits = 0): "
                  "no completion times on this device",
                  dev->props.deviceName);
  if (plugin_support::steady_clock_ns() < dev->stamp_clock_fresh_until.load(std::memory_order_acquire))
    return nullptr;
  std::lock_guard<std::mutex> calib(dev->calibrate_mu);
  // Another thread may have looked while this one waited.
  const uint64_t now = plugin_support::steady_clock_ns();
  if (now < dev->stamp_clock_fresh_until.load(std::memory_order_acquire)) return nullptr;
  bool valid = false, renew = false;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    valid = dev->stamp_clock.valid;
    renew = now - dev->stamp_clock.taken_ns > kOffsetMaxAgeNs;
  }
  uint64_t next_look = kQueueLookNs;
  TsError* e = nullptr;
  if (dev->calibrated_timestamps && !dev->calibrated_timestamps_bad.load(std::memory_order_relaxed)) {
    e = calibrate_with_extension(dev);
    next_look = kExtensionRereadNs;
    if (!e && dev->calibrated_timestamps_bad.load(std::memory_order_relaxed)) {
      // A driver whose clock disagrees with the host's (warned once, its
      // offset dropped): measure through the queue.
      valid = false;
      e = calibrate_through_queue(dev);
      next_look = kQueueLookNs;
    }
  } else if (!valid) {
    // The calibration at creation failed: this one may wait.
    e = calibrate_through_queue(dev);
  } else if (renew) {
    // A busy device keeps the offset it has.
    e = calibrate_through_queue(dev, /*only_if_quiet=*/true);
  }
  if (e && !valid) return e;
  discard(e);  // a failed renewal: the offset we have stays
  dev->stamp_clock_fresh_until.store(now + next_look, std::memory_order_release);
  return nullptr;
}

TsError* record_stamp_locked(StreamState& s, uint64_t* out) {
  TsDevice* dev = s.dev;
  StampSlot slot;
  TS_VK_RETURN_IF_ERROR(take_stamp_slot_locked(dev, &slot));
  slot.out = out;
  bool recorded = false;
  TsError* e = write_query_locked(s, slot, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, true, &recorded);
  // Not recorded: the slot is free again.  Recorded, whatever happened
  // next: its batch is reaped as usual (a failed submit signals it from the
  // host) and writes it.
  if (!recorded) {
    slot.out = nullptr;
    dev->free_stamps.push_back(slot);
  }
  return e;
}

void write_stamps_locked(TsDevice* dev, Batch& b) {
  if (b.stamps.empty()) return;
  const bool valid = dev->stamp_clock.valid;
  const uint64_t now = plugin_support::steady_clock_ns();
  for (StampSlot& slot : b.stamps) {
    uint64_t ticks = 0, t = 0;
    if (valid && read_stamp(slot, &ticks)) {
      // A point is reaped after it completed: a later time (a query that
      // reads garbage, a clock that jumped) is cut to now.
      t = std::min(ticks_to_host_ns(dev, ticks, now), now);
    } else {
      // A submit that failed (its batch never ran) or an unreadable
      // query: the work is over as far as the caller can observe, and now
      // is an upper bound.
      t = plugin_support::steady_clock_ns();
    }
    __atomic_store_n(slot.out, t ? t : 1, __ATOMIC_RELEASE);
    slot.out = nullptr;
    dev->free_stamps.push_back(slot);
  }
  b.stamps.clear();
}

void release_stamps(TsDevice* dev) {
  for (TsDevice::StampPool& p : dev->stamp_pools) {
    dev->fn.vkDestroyQueryPool(dev->device, p.queries, nullptr);
    release(dev, p.readback);
  }
  dev->stamp_pools.clear();
  dev->free_stamps.clear();
  dev->retiring_stamps.clear();
}

TS_VK_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("vulkan", "Stream_WriteTimestamp", args->timestamp_ns))
    return e;
  StreamState& s = *args->stream->state;
  TsDevice* dev = args->stream->device;
  auto refuse_capture = [&] {
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_WriteTimestamp: %s is capturing a graph, and a graph "
                  "replayed later has nowhere to write the time: end the capture first",
                  s.label.c_str());
  };
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    if (s.capture) return refuse_capture();
  }
  TS_VK_RETURN_IF_ERROR(ensure_stamp_clock(dev));
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s.capture) return refuse_capture();
  return record_stamp_locked(s, args->timestamp_ns);
}

}  // namespace tessera::vk
