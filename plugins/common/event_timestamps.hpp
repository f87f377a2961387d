// Stream_WriteTimestamp (ABI 1.3) for runtimes whose only device clock is
// the timing event: CUDA (cuEvent*) and HIP (hipEvent*).  Each plugin keeps
// one EventTimestamps per device and one Queue per stream, and supplies a
// small Driver (below) that makes the runtime calls.
//
// WHY EVENTS.  Neither runtime has "write the time into host memory when
// the stream gets here".  A point is a timing event recorded on the stream
// (no kernel, no host callback, nothing later work waits for); the time is
// written by the plugin itself when a call lets the caller observe that the
// work completed: Stream_Synchronize, Stream_Query idle, Device_Synchronize,
// Event_Synchronize / Event_Query complete.  A new point also writes the
// completed points of its stream once kDrainAt wait, so a long queue drains
// as it runs (what TESSERA_TRACE reads without waiting) without a driver
// query on every launch.
//
// CLOCK.  The elapsed time between two events is measured on the device's
// clock.  A calibration event recorded on an idle private stream and
// synchronized has a known host time (the middle of the record and the
// synchronize, about 10 us apart), so a point's host time is that plus the
// elapsed time.  The calibration is renewed every second: the elapsed time
// comes as float milliseconds (0.06 us at 1 s) and the device clock drifts
// from the host's by parts per million.  A renewal whose event does not
// complete within kRenewWaitNs (queued behind other work on a shared
// hardware queue) keeps the old calibration and is retried kRetryNs later;
// only the first one waits for its event.
//
// LOCKS.  A queue's lock covers recording its points and writing them, so a
// point is never popped without being written (a second thread's
// synchronize cannot return before the first thread's write).  clock_mu_
// covers the calibration, its stream and the spare events; the two are
// never held together.  Every call expects the device current on the
// calling thread (the plugin binds it first).
//
// A Driver is a small copyable value with:
//   using Event = ...;  using Stream = ...;        (handles; {} is none)
//   uint64_t now_ns() const;                       host CLOCK_MONOTONIC
//   TsError* create_event(Event*, const char* what) const;   timing enabled
//   void destroy_event(Event) const;
//   TsError* record(Event, Stream, const char* what) const;
//   EventState query(Event, TsError** error) const;  error may be NULL
//   TsError* synchronize(Event, const char* what) const;
//   bool elapsed_ms(Event from, Event to, float* ms) const;
//   TsError* create_clock_stream(Stream*) const;  non-blocking, top priority
//   void destroy_stream(Stream) const;
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "plugin_support.hpp"
#include "tessera/plugin.h"

namespace tessera::plugin_support {

enum class EventState { kComplete, kNotReady, kFailed };

template <class Driver>
class EventTimestamps {
 public:
  using Event = typename Driver::Event;
  using Stream = typename Driver::Stream;

  // Calibration renewed after this long (see CLOCK above).
  static constexpr uint64_t kRecalibrateNs = 1000000000;
  // A renewal waits this long for its event, polling: a device whose
  // streams outnumber its hardware queues puts the calibration stream behind
  // another stream's work, and a point must not block the host until a long
  // kernel ends.  The old calibration is kept and the renewal retried after
  // kRetryNs: the float milliseconds still resolve about 1 us at 10 s.
  static constexpr uint64_t kRenewWaitNs = 200000;
  static constexpr uint64_t kRetryNs = 100000000;
  // A new point writes the completed ones before it once this many wait: a
  // query per point would cost a driver call on every launch of a loop.
  static constexpr size_t kDrainAt = 32;

 private:
  struct ClockBase {
    explicit ClockBase(const Driver& d) : drv(d) {}
    ~ClockBase() {
      if (event) drv.destroy_event(event);
    }
    Driver drv;
    Event event{};         // recorded and completed
    uint64_t host_ns = 0;  // host time of its completion
  };
  struct Pending {
    Event event{};
    uint64_t* out = nullptr;  // the caller's; written once with release
    std::shared_ptr<ClockBase> base;
  };

 public:
  // The points of one stream in stream order, with their own lock.
  class Queue {
    friend class EventTimestamps;
    std::mutex mu_;
    std::deque<Pending> pending_;
  };

  explicit EventTimestamps(Driver drv) : drv_(drv) {}
  EventTimestamps(const EventTimestamps&) = delete;
  EventTimestamps& operator=(const EventTimestamps&) = delete;
  // release() must have run (with the device current) before this.
  ~EventTimestamps() = default;

  // Records a point on `stream` (whose points `q` holds) whose completion
  // time goes to *out.  The caller checked the arguments and the capture.
  TsError* record(Queue& q, Stream stream, uint64_t* out) {
    std::shared_ptr<ClockBase> base;
    Event event{};
    if (TsError* e = prepare_point(&base, &event)) return e;
    std::vector<Event> done;
    flush_queue(q, false, kDrainAt, &done);
    TsError* err;
    {
      std::lock_guard<std::mutex> lk(q.mu_);
      err = drv_.record(event, stream, "timestamp");
      if (!err) {
        q.pending_.push_back(Pending{event, out, std::move(base)});
        pending_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (err) done.push_back(event);
    give_back(done);
    return err;
  }

  // False when no point waits anywhere: the observing calls (Event_Query is
  // polled) skip the queues.  A relaxed read suffices: a point recorded by
  // another thread is ordered with this observer only through the driver
  // call that observed its work, which happened after the record returned.
  bool any_pending() const { return pending_.load(std::memory_order_relaxed) != 0; }

  // Writes the times of the completed points at the front of `q`, in
  // stream order.  `synchronized`: the caller has just waited for all of
  // the queue's work, so no point needs asking whether it completed.
  void flush(Queue& q, bool synchronized) {
    if (!any_pending()) return;
    std::vector<Event> done;
    flush_queue(q, synchronized, 1, &done);
    give_back(done);
  }
  void flush_orphans(bool synchronized) { flush(orphans_, synchronized); }

  // Stream_Destroy: the points of `q` still pending move to the device,
  // written by its later synchronizes.
  void orphan(Queue& q) {
    std::deque<Pending> left;
    {
      std::lock_guard<std::mutex> lk(q.mu_);
      left.swap(q.pending_);
    }
    if (left.empty()) return;
    std::lock_guard<std::mutex> lk(orphans_.mu_);
    for (auto& p : left) orphans_.pending_.push_back(std::move(p));
  }

  // The device goes away: the events of `also` (the default stream's
  // queue) and of the orphans, the spares, the calibration and its stream.
  // Points not yet written stay unwritten: their memory may be gone.
  void release(Queue* also) {
    if (also) drop(*also);
    drop(orphans_);
    std::lock_guard<std::mutex> lk(clock_mu_);
    for (Event e : spare_events_) drv_.destroy_event(e);
    spare_events_.clear();
    base_.reset();
    if (clock_stream_) drv_.destroy_stream(clock_stream_);
    clock_stream_ = Stream{};
  }

 private:
  // Records `b->event` on the calibration stream and waits for it: without
  // a limit (`wait_ns` 0) or for at most `wait_ns`, polling.  *done: it
  // completed and b->host_ns is set; false when the limit passed first.
  TsError* calibrate(ClockBase* b, uint64_t wait_ns, bool* done) {
    *done = false;
    const uint64_t t0 = drv_.now_ns();
    if (TsError* e = drv_.record(b->event, clock_stream_, "timestamp calibration")) return e;
    if (wait_ns == 0) {
      if (TsError* e = drv_.synchronize(b->event, "timestamp calibration")) return e;
    } else {
      for (;;) {
        TsError* e = nullptr;
        const EventState st = drv_.query(b->event, &e);
        if (st == EventState::kComplete) break;
        if (st == EventState::kFailed) return e;
        if (drv_.now_ns() - t0 > wait_ns) return nullptr;
      }
    }
    const uint64_t t1 = drv_.now_ns();
    b->host_ns = t0 + (t1 - t0) / 2;
    *done = true;
    return nullptr;
  }

  // A calibration less than kRecalibrateNs old and an event for a point,
  // from the spares.
  TsError* prepare_point(std::shared_ptr<ClockBase>* base, Event* event) {
    std::lock_guard<std::mutex> lk(clock_mu_);
    const uint64_t now = drv_.now_ns();
    if (!base_ || (now - base_->host_ns > kRecalibrateNs && now >= retry_ns_)) {
      if (!clock_stream_)
        if (TsError* e = drv_.create_clock_stream(&clock_stream_)) return e;
      auto b = std::make_shared<ClockBase>(drv_);
      if (TsError* e = drv_.create_event(&b->event, "timestamp calibration")) return e;
      bool done = false;
      if (TsError* e = calibrate(b.get(), base_ ? kRenewWaitNs : 0, &done)) return e;
      if (done)
        base_ = std::move(b);
      else  // queued behind other work: keep the old one (b's event freed)
        retry_ns_ = drv_.now_ns() + kRetryNs;
    }
    *base = base_;
    if (!spare_events_.empty()) {
      *event = spare_events_.back();
      spare_events_.pop_back();
      return nullptr;
    }
    return drv_.create_event(event, "timestamp");
  }

  void give_back(const std::vector<Event>& events) {
    if (events.empty()) return;
    std::lock_guard<std::mutex> lk(clock_mu_);
    spare_events_.insert(spare_events_.end(), events.begin(), events.end());
  }

  // Writes the completed points at the front of `q`; appends their events
  // to *done.  Nothing is done while fewer than `min_pending` wait.
  void flush_queue(Queue& q, bool synchronized, size_t min_pending, std::vector<Event>* done) {
    std::lock_guard<std::mutex> lk(q.mu_);
    if (q.pending_.size() < min_pending) return;
    while (!q.pending_.empty()) {
      Pending& p = q.pending_.front();
      const EventState st = synchronized ? EventState::kComplete : drv_.query(p.event, nullptr);
      if (st == EventState::kNotReady) break;
      uint64_t t = 0;
      float ms = 0;
      if (st == EventState::kComplete && drv_.elapsed_ms(p.base->event, p.event, &ms) &&
          std::isfinite(ms)) {
        t = p.base->host_ns + static_cast<uint64_t>(std::llround(std::max(0.0f, ms) * 1e6));
      } else {
        // A failed stream (a kernel fault is sticky): the work is over as
        // far as the caller can observe; now is an upper bound.
        t = drv_.now_ns();
      }
      __atomic_store_n(p.out, t ? t : 1, __ATOMIC_RELEASE);
      done->push_back(p.event);
      q.pending_.pop_front();
      pending_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  void drop(Queue& q) {
    std::lock_guard<std::mutex> lk(q.mu_);
    for (auto& p : q.pending_) drv_.destroy_event(p.event);
    pending_.fetch_sub(static_cast<int64_t>(q.pending_.size()), std::memory_order_relaxed);
    q.pending_.clear();
  }

  const Driver drv_;
  std::mutex clock_mu_;  // see LOCKS above
  std::shared_ptr<ClockBase> base_;
  Stream clock_stream_{};   // for calibration only
  uint64_t retry_ns_ = 0;   // no renewal before (one was stuck)
  std::vector<Event> spare_events_;
  Queue orphans_;           // points of destroyed streams
  // Points recorded and not yet written, over every queue.
  std::atomic<int64_t> pending_{0};
};

// The plugin side, for a plugin's TsDevice `dev` whose `mu` guards its set
// of created `streams`, with its `default_stream` and its `stamps` (an
// EventTimestamps, made with the device), each stream with its queue
// `stamps`.  `bind` makes the device current on the calling thread; when it
// fails nothing was observable either, so its error is freed and nothing is
// written.
template <class Device>
using BindDevice = TsError* (*)(const Device*) noexcept;

template <class Device>
bool bind_if_pending(Device* dev, BindDevice<Device> bind) {
  if (!dev->stamps || !dev->stamps->any_pending()) return false;
  if (TsError* e = bind(dev)) {
    TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
    Error_Destroy(&a);
    return false;
  }
  return true;
}

// Writes the completed points of stream `s`.
template <class Stream, class Device>
void flush_stream_points(Stream* s, bool synchronized, BindDevice<Device> bind) {
  if (bind_if_pending(s->device, bind)) s->device->stamps->flush(s->stamps, synchronized);
}

// Writes the completed points of every stream of `dev`, and its orphans.
template <class Device>
void flush_device_points(Device* dev, bool synchronized, BindDevice<Device> bind) {
  if (!bind_if_pending(dev, bind)) return;
  {
    std::lock_guard<std::mutex> lk(dev->mu);  // the stream list; then each queue
    for (auto* s : dev->streams) dev->stamps->flush(s->stamps, synchronized);
  }
  if (dev->default_stream) dev->stamps->flush(dev->default_stream->stamps, synchronized);
  dev->stamps->flush_orphans(synchronized);
}

// ~TsDevice: the events of the default stream's points and the orphans,
// the spares, the calibration.
template <class Device>
void release_device_points(Device* dev, BindDevice<Device> bind) {
  if (!dev->stamps) return;
  if (TsError* e = bind(dev)) {
    TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
    Error_Destroy(&a);
    return;
  }
  dev->stamps->release(dev->default_stream ? &dev->default_stream->stamps : nullptr);
}

}  // namespace tessera::plugin_support
