// Events: hipEventCreateWithFlags (hipEventDefault when timing is wanted,
// hipEventDisableTiming otherwise), hipEventRecord, hipEventQuery,
// hipEventSynchronize, hipEventElapsedTime.  The plugin remembers whether an
// event was recorded and in which capture (graph.cpp), which HIP does not
// report: a wait on an event recorded outside the capture is refused rather
// than invalidating the capture.
#include "internal.hpp"

namespace tessera::hip {

namespace {

bool recorded(TsEvent* ev) {
  std::lock_guard<std::mutex> lk(ev->device->client->capture_mu);
  return ev->recorded;
}

}  // namespace

TS_HIP_ENTRY(Event_Create, TS_EVENT_CREATE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Event_Create", "device");
  TsDevice* dev = args->device;
  if (args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Event_Create: unknown flags 0x%x",
                  args->flags);
  const bool timing = (args->flags & TS_EVENT_DISABLE_TIMING) == 0;
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  hipEvent_t e = nullptr;
  TS_HIP_CALL(dev,
              dev->fn->hipEventCreateWithFlags(&e, timing ? hipEventDefault : hipEventDisableTiming),
              timing ? "hipEventCreateWithFlags(hipEventDefault)"
                     : "hipEventCreateWithFlags(hipEventDisableTiming)");
  auto* ev = new TsEvent;
  ev->device = dev;
  ev->event = e;
  ev->flags = args->flags;
  dev->live_events.add(ev);
  args->event = ev;
  return nullptr;
}

TS_HIP_ENTRY(Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->event, "Event_Destroy", "event");
  TsEvent* ev = args->event;
  TsDevice* dev = ev->device;
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  // Returns at once; a pending record completes (hipEventDestroy semantics).
  hipError_t r = dev->fn->hipEventDestroy(ev->event);
  {
    std::lock_guard<std::mutex> lk(dev->client->capture_mu);
    ev->capture.reset();
  }
  dev->live_events.remove(ev);
  ev->magic = kMagicDead;
  delete ev;
  return r == hipSuccess ? nullptr : dev_error(dev, r, "hipEventDestroy");
}

TS_HIP_ENTRY(Event_Record, TS_EVENT_RECORD_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->event, "Event_Record", "event");
  TS_HIP_CHECK_HANDLE(args->stream, "Event_Record", "stream");
  TsEvent* ev = args->event;
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (ev->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Event_Record: the event belongs to device %d and the stream to device "
                  "%d; HIP records an event only on a stream of its own device",
                  ev->device->ordinal, dev->ordinal);
  if (s->is_default)
    TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "recording on the default stream"));
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  std::lock_guard<std::mutex> lk(dev->client->capture_mu);
  TS_HIP_CALL(dev, dev->fn->hipEventRecord(ev->event, s->stream), "hipEventRecord");
  ev->recorded = true;
  ev->capture = s->capture;  // NULL: an eager record
  return nullptr;
}

TS_HIP_ENTRY(Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->event, "Event_Query", "event");
  TsEvent* ev = args->event;
  if (!recorded(ev)) {  // answered here: ROCm releases differ on unrecorded events
    args->complete = 1;
    return nullptr;
  }
  TS_HIP_RETURN_IF_ERROR(bind(ev->device));
  hipError_t r = ev->device->fn->hipEventQuery(ev->event);
  if (r == hipSuccess || r == hipErrorNotReady) {
    args->complete = r == hipSuccess ? 1 : 0;
    // The points recorded before it on its stream are complete too.
    if (args->complete) flush_device_timestamps(ev->device, false);
    return nullptr;
  }
  return dev_error(ev->device, r, "hipEventQuery");
}

TS_HIP_ENTRY(Event_Synchronize, TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->event, "Event_Synchronize", "event");
  TsEvent* ev = args->event;
  if (!recorded(ev)) return nullptr;  // nothing to wait for
  TS_HIP_RETURN_IF_ERROR(bind(ev->device));
  TS_HIP_CALL(ev->device, ev->device->fn->hipEventSynchronize(ev->event), "hipEventSynchronize");
  flush_device_timestamps(ev->device, false);
  return nullptr;
}

TS_HIP_ENTRY(Event_ElapsedTime, TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->start, "Event_ElapsedTime", "start event");
  TS_HIP_CHECK_HANDLE(args->end, "Event_ElapsedTime", "end event");
  TsEvent* a = args->start;
  TsEvent* b = args->end;
  if (a->device->client != b->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Event_ElapsedTime: the events belong to different clients");
  for (TsEvent* e : {a, b})
    if (e->flags & TS_EVENT_DISABLE_TIMING)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "hip: Event_ElapsedTime: the %s event was created with "
                    "TS_EVENT_DISABLE_TIMING",
                    e == a ? "start" : "end");
  {
    std::lock_guard<std::mutex> lk(a->device->client->capture_mu);
    for (TsEvent* e : {a, b})
      if (!e->recorded || e->capture)
        return errorf(TS_ERROR_FAILED_PRECONDITION,
                      "hip: Event_ElapsedTime: the %s event %s",
                      e == a ? "start" : "end",
                      e->recorded ? "was last recorded inside a graph capture"
                                  : "was never recorded");
  }
  TS_HIP_RETURN_IF_ERROR(bind(a->device));
  float ms = 0;
  TS_HIP_CALL(a->device, a->device->fn->hipEventElapsedTime(&ms, a->event, b->event),
             a->device == b->device ? std::string("hipEventElapsedTime")
                                    : strprintf("hipEventElapsedTime(device %d -> device %d)",
                                                a->device->ordinal, b->device->ordinal));
  args->milliseconds = ms;
  return nullptr;
}

}  // namespace tessera::hip
