// Stream_WriteTimestamp (ABI 1.3) and TsKernel_Launch_Args.completion_ns.
//
// CUDA has no "write the time into host memory when the stream gets here"
// operation, so a point is a timing event (cuEventRecord: no kernel, no
// host callback, nothing later work waits for) and the time is written by
// the plugin itself when a call lets the caller observe that the work
// completed: Stream_Synchronize, Stream_Query idle, Device_Synchronize,
// Event_Synchronize / Event_Query complete.  A new point also writes the
// completed points of its stream once 32 wait, so a long queue drains as it
// runs (what TESSERA_TRACE reads without waiting) without a driver query
// on every launch.
//
// CLOCK.  cuEventElapsedTime gives the time between two events on the
// device's clock.  A calibration event recorded on an idle private stream
// and synchronized has a known host time (the middle of the record and the
// synchronize, about 10 us apart), so a point's host time is that plus the
// elapsed time.  The calibration is renewed every second: cuEventElapsedTime
// answers in float milliseconds (0.06 us at 1 s) and the device clock
// drifts from the host's by parts per million.  A renewal whose event does
// not complete within 200 us (queued behind other work on a shared
// hardware queue) keeps the old calibration and is retried 100 ms later;
// only the first one waits for its event.
//
// LOCKS.  A stream's StampQueue lock covers recording its points and
// writing them, so a point is never popped without being written (a second
// thread's synchronize cannot return before the first thread's write).  The
// device's clock_mu covers the calibration and the spare events; the two
// are never held together.
#include <cmath>

#include "internal.hpp"

namespace tessera::cuda {

namespace {

constexpr uint64_t kRecalibrateNs = 1000000000;  // see CLOCK above
// A renewal waits this long for its event, polling: a device whose streams
// outnumber its hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default)
// puts the calibration stream behind another stream's work, and a point
// must not block the host until a long kernel ends.  The old calibration
// is kept and the renewal retried after kRetryNs: its event has completed,
// and cuEventElapsedTime's float milliseconds still resolve about 1 us at
// 10 s of age.  The first calibration has nothing to keep and waits.
constexpr uint64_t kRenewWaitNs = 200000;
constexpr uint64_t kRetryNs = 100000000;

// Records `b->event` on the calibration stream and waits for it: without
// a limit (`wait_ns` 0) or for at most `wait_ns`, polling.  *done: it
// completed, and b->host_ns is set; false when the limit passed first.
TsError* calibrate(TsDevice* dev, ClockBase* b, uint64_t wait_ns, bool* done) {
  *done = false;
  const uint64_t t0 = plugin_support::steady_clock_ns();
  TS_CU_CALL(dev, dev->fn->cuEventRecord(b->event, dev->clock_stream), "cuEventRecord(timestamp calibration)");
  if (wait_ns == 0) {
    TS_CU_CALL(dev, dev->fn->cuEventSynchronize(b->event), "cuEventSynchronize(timestamp calibration)");
  } else {
    for (;;) {
      const CUresult r = dev->fn->cuEventQuery(b->event);
      if (r == CUDA_SUCCESS) break;
      if (r != CUDA_ERROR_NOT_READY) return dev_error(dev, r, "cuEventQuery(timestamp calibration)");
      if (plugin_support::steady_clock_ns() - t0 > wait_ns) return nullptr;
    }
  }
  const uint64_t t1 = plugin_support::steady_clock_ns();
  b->host_ns = t0 + (t1 - t0) / 2;
  *done = true;
  return nullptr;
}
// A new point writes the completed ones before it once this many wait: a
// query per point would cost a driver call on every launch of a traced loop.
constexpr size_t kDrainAt = 32;

// A calibration less than a second old and an event for a point, from the
// device's spares.  Needs the device bound.
TsError* prepare_point(TsDevice* dev, std::shared_ptr<ClockBase>* base, CUevent* event) {
  std::lock_guard<std::mutex> lk(dev->clock_mu);
  const uint64_t now = plugin_support::steady_clock_ns();
  if (!dev->clock_base ||
      (now - dev->clock_base->host_ns > kRecalibrateNs && now >= dev->clock_retry_ns)) {
    if (!dev->clock_stream)
      // The greatest priority: the calibration event should not queue
      // behind other work to be picked up.
      TS_CU_CALL(dev,
                 dev->fn->cuStreamCreateWithPriority(&dev->clock_stream, CU_STREAM_NON_BLOCKING,
                                                     dev->priority_greatest),
                 "cuStreamCreateWithPriority(timestamp calibration stream)");
    auto b = std::make_shared<ClockBase>();
    b->fn = dev->fn;
    TS_CU_CALL(dev, dev->fn->cuEventCreate(&b->event, CU_EVENT_DEFAULT),
               "cuEventCreate(timestamp calibration)");
    bool done = false;
    TS_CU_RETURN_IF_ERROR(calibrate(dev, b.get(), dev->clock_base ? kRenewWaitNs : 0, &done));
    if (done) {
      dev->clock_base = std::move(b);
    } else {
      // Queued behind other work: keep the old calibration.  The event is
      // destroyed now (the driver frees it when it completes).
      dev->clock_retry_ns = plugin_support::steady_clock_ns() + kRetryNs;
    }
  }
  *base = dev->clock_base;
  if (!dev->spare_stamp_events.empty()) {
    *event = dev->spare_stamp_events.back();
    dev->spare_stamp_events.pop_back();
    return nullptr;
  }
  TS_CU_CALL(dev, dev->fn->cuEventCreate(event, CU_EVENT_DEFAULT), "cuEventCreate(timestamp)");
  return nullptr;
}

void give_back_events(TsDevice* dev, const std::vector<CUevent>& events) {
  if (events.empty()) return;
  std::lock_guard<std::mutex> lk(dev->clock_mu);
  dev->spare_stamp_events.insert(dev->spare_stamp_events.end(), events.begin(), events.end());
}

// Writes the completed points at the front of `q`; returns their events.
// `synchronized`: the caller has just waited for all of the queue's work,
// so no point needs asking whether it completed.  Nothing is done while
// fewer than `min_pending` points wait.  The device is bound by the caller.
void flush_queue(TsDevice* dev, StampQueue& q, bool synchronized, size_t min_pending,
                 std::vector<CUevent>* done) {
  std::lock_guard<std::mutex> lk(q.mu);
  if (q.pending.size() < min_pending) return;
  while (!q.pending.empty()) {
    PendingStamp& p = q.pending.front();
    const CUresult r = synchronized ? CUDA_SUCCESS : dev->fn->cuEventQuery(p.event);
    if (r == CUDA_ERROR_NOT_READY) break;
    uint64_t t = 0;
    float ms = 0;
    if (r == CUDA_SUCCESS &&
        dev->fn->cuEventElapsedTime(&ms, p.base->event, p.event) == CUDA_SUCCESS &&
        std::isfinite(ms)) {
      t = p.base->host_ns + static_cast<uint64_t>(std::llround(std::max(0.0f, ms) * 1e6));
    } else {
      // A failed stream (a kernel fault is sticky): the work is over as
      // far as the caller can observe; now is an upper bound.
      t = plugin_support::steady_clock_ns();
    }
    __atomic_store_n(p.out, t ? t : 1, __ATOMIC_RELEASE);
    done->push_back(p.event);
    q.pending.pop_front();
    dev->pending_stamps.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace

ClockBase::~ClockBase() {
  if (fn && event) fn->cuEventDestroy(event);
}

TsError* refuse_timestamp(TsStream* s, const char* what) {
  if (capture_of(s))
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cuda: %s: the stream is capturing a graph, and a graph replayed later has "
                  "nowhere to write the time: end the capture first",
                  what);
  if (s->is_default) return refuse_sync_while_capturing(s->device, "a timestamp on the default stream");
  return nullptr;
}

TsError* record_timestamp(TsStream* s, uint64_t* out) {
  TsDevice* dev = s->device;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  std::shared_ptr<ClockBase> base;
  CUevent event = nullptr;
  TS_CU_RETURN_IF_ERROR(prepare_point(dev, &base, &event));
  std::vector<CUevent> done;
  flush_queue(dev, s->stamps, false, kDrainAt, &done);
  CUresult r;
  {
    std::lock_guard<std::mutex> lk(s->stamps.mu);
    r = dev->fn->cuEventRecord(event, s->stream);
    if (r == CUDA_SUCCESS) {
      s->stamps.pending.push_back(PendingStamp{event, out, std::move(base)});
      dev->pending_stamps.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (r != CUDA_SUCCESS) done.push_back(event);
  give_back_events(dev, done);
  return r == CUDA_SUCCESS ? nullptr : dev_error(dev, r, "cuEventRecord(timestamp)");
}

void flush_timestamps(TsStream* s, bool synchronized) {
  TsDevice* dev = s->device;
  if (dev->pending_stamps.load(std::memory_order_relaxed) == 0) return;
  if (bind(dev) != nullptr) return;  // nothing observable was possible either
  std::vector<CUevent> done;
  flush_queue(dev, s->stamps, synchronized, 1, &done);
  give_back_events(dev, done);
}

void flush_device_timestamps(TsDevice* dev, bool synchronized) {
  // A relaxed read suffices: a point recorded by another thread is ordered
  // with this observer only through the driver call that observed its
  // work, which happened after the record (and its increment) returned.
  if (dev->pending_stamps.load(std::memory_order_relaxed) == 0) return;
  if (bind(dev) != nullptr) return;
  std::vector<CUevent> done;
  {
    std::lock_guard<std::mutex> lk(dev->mu);  // the stream list; then each queue
    for (TsStream* s : dev->streams) flush_queue(dev, s->stamps, synchronized, 1, &done);
  }
  if (dev->default_stream) flush_queue(dev, dev->default_stream->stamps, synchronized, 1, &done);
  flush_queue(dev, dev->orphan_stamps, synchronized, 1, &done);
  give_back_events(dev, done);
}

void orphan_timestamps(TsStream* s) {
  TsDevice* dev = s->device;
  std::deque<PendingStamp> left;
  {
    std::lock_guard<std::mutex> lk(s->stamps.mu);
    left.swap(s->stamps.pending);
  }
  if (left.empty()) return;
  std::lock_guard<std::mutex> lk(dev->orphan_stamps.mu);
  for (auto& p : left) dev->orphan_stamps.pending.push_back(std::move(p));
}

void release_device_timestamps(TsDevice* dev) {
  if (!dev->fn || bind(dev) != nullptr) return;
  auto drop = [&](StampQueue& q) {
    std::lock_guard<std::mutex> lk(q.mu);
    for (auto& p : q.pending) dev->fn->cuEventDestroy(p.event);
    q.pending.clear();
  };
  if (dev->default_stream) drop(dev->default_stream->stamps);
  drop(dev->orphan_stamps);
  std::lock_guard<std::mutex> lk(dev->clock_mu);
  for (CUevent e : dev->spare_stamp_events) dev->fn->cuEventDestroy(e);
  dev->spare_stamp_events.clear();
  dev->clock_base.reset();
  if (dev->clock_stream) dev->fn->cuStreamDestroy(dev->clock_stream);
  dev->clock_stream = nullptr;
}

TS_CU_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("cuda", "Stream_WriteTimestamp", args->timestamp_ns))
    return e;
  TS_CU_RETURN_IF_ERROR(refuse_timestamp(args->stream, "Stream_WriteTimestamp"));
  return record_timestamp(args->stream, args->timestamp_ns);
}

}  // namespace tessera::cuda
