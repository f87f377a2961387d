// Events: a (stream timeline semaphore, value) pair, plus a timestamp query
// written where the event is recorded when timing is on.
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
  if (!(args->flags & TS_EVENT_DISABLE_TIMING) && dev->timestamps) {
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = 1;
    VkResult r = dev->fn.vkCreateQueryPool(dev->device, &qci, nullptr, &ev->query);
    if (r != VK_SUCCESS) {
      delete ev;
      return vk_error(r, "vkCreateQueryPool(TIMESTAMP)");
    }
  }
  std::lock_guard<std::mutex> lk(dev->mu);
  dev->live.events.insert(ev);
  args->event = ev;
  return nullptr;
}

TsError* destroy_event(TsEvent* ev) {
  TsDevice* dev = ev->device;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->live.events.erase(ev);
    ev->magic = kMagicDead;
    ev->capture.reset();
    // A record still on its way writes the query: the pool goes with the
    // batch that writes it, destroyed when that completes (reap), so this
    // returns at once, as cudaEventDestroy does.
    if (ev->stream && ev->query && counter_value(*ev->stream) < ev->value) {
      StreamState& s = *ev->stream;
      CommandList* writer = s.open.value == ev->value ? &s.open.cl : nullptr;
      for (Batch& b : s.inflight)
        if (b.value == ev->value) writer = &b.cl;
      if (writer) {
        writer->queries.push_back(ev->query);
        ev->query = VK_NULL_HANDLE;
      }
    }
    ev->stream.reset();
  }
  if (ev->query) dev->fn.vkDestroyQueryPool(dev->device, ev->query, nullptr);
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
  if (ev->query) {
    dev->fn.vkCmdResetQueryPool(cl->cb, ev->query, 0, 1);
    dev->fn.vkCmdWriteTimestamp(cl->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ev->query, 0);
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
    if (!ev->query)
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
    TsDevice* dev = ev->device;
    VkResult r = dev->fn.vkGetQueryPoolResults(dev->device, ev->query, 0, 1, sizeof(uint64_t),
                                               &ticks[i], sizeof(uint64_t),
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return vk_error(r, "vkGetQueryPoolResults(TIMESTAMP)");
  }
  double period_ns = args->start->device->props.limits.timestampPeriod;
  args->milliseconds =
      (static_cast<double>(ticks[1]) - static_cast<double>(ticks[0])) * period_ns / 1e6;
  return nullptr;
}

}  // namespace tessera::vk
