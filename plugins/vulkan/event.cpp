// Events: a (stream timeline semaphore, value) pair, plus a timestamp query
// written where the event is recorded when timing is on.
#include <algorithm>

#include "internal.hpp"

namespace tessera::vk {

TS_VK_ENTRY(Event_Create, TS_EVENT_CREATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Event_Create", "device");
  if (args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Event_Create: unknown flags 0x%x",
                  args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING));
  TsDevice* dev = args->device;
  auto* ev = new TsEvent;
  ev->device = dev;
  ev->flags = args->flags;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (!(args->flags & TS_EVENT_DISABLE_TIMING) && dev->timestamps) {
    if (TsError* e = take_stamp_slot_locked(dev, &ev->stamp)) {
      delete ev;
      return e;
    }
    ev->timed = true;
  }
  dev->live.events.insert(ev);
  args->event = ev;
  return nullptr;
}

namespace {

// Forgets the records that have completed (mu held).
void prune_writers_locked(TsEvent* ev) {
  auto& w = ev->writers;
  w.erase(std::remove_if(w.begin(), w.end(), event_writer_done), w.end());
}

}  // namespace

TsError* destroy_event(TsEvent* ev) {
  TsDevice* dev = ev->device;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->live.events.erase(ev);
    ev->magic = kMagicDead;
    ev->capture.reset();
    // A record still on its way writes the timestamp: the slot is reused
    // only once every such record completed, so this returns at once, as
    // cudaEventDestroy does.
    if (ev->timed) {
      prune_writers_locked(ev);
      if (ev->writers.empty())
        dev->free_stamps.push_back(ev->stamp);
      else
        dev->retiring_stamps.push_back({ev->stamp, std::move(ev->writers)});
    }
    ev->stream.reset();
  }
  delete ev;
  return nullptr;
}

TS_VK_ENTRY(Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->event, "Event_Destroy", "event");
  return destroy_event(args->event);
}

TS_VK_ENTRY(Event_Record, TS_EVENT_RECORD_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->event, "Event_Record", "event");
  TS_VK_CHECK_HANDLE(args->stream, "Event_Record", "stream");
  TsEvent* ev = args->event;
  TsDevice* dev = ev->device;
  if (args->stream->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Event_Record: the event and the stream are on different devices");
  const auto& sp = args->stream->state;
  StreamState& s = *sp;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s.capture) {
    capture_record_event_locked(s, ev);
    return nullptr;
  }
  // An event record is ordered like any operation (default-stream rules).
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  if (ev->timed) {
    record_stamp_commands(dev, cl->cb, ev->stamp, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    // An earlier record on this stream completes first: this one replaces it.
    prune_writers_locked(ev);
    auto& w = ev->writers;
    w.erase(std::remove_if(w.begin(), w.end(),
                           [&](const EventWriter& x) { return x.stream.lock() == sp; }),
            w.end());
    w.push_back({sp, s.open.value});
  }
  // Point at this batch before end_op, which may submit it.
  s.open.referenced = true;
  ev->stream = sp;
  ev->value = s.open.value;
  ev->last_is_capture = false;
  return end_op_locked(s);
}

namespace {

// Submits the batch holding the event's record, if needed; returns the
// stream and value to wait for (stream NULL when never recorded).
TsError* flush_event(TsEvent* ev, std::shared_ptr<StreamState>* s, uint64_t* value) {
  std::lock_guard<std::mutex> lk(ev->device->mu);
  *s = ev->stream;
  *value = ev->value;
  if (!*s) return nullptr;
  if ((*s)->submitted < ev->value) return flush_locked(**s);
  return nullptr;
}

}  // namespace

TS_VK_ENTRY(Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->event, "Event_Query", "event");
  std::shared_ptr<StreamState> s;
  uint64_t value;
  TS_VK_RETURN_IF_ERROR(flush_event(args->event, &s, &value));
  args->complete = (!s || counter_value(*s) >= value) ? 1 : 0;
  if (s && args->complete) {
    std::lock_guard<std::mutex> lk(s->dev->mu);
    reap_locked(*s);
  }
  return nullptr;
}

TS_VK_ENTRY(Event_Synchronize, TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->event, "Event_Synchronize", "event");
  std::shared_ptr<StreamState> s;
  uint64_t value;
  TS_VK_RETURN_IF_ERROR(flush_event(args->event, &s, &value));
  if (!s) return nullptr;  // never recorded: returns at once
  return wait_value(*s, value);
}

TS_VK_ENTRY(Event_ElapsedTime, TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->start, "Event_ElapsedTime", "start event");
  TS_VK_CHECK_HANDLE(args->end, "Event_ElapsedTime", "end event");
  TsEvent* evs[2] = {args->start, args->end};
  uint64_t ticks[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    TsEvent* ev = evs[i];
    if (ev->flags & TS_EVENT_DISABLE_TIMING)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "vulkan: Event_ElapsedTime: the %s event was created with "
                    "TS_EVENT_DISABLE_TIMING",
                    i == 0 ? "start" : "end");
    if (!ev->timed)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "vulkan: Event_ElapsedTime: the queue family of %s has no timestamp "
                    "support (timestampValidBits = 0)",
                    ev->device->props.deviceName);
    std::shared_ptr<StreamState> s;
    uint64_t value;
    TS_VK_RETURN_IF_ERROR(flush_event(ev, &s, &value));
    if (!s)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "vulkan: Event_ElapsedTime: the %s event was never recorded",
                    i == 0 ? "start" : "end");
    if (counter_value(*s) < value)
      return errorf(TS_ERROR_NOT_READY,
                    "vulkan: Event_ElapsedTime: the %s event has not completed yet",
                    i == 0 ? "start" : "end");
    // The record's batch has signalled: the device copied its timestamp
    // (timestamp.cpp: no vkGetQueryPoolResults, which waits for the whole
    // queue on lavapipe, i.e. for work queued after the event).
    if (!read_stamp(ev->stamp, &ticks[i]))
      return errorf(TS_ERROR_INTERNAL,
                    "vulkan: Event_ElapsedTime: the %s event completed but its timestamp was "
                    "never written (the submit of its record failed and said so)",
                    i == 0 ? "start" : "end");
  }
  double period_ns = args->start->device->props.limits.timestampPeriod;
  args->milliseconds =
      (static_cast<double>(ticks[1]) - static_cast<double>(ticks[0])) * period_ns / 1e6;
  return nullptr;
}

}  // namespace tessera::vk
