// Stream_WriteTimestamp (ABI 1.3) and TsKernel_Launch_Args.completion_ns.
//
// A point is zeCommandListAppendWriteGlobalTimestamp into a slot of host
// USM memory: the device writes its global timer there once the stream's
// earlier commands have completed (the list is in order, or a barrier
// precedes the write: prepare_op_locked).  The caller's memory may be any
// host memory, which the device cannot write, so the plugin converts the
// slot into host time and stores it into the caller's memory itself, when
// it sees the stream reach the point: poll_locked (run by every command
// appended to the stream and by every call that observes completion:
// Stream_Synchronize, Stream_Query, Device_Synchronize) and, for
// Event_Synchronize / Event_Query complete, observe_device_locked.  So the
// time is written before any call that observes the work returns, and a
// busy stream writes its points as it runs.
//
// CLOCK.  zeDeviceGetGlobalTimestamps reads the device timer together with
// a host clock, but which host clock is the driver's choice (Intel's is
// CLOCK_MONOTONIC_RAW), so the plugin brackets the call with two reads of
// its own clock (CLOCK_MONOTONIC, the ABI's) and takes their middle; a
// bracket wider than kMaxBracketNs (the thread was preempted) is retried,
// and the narrowest of kCalibrationTries kept.  The calibration is renewed
// when a conversion finds it older than kRecalibrateNs: the clocks drift
// apart by parts per million.  The timer's period is timerResolution; its
// wrap at timestampValidBits is handled in global_ticks_to_host_ns
// (mapping.hpp).
//
// SLOTS.  Host USM pages of kSlotsPerPage slots (zeMemAllocHost), reused
// once their point is written, freed with the device.  Everything here is
// guarded by TsDevice::mu.
#include <algorithm>

#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::level_zero {

namespace {

constexpr uint64_t kRecalibrateNs = 1000000000;
constexpr uint64_t kMaxBracketNs = 100000;
constexpr int kCalibrationTries = 3;
constexpr size_t kSlotsPerPage = 512;  // one 4 KiB page
// At most this many points wait per device: a caller that never
// synchronizes must not grow host memory without bound.
constexpr size_t kMaxSlots = 1u << 20;

// Renews the calibration when it is missing or old.  False when the driver
// gives none (then the points are written with the host time they are seen).
bool calibrate_locked(TsDevice* dev) {
  const uint64_t now = plugin_support::steady_clock_ns();
  if (dev->clock_host_ns != 0 && now - dev->clock_host_ns <= kRecalibrateNs) return true;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < kCalibrationTries && best_width > kMaxBracketNs; ++i) {
    uint64_t host = 0, ticks = 0;
    const uint64_t t0 = plugin_support::steady_clock_ns();
    const ze_result_t r = dev->fn->zeDeviceGetGlobalTimestamps(dev->ze, &host, &ticks);
    const uint64_t t1 = plugin_support::steady_clock_ns();
    if (r != ZE_RESULT_SUCCESS) break;
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      dev->clock_ticks = ticks;
      dev->clock_host_ns = t0 + (t1 - t0) / 2;
    }
  }
  return dev->clock_host_ns != 0;
}

TsError* take_slot_locked(TsDevice* dev, uint64_t** out) {
  if (dev->free_stamp_slots.empty()) {
    if (dev->stamp_pages.size() * kSlotsPerPage >= kMaxSlots)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "level_zero: Stream_WriteTimestamp: %zu timestamps of device %u are waiting "
                    "to be written: synchronize a stream (or the device) to write them",
                    kMaxSlots, dev->ordinal);
    ze_host_mem_alloc_desc_t hd{};
    hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    void* page = nullptr;
    TS_ZE_CALL(dev,
               dev->fn->zeMemAllocHost(dev->client->context, &hd, kSlotsPerPage * sizeof(uint64_t),
                                       sizeof(uint64_t), &page),
               "zeMemAllocHost(timestamp slots)");
    dev->stamp_pages.push_back(page);
    auto* slots = static_cast<uint64_t*>(page);
    for (size_t i = kSlotsPerPage; i-- > 0;) dev->free_stamp_slots.push_back(slots + i);
  }
  *out = dev->free_stamp_slots.back();
  dev->free_stamp_slots.pop_back();
  return nullptr;
}

}  // namespace

TsError* record_timestamp_locked(TsStream* s, uint64_t* out) {
  TsDevice* dev = s->device;
  // A replayed graph would have nowhere to write the time.
  TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, "Stream_WriteTimestamp"));
  uint64_t* slot = nullptr;
  TS_ZE_RETURN_IF_ERROR(take_slot_locked(dev, &slot));
  __atomic_store_n(slot, 0, __ATOMIC_RELAXED);
  MarkerRef m;
  TsError* e = prepare_op_locked(s);
  if (!e) e = op_marker_locked(s, &m);
  if (!e) {
    const ze_result_t r = dev->fn->zeCommandListAppendWriteGlobalTimestamp(
        s->list, slot, m ? m->event() : nullptr, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) e = dev_error(dev, r, "zeCommandListAppendWriteGlobalTimestamp");
  }
  if (e) {
    dev->free_stamp_slots.push_back(slot);
    return e;
  }
  commit_op_locked(s, std::move(m));  // polls: writes earlier points seen complete
  s->stamps.push_back(StampPoint{s->last_op, slot, out});
  return nullptr;
}

void write_timestamps_locked(TsDevice* dev, std::deque<StampPoint>* points, uint64_t done_upto) {
  if (points->empty() || points->front().seq > done_upto) return;
  const bool calibrated = calibrate_locked(dev);
  while (!points->empty() && points->front().seq <= done_upto) {
    const StampPoint& p = points->front();
    // The marker that showed the point complete was signalled after the
    // write (in-order list), so the slot holds the timer.  0: the driver
    // did not write it (a lost device); now is an upper bound.
    const uint64_t ticks = __atomic_load_n(p.slot, __ATOMIC_ACQUIRE);
    uint64_t t = plugin_support::steady_clock_ns();
    if (calibrated && ticks != 0 && dev->ticks_per_second > 0)
      t = global_ticks_to_host_ns(ticks, dev->clock_ticks, dev->clock_host_ns,
                                  dev->global_timestamp_bits, dev->ticks_per_second);
    __atomic_store_n(p.out, t ? t : 1, __ATOMIC_RELEASE);
    dev->free_stamp_slots.push_back(p.slot);
    points->pop_front();
  }
}

void observe_device_locked(TsDevice* dev) {
  for (TsStream* s : dev->streams) poll_locked(s);
  poll_locked(dev->default_stream);
  reap_retired_locked(dev);
}

void release_timestamp_slots(TsDevice* dev) {
  for (void* page : dev->stamp_pages) dev->fn->zeMemFree(dev->client->context, page);
  dev->stamp_pages.clear();
  dev->free_stamp_slots.clear();
}

TS_ZE_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("level_zero", "Stream_WriteTimestamp",
                                                        args->timestamp_ns))
    return e;
  // record_timestamp_locked refuses a capturing stream (graph.cpp).
  std::lock_guard<std::mutex> lk(args->stream->device->mu);
  return record_timestamp_locked(args->stream, args->timestamp_ns);
}

}  // namespace tessera::level_zero
