// Events: cuEventCreate (CU_EVENT_DEFAULT when timing is wanted,
// CU_EVENT_DISABLE_TIMING otherwise), cuEventRecord, cuEventQuery,
// cuEventSynchronize, cuEventElapsedTime.  The plugin remembers whether an
// event was recorded and in which capture (graph.cpp), which CUDA does not
// report: a wait on an event recorded outside the capture is refused rather
// than invalidating the capture.
#include "internal.hpp"

namespace tessera::cuda {

TS_CU_ENTRY(Event_Create, TS_EVENT_CREATE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Event_Create", "device");
  TsDevice* dev = args->device;
  if (args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Event_Create: unknown flags 0x%x",
                  args->flags);
  const bool timing = (args->flags & TS_EVENT_DISABLE_TIMING) == 0;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  CUevent e = nullptr;
  TS_CU_CALL(dev, dev->fn->cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
             timing ? "cuEventCreate(CU_EVENT_DEFAULT)" : "cuEventCreate(CU_EVENT_DISABLE_TIMING)");
  auto* ev = new TsEvent;
  ev->device = dev;
  ev->event = e;
  ev->flags = args->flags;
  dev->live_events.add(ev);
  args->event = ev;
  return nullptr;
}

TS_CU_ENTRY(Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->event, "Event_Destroy", "event");
  TsEvent* ev = args->event;
  TsDevice* dev = ev->device;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  // Returns at once; a pending record completes (cuEventDestroy semantics).
  CUresult r = dev->fn->cuEventDestroy(ev->event);
  {
    std::lock_guard<std::mutex> lk(dev->client->capture_mu);
    ev->capture.reset();
  }
  dev->live_events.remove(ev);
  ev->magic = kMagicDead;
  delete ev;
  return r == CUDA_SUCCESS ? nullptr : dev_error(dev, r, "cuEventDestroy");
}

TS_CU_ENTRY(Event_Record, TS_EVENT_RECORD_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->event, "Event_Record", "event");
  TS_CU_CHECK_HANDLE(args->stream, "Event_Record", "stream");
  TsEvent* ev = args->event;
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (ev->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Event_Record: the event belongs to device %u and the stream to device "
                  "%u; CUDA records an event only on a stream of its own context",
                  ev->device->ordinal, dev->ordinal);
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "recording on the default stream"));
  TS_CU_RETURN_IF_ERROR(bind(dev));
  std::lock_guard<std::mutex> lk(dev->client->capture_mu);
  TS_CU_CALL(dev, dev->fn->cuEventRecord(ev->event, s->stream), "cuEventRecord");
  ev->recorded = true;
  ev->capture = s->capture;  // NULL: an eager record
  if (!s->capture) ev->recorded_eagerly = true;
  return nullptr;
}

TS_CU_ENTRY(Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->event, "Event_Query", "event");
  TsEvent* ev = args->event;
  TS_CU_RETURN_IF_ERROR(bind(ev->device));
  CUresult r = ev->device->fn->cuEventQuery(ev->event);  // never recorded: SUCCESS
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
    args->complete = r == CUDA_SUCCESS ? 1 : 0;
    // The points recorded before it on its stream are complete too.
    if (args->complete) flush_device_timestamps(ev->device, false);
    return nullptr;
  }
  return dev_error(ev->device, r, "cuEventQuery");
}

TS_CU_ENTRY(Event_Synchronize, TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->event, "Event_Synchronize", "event");
  TsEvent* ev = args->event;
  TS_CU_RETURN_IF_ERROR(bind(ev->device));
  TS_CU_CALL(ev->device, ev->device->fn->cuEventSynchronize(ev->event), "cuEventSynchronize");
  flush_device_timestamps(ev->device, false);
  return nullptr;
}

TS_CU_ENTRY(Event_ElapsedTime, TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->start, "Event_ElapsedTime", "start event");
  TS_CU_CHECK_HANDLE(args->end, "Event_ElapsedTime", "end event");
  TsEvent* a = args->start;
  TsEvent* b = args->end;
  if (a->device->client != b->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Event_ElapsedTime: the events belong to different clients");
  for (TsEvent* e : {a, b})
    if (e->flags & TS_EVENT_DISABLE_TIMING)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cuda: Event_ElapsedTime: the %s event was created with "
                    "TS_EVENT_DISABLE_TIMING",
                    e == a ? "start" : "end");
  {
    std::lock_guard<std::mutex> lk(a->device->client->capture_mu);
    for (TsEvent* e : {a, b})
      if (!e->recorded || e->capture)
        return errorf(TS_ERROR_FAILED_PRECONDITION,
                      "cuda: Event_ElapsedTime: the %s event %s",
                      e == a ? "start" : "end",
                      e->recorded ? "was last recorded inside a graph capture"
                                  : "was never recorded");
  }
  TS_CU_RETURN_IF_ERROR(bind(a->device));
  float ms = 0;
  TS_CU_CALL(a->device, a->device->fn->cuEventElapsedTime(&ms, a->event, b->event),
             a->device == b->device ? std::string("cuEventElapsedTime")
                                    : strprintf("cuEventElapsedTime(device %u -> device %u)",
                                                a->device->ordinal, b->device->ordinal));
  args->milliseconds = ms;
  return nullptr;
}

}  // namespace tessera::cuda
