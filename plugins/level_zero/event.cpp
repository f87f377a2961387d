// Events: slots from event pools (zeEventPoolCreate with HOST_VISIBLE, and
// KERNEL_TIMESTAMP for the pools of timing events; zeEventCreate with host
// scope), recycled with zeEventHostReset once signalled and unreferenced.
//
// Event_Record appends a barrier that signals a marker (zeCommandListAppendBarrier
// with no wait events: after every earlier command of the stream); a timing
// event always gets a fresh marker from the timestamp pools, an untimed one
// shares the stream's newest marker when that already covers everything.
// Re-recording points the event at the new marker; a stream that waits on
// the old one keeps it alive until the wait is behind it (internal.hpp).
// Event_Query is zeEventQueryStatus, Event_Synchronize zeEventHostSynchronize,
// Event_ElapsedTime the two barriers' end timestamps
// (zeEventQueryTimestampsExp where the driver has it, else
// zeEventQueryKernelTimestamp) times the device's timer resolution.
#include <algorithm>

#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::level_zero {

TsError* EventAllocator::Acquire(EventSlot** out) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_)
    return errorf(TS_ERROR_FAILED_PRECONDITION, "level_zero: the client was destroyed");
  if (free_.empty()) {
    // Recycle what the driver reports signalled (nothing references them).
    for (size_t i = 0; i < retired_.size();) {
      EventSlot* s = retired_[i];
      if (fn_->zeEventQueryStatus(s->event) == ZE_RESULT_SUCCESS &&
          fn_->zeEventHostReset(s->event) == ZE_RESULT_SUCCESS) {
        free_.push_back(s);
        retired_[i] = retired_.back();
        retired_.pop_back();
      } else {
        ++i;
      }
    }
  }
  if (free_.empty()) {
    if (pools_.size() >= kMaxEventPools)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "level_zero: %zu events are in use (recorded, or waited on by streams that "
                    "were never synchronized); synchronize streams or destroy events",
                    pools_.size() * kEventsPerPool);
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
               (timestamps_ ? static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) : 0u);
    pd.count = kEventsPerPool;
    ze_event_pool_handle_t pool = nullptr;
    // No device list: the pool is visible to every device of the context.
    ze_result_t r = fn_->zeEventPoolCreate(ctx_, &pd, 0, nullptr, &pool);
    if (r != ZE_RESULT_SUCCESS)
      return ze_error(fn_, driver_, r,
                      strprintf("zeEventPoolCreate(%u events%s)", kEventsPerPool,
                                timestamps_ ? ", KERNEL_TIMESTAMP" : ""));
    pools_.push_back(pool);
    for (uint32_t i = 0; i < kEventsPerPool; ++i) {
      ze_event_desc_t ed{};
      ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
      ed.index = i;
      ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
      ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
      auto slot = std::make_unique<EventSlot>();
      r = fn_->zeEventCreate(pool, &ed, &slot->event);
      if (r != ZE_RESULT_SUCCESS) {
        if (i == 0) return ze_error(fn_, driver_, r, "zeEventCreate");
        break;  // keep the ones made
      }
      free_.push_back(slot.get());
      slots_.push_back(std::move(slot));
    }
  }
  *out = free_.back();
  free_.pop_back();
  return nullptr;
}

void EventAllocator::Release(EventSlot* slot, bool appended) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return;
  if (appended)
    retired_.push_back(slot);  // reset once signalled (Acquire)
  else
    free_.push_back(slot);
}

void EventAllocator::Close() {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return;
  closed_ = true;
  for (auto& s : slots_) fn_->zeEventDestroy(s->event);
  for (ze_event_pool_handle_t p : pools_) fn_->zeEventPoolDestroy(p);
  slots_.clear();
  pools_.clear();
  free_.clear();
  retired_.clear();
}

TsError* new_marker(TsDevice* dev, bool timed, MarkerRef* out) {
  auto m = std::make_shared<Marker>();
  m->alloc = timed ? dev->events_timed : dev->events_plain;
  m->device = dev;
  TS_ZE_RETURN_IF_ERROR(m->alloc->Acquire(&m->slot));
  *out = std::move(m);
  return nullptr;
}

namespace {

// The end of the command that signalled `m`, in device timer ticks.
TsError* end_timestamp(const MarkerRef& m, uint64_t* out) {
  const TsDevice* dev = m->device;
  const ZeFns& fn = *dev->fn;
  if (fn.zeEventQueryTimestampsExp) {
    uint32_t count = 0;
    if (fn.zeEventQueryTimestampsExp(m->event(), dev->ze, &count, nullptr) == ZE_RESULT_SUCCESS &&
        count > 0 && count <= 64) {
      std::vector<ze_kernel_timestamp_result_t> ts(count);
      if (fn.zeEventQueryTimestampsExp(m->event(), dev->ze, &count, ts.data()) ==
              ZE_RESULT_SUCCESS &&
          count > 0) {
        // One per sub-device (tile): the last to finish.
        uint64_t end = 0;
        for (uint32_t i = 0; i < std::min<size_t>(count, ts.size()); ++i)
          end = std::max(end, ts[i].global.kernelEnd);
        *out = end;
        return nullptr;
      }
    }
  }
  ze_kernel_timestamp_result_t ts{};
  TS_ZE_CALL(dev, fn.zeEventQueryKernelTimestamp(m->event(), &ts), "zeEventQueryKernelTimestamp");
  *out = ts.global.kernelEnd;
  return nullptr;
}

}  // namespace

TS_ZE_ENTRY(Event_Create, TS_EVENT_CREATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Event_Create", "device");
  if (args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Event_Create: unknown flags 0x%x",
                  args->flags);
  auto* ev = new TsEvent;
  ev->device = args->device;
  ev->flags = args->flags;
  args->device->live_events.add(ev);
  args->event = ev;
  return nullptr;
}

TS_ZE_ENTRY(Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->event, "Event_Destroy", "event");
  TsEvent* ev = args->event;
  // Returns at once: a pending record completes, and streams waiting on it
  // keep its marker alive.
  {
    std::lock_guard<std::mutex> lk(ev->device->mu);
    std::lock_guard<std::mutex> elk(ev->mu);
    ev->record.reset();
  }
  ev->device->live_events.remove(ev);
  ev->magic = kMagicDead;
  delete ev;
  return nullptr;
}

TS_ZE_ENTRY(Event_Record, TS_EVENT_RECORD_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->event, "Event_Record", "event");
  TS_ZE_CHECK_HANDLE(args->stream, "Event_Record", "stream");
  TsEvent* ev = args->event;
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (ev->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Event_Record: the event belongs to device %u and the stream to "
                  "device %u; record an event on a stream of its own device",
                  ev->device->ordinal, dev->ordinal);
  const bool timed = (ev->flags & TS_EVENT_DISABLE_TIMING) == 0;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s->capture) {
    capture_record_event_locked(s, ev);  // no command: a point in the graph
    return nullptr;
  }
  // The default stream's ordering applies to a record as to any command.
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  MarkerRef m;
  TS_ZE_RETURN_IF_ERROR(marker_locked(s, timed, &m));
  std::lock_guard<std::mutex> elk(ev->mu);
  ev->record = std::move(m);
  ev->last_is_capture = false;
  ev->capture.reset();
  return nullptr;
}

TS_ZE_ENTRY(Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->event, "Event_Query", "event");
  TsEvent* ev = args->event;
  MarkerRef m;
  {
    std::lock_guard<std::mutex> lk(ev->mu);
    m = ev->record;
  }
  if (!m) {
    args->complete = 1;  // never recorded
    return nullptr;
  }
  ze_result_t r = m->device->fn->zeEventQueryStatus(m->event());
  if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_NOT_READY)
    return dev_error(m->device, r, "zeEventQueryStatus");
  args->complete = r == ZE_RESULT_SUCCESS ? 1 : 0;
  if (args->complete) {
    // The timestamps before the record are complete too.
    std::lock_guard<std::mutex> lk(ev->device->mu);
    observe_device_locked(ev->device);
  }
  return nullptr;
}

TS_ZE_ENTRY(Event_Synchronize, TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->event, "Event_Synchronize", "event");
  TsEvent* ev = args->event;
  MarkerRef m;
  {
    std::lock_guard<std::mutex> lk(ev->mu);
    m = ev->record;
  }
  TS_ZE_RETURN_IF_ERROR(wait_marker(m, "Event_Synchronize"));
  if (m) {
    // The timestamps before the record are complete too.
    std::lock_guard<std::mutex> lk(ev->device->mu);
    observe_device_locked(ev->device);
  }
  return nullptr;
}

TS_ZE_ENTRY(Event_ElapsedTime, TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->start, "Event_ElapsedTime", "start event");
  TS_ZE_CHECK_HANDLE(args->end, "Event_ElapsedTime", "end event");
  TsEvent* a = args->start;
  TsEvent* b = args->end;
  if (a->device->client != b->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Event_ElapsedTime: the events belong to different clients");
  for (TsEvent* e : {a, b})
    if (e->flags & TS_EVENT_DISABLE_TIMING)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "level_zero: Event_ElapsedTime: the %s event was created with "
                    "TS_EVENT_DISABLE_TIMING",
                    e == a ? "start" : "end");
  MarkerRef ma, mb;
  {
    std::lock_guard<std::mutex> lk(a->mu);
    ma = a->record;
  }
  if (a != b) {
    std::lock_guard<std::mutex> lk(b->mu);
    mb = b->record;
  } else {
    mb = ma;
  }
  for (const MarkerRef* m : {&ma, &mb})
    if (!*m)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "level_zero: Event_ElapsedTime: the %s event was never recorded",
                    m == &ma ? "start" : "end");
  if (a->device != b->device)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: Event_ElapsedTime: the events are on devices %u and %u, whose "
                  "timestamp counters are not comparable; time events of one device",
                  a->device->ordinal, b->device->ordinal);
  for (const MarkerRef* m : {&ma, &mb}) {
    ze_result_t r = a->device->fn->zeEventQueryStatus((*m)->event());
    if (r == ZE_RESULT_NOT_READY)
      return errorf(TS_ERROR_NOT_READY, "level_zero: Event_ElapsedTime: the %s event is pending",
                    m == &ma ? "start" : "end");
    if (r != ZE_RESULT_SUCCESS) return dev_error(a->device, r, "zeEventQueryStatus");
  }
  if (a->device->ticks_per_second <= 0)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: Event_ElapsedTime: %s reports no timer resolution",
                  a->device->ts.name);
  uint64_t ta = 0, tb = 0;
  TS_ZE_RETURN_IF_ERROR(end_timestamp(ma, &ta));
  TS_ZE_RETURN_IF_ERROR(end_timestamp(mb, &tb));
  args->milliseconds = elapsed_ms(ta, tb, a->device->timestamp_bits, a->device->ticks_per_second);
  return nullptr;
}

}  // namespace tessera::level_zero
