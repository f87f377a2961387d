// Streams: cuStreamCreateWithPriority, Stream_Destroy/Synchronize/Query and
// Stream_WaitEvent.  The default stream is CUDA's legacy NULL stream
// (CU_STREAM_LEGACY) of the device's primary context: every blocking stream
// is ordered with it, as the ABI's default stream requires.
//
// PRIORITY AND WEIGHT.  CUDA has stream priorities only.  The ABI's
// priority ("larger runs first when both are ready", 0 default) maps onto
// the context's range with cuda_stream_priority (mapping.hpp): 0 is CUDA's
// default (the least priority), p > 0 becomes -p clamped at the greatest
// (e.g. -5 on Hopper, so 5 and above are all the highest), and p < 0 ranks
// with 0 because CUDA has nothing below its default.  The hardware applies
// priority when it picks the next thread block to schedule; it never
// preempts running blocks.  WEIGHTS ARE NOT HONOURED: CUDA offers no
// proportional share of the device and this plugin does not throttle
// submission to emulate one, so a weight is accepted and ignored, and
// TsDeviceProperties.stream_weights is 0.
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::cuda {

TsError* refuse_if_capturing(TsStream* s, const char* what) {
  if (!capture_of(s)) return nullptr;
  return errorf(TS_ERROR_FAILED_PRECONDITION,
                "cuda: %s on a stream that is capturing a graph: end the capture first "
                "(CUDA would invalidate the capture)",
                what);
}

TS_CU_ENTRY(Stream_Create, TS_STREAM_CREATE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Stream_Create", "device");
  TsDevice* dev = args->device;
  if (args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Stream_Create: unknown flags 0x%x",
                  args->flags);
  const bool non_blocking = (args->flags & TS_STREAM_NON_BLOCKING) != 0;
  const int prio = cuda_stream_priority(args->priority, dev->priority_least,
                                        dev->priority_greatest);
  TS_CU_RETURN_IF_ERROR(bind(dev));
  CUstream cs = nullptr;
  TS_CU_CALL(dev,
             dev->fn->cuStreamCreateWithPriority(
                 &cs, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT, prio),
             strprintf("cuStreamCreateWithPriority(priority %d)", prio));
  auto* s = new TsStream;
  s->device = dev;
  s->stream = cs;
  s->non_blocking = non_blocking;
  s->cuda_priority = prio;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->streams.insert(s);
  }
  args->stream = s;
  return nullptr;
}

TS_CU_ENTRY(Stream_Destroy, TS_STREAM_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_Destroy", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (s->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cuda: Stream_Destroy: the default stream belongs to its device");
  TS_CU_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Destroy"));
  TS_CU_RETURN_IF_ERROR(bind(dev));
  // Returns at once; queued work still runs (cuStreamDestroy semantics).
  TS_CU_CALL(dev, dev->fn->cuStreamDestroy(s->stream), "cuStreamDestroy");
  orphan_timestamps(s);  // written by the device's later synchronizes
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->streams.erase(s);
  }
  s->magic = kMagicDead;
  delete s;
  return nullptr;
}

TS_CU_ENTRY(Stream_Synchronize, TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_Synchronize", "stream");
  TsStream* s = args->stream;
  TS_CU_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Synchronize"));
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "synchronizing the default stream"));
  TS_CU_RETURN_IF_ERROR(bind(s->device));
  TS_CU_CALL(s->device, s->device->fn->cuStreamSynchronize(s->stream), "cuStreamSynchronize");
  // The legacy stream waited for every blocking stream too.
  if (s->is_default) {
    flush_timestamps(s, true);
    flush_device_timestamps(s->device, false);
  } else {
    flush_timestamps(s, true);
  }
  return nullptr;
}

TS_CU_ENTRY(Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_Query", "stream");
  TsStream* s = args->stream;
  TS_CU_RETURN_IF_ERROR(refuse_if_capturing(s, "Stream_Query"));
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "querying the default stream"));
  TS_CU_RETURN_IF_ERROR(bind(s->device));
  CUresult r = s->device->fn->cuStreamQuery(s->stream);
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
    args->idle = r == CUDA_SUCCESS ? 1 : 0;
    if (args->idle) flush_timestamps(s, true);
    return nullptr;
  }
  return dev_error(s->device, r, "cuStreamQuery");
}

TS_CU_ENTRY(Stream_WaitEvent, TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_WaitEvent", "stream");
  TS_CU_CHECK_HANDLE(args->event, "Stream_WaitEvent", "event");
  TsStream* s = args->stream;
  TsEvent* ev = args->event;
  TsDevice* dev = s->device;
  if (ev->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Stream_WaitEvent: the event belongs to another client");
  TS_CU_RETURN_IF_ERROR(bind(dev));
  // The capture bookkeeping and the wait happen together: a stream joins a
  // capture exactly when CUDA makes it join (waiting on an event recorded
  // in one).
  TsClient* c = dev->client;
  std::lock_guard<std::mutex> lk(c->capture_mu);
  if (!ev->recorded) return nullptr;  // never recorded: a no-op, as in CUDA
  std::shared_ptr<CaptureSession> join;
  if (s->capture) {
    if (ev->capture != s->capture)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cuda: Stream_WaitEvent: the stream is capturing a graph and the event was "
                    "last recorded outside that capture; the graph would replay without the "
                    "dependency (synchronize the event before the capture instead)");
  } else if (ev->capture) {
    if (ev->capture->ended)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cuda: Stream_WaitEvent: the event was last recorded inside a capture that "
                    "has ended, so it marks no work outside the graph: record it again");
    if (s->is_default)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "cuda: Stream_WaitEvent: the default stream cannot join a capture (CUDA "
                    "cannot capture its legacy default stream): use a created stream");
    join = ev->capture;
  }
  TS_CU_CALL(dev, dev->fn->cuStreamWaitEvent(s->stream, ev->event, 0), "cuStreamWaitEvent");
  if (join) {
    s->capture = join;
    join->members.push_back(s);
    dev->capturing.fetch_add(1, std::memory_order_acq_rel);
    if (!s->non_blocking) dev->capturing_blocking.fetch_add(1, std::memory_order_acq_rel);
  }
  return nullptr;
}

}  // namespace tessera::cuda
