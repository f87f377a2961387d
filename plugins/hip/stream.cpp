// Streams: hipStreamCreateWithPriority, Stream_Destroy/Synchronize/Query and
// Stream_WaitEvent.  The default stream is the device's NULL stream: every
// blocking stream of the device is ordered with it, as the ABI's default
// stream requires.
//
// PRIORITY AND WEIGHT.  HIP has stream priorities only.  The ABI's priority
// ("larger runs first when both are ready", 0 default) maps onto the range
// hipDeviceGetStreamPriorityRange reports with hip_stream_priority
// (mapping.hpp).  ROCm has three levels around its default: p > 0 is high
// (-1), 0 is normal (0), p < 0 is low (1).  The runtime gives the stream's
// hardware queue that priority, which the command processor uses when it
// picks the next queue to dispatch from; it does not preempt workgroups
// already running.  WEIGHTS ARE NOT HONOURED: HIP offers no proportional
// share of the device and this plugin does not throttle submission to
// emulate one, so a weight is accepted and ignored, and
// TsDeviceProperties.stream_weights is 0.
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::hip {

TsError* refuse_if_capturing(TsStream* s, const char* what) {
  if (!capture_of(s)) return nullptr;
  return errorf(TS_ERROR_FAILED_PRECONDITION,
                "hip: %s on a stream that is capturing a graph: end the capture first "
                "(HIP would invalidate the capture)",
                what);
}

TS_HIP_ENTRY(Stream_Create, TS_STREAM_CREATE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Stream_Create", "device");
  TsDevice* dev = args->device;
  if (args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Stream_Create: unknown flags 0x%x",
                  args->flags);
  const bool non_blocking = (args->flags & TS_STREAM_NON_BLOCKING) != 0;
  const int prio = hip_stream_priority(args->priority, dev->priority_least,
                                        dev->priority_greatest);
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  hipStream_t hs = nullptr;
  TS_HIP_CALL(dev,
              dev->fn->hipStreamCreateWithPriority(
                  &hs, non_blocking ? hipStreamNonBlocking : hipStreamDefault, prio),
              strprintf("hipStreamCreateWithPriority(priority %d)", prio));
  auto* s = new TsStream;
  s->device = dev;
  s->stream = hs;
  s->non_blocking = non_blocking;
  s->hip_priority = prio;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->streams.insert(s);
  }
  args->stream = s;
  return nullptr;
}

TS_HIP_ENTRY(Stream_Destroy, TS_STREAM_DESTROY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->stream, "Stream_Destroy", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (s->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "hip: Stream_Destroy: the default stream belongs to its device");
  TS_HIP_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Destroy"));
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  // Returns at once; queued work still runs (hipStreamDestroy semantics).
  TS_HIP_CALL(dev, dev->fn->hipStreamDestroy(s->stream), "hipStreamDestroy");
  orphan_timestamps(s);  // written by the device's later synchronizes
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->streams.erase(s);
  }
  s->magic = kMagicDead;
  delete s;
  return nullptr;
}

TS_HIP_ENTRY(Stream_Synchronize, TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->stream, "Stream_Synchronize", "stream");
  TsStream* s = args->stream;
  TS_HIP_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Synchronize"));
  if (s->is_default)
    TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "synchronizing the default stream"));
  TS_HIP_RETURN_IF_ERROR(bind(s->device));
  TS_HIP_CALL(s->device, s->device->fn->hipStreamSynchronize(s->stream), "hipStreamSynchronize");
  flush_timestamps(s, true);
  // The NULL stream waited for every blocking stream too.
  if (s->is_default) flush_device_timestamps(s->device, false);
  return nullptr;
}

TS_HIP_ENTRY(Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->stream, "Stream_Query", "stream");
  TsStream* s = args->stream;
  TS_HIP_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Query"));
  if (s->is_default)
    TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "querying the default stream"));
  TS_HIP_RETURN_IF_ERROR(bind(s->device));
  hipError_t r = s->device->fn->hipStreamQuery(s->stream);
  if (r == hipSuccess || r == hipErrorNotReady) {
    args->idle = r == hipSuccess ? 1 : 0;
    if (args->idle) flush_timestamps(s, true);
    return nullptr;
  }
  return dev_error(s->device, r, "hipStreamQuery");
}

TS_HIP_ENTRY(Stream_WaitEvent, TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->stream, "Stream_WaitEvent", "stream");
  TS_HIP_CHECK_HANDLE(args->event, "Stream_WaitEvent", "event");
  TsStream* s = args->stream;
  TsEvent* ev = args->event;
  TsDevice* dev = s->device;
  if (ev->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Stream_WaitEvent: the event belongs to another client");
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  // The capture bookkeeping and the wait happen together: a stream joins a
  // capture exactly when HIP makes it join (waiting on an event recorded
  // in one).
  TsClient* c = dev->client;
  std::lock_guard<std::mutex> lk(c->capture_mu);
  if (!ev->recorded) return nullptr;  // never recorded: a no-op, as in HIP
  std::shared_ptr<CaptureSession> join;
  if (s->capture) {
    if (ev->capture != s->capture)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "hip: Stream_WaitEvent: the stream is capturing a graph and the event was "
                    "last recorded outside that capture; the graph would replay without the "
                    "dependency (synchronize the event before the capture instead)");
  } else if (ev->capture) {
    if (ev->capture->ended)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "hip: Stream_WaitEvent: the event was last recorded inside a capture that "
                    "has ended, so it marks no work outside the graph: record it again");
    if (s->is_default)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "hip: Stream_WaitEvent: the default stream cannot join a capture (HIP "
                    "cannot capture the NULL stream): use a created stream");
    join = ev->capture;
  }
  TS_HIP_CALL(dev, dev->fn->hipStreamWaitEvent(s->stream, ev->event, 0), "hipStreamWaitEvent");
  if (join) {
    s->capture = join;
    join->members.push_back(s);
    dev->capturing.fetch_add(1, std::memory_order_acq_rel);
    if (!s->non_blocking) dev->capturing_blocking.fetch_add(1, std::memory_order_acq_rel);
  }
  return nullptr;
}

}  // namespace tessera::hip
