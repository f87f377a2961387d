// Stream_WriteTimestamp (ABI 1.3) and TsKernel_Launch_Args.completion_ns.
//
// A point is a timing event (cuEventRecord) whose time on the device's
// event clock becomes host CLOCK_MONOTONIC through a calibration event:
// plugins/common/event_timestamps.hpp has the scheme, its clock and its
// locks; this file makes its driver calls and decides when a caller has
// observed work complete (the plugin's synchronizes and queries call the
// flush_* functions below).
#include "internal.hpp"

namespace tessera::cuda {

using plugin_support::EventState;

TsError* ClockDriver::create_event(CUevent* e, const char* what) const {
  TS_CU_CALL(dev, dev->fn->cuEventCreate(e, CU_EVENT_DEFAULT),
             strprintf("cuEventCreate(%s)", what));
  return nullptr;
}

void ClockDriver::destroy_event(CUevent e) const { dev->fn->cuEventDestroy(e); }

TsError* ClockDriver::record(CUevent e, CUstream s, const char* what) const {
  TS_CU_CALL(dev, dev->fn->cuEventRecord(e, s), strprintf("cuEventRecord(%s)", what));
  return nullptr;
}

EventState ClockDriver::query(CUevent e, TsError** error) const {
  const CUresult r = dev->fn->cuEventQuery(e);
  if (r == CUDA_SUCCESS) return EventState::kComplete;
  if (r == CUDA_ERROR_NOT_READY) return EventState::kNotReady;
  if (error) *error = dev_error(dev, r, "cuEventQuery(timestamp calibration)");
  return EventState::kFailed;
}

TsError* ClockDriver::synchronize(CUevent e, const char* what) const {
  TS_CU_CALL(dev, dev->fn->cuEventSynchronize(e), strprintf("cuEventSynchronize(%s)", what));
  return nullptr;
}

bool ClockDriver::elapsed_ms(CUevent from, CUevent to, float* ms) const {
  return dev->fn->cuEventElapsedTime(ms, from, to) == CUDA_SUCCESS;
}

TsError* ClockDriver::create_clock_stream(CUstream* s) const {
  // The greatest priority: the calibration event should not queue behind
  // other work to be picked up.
  TS_CU_CALL(dev, dev->fn->cuStreamCreateWithPriority(s, CU_STREAM_NON_BLOCKING, dev->priority_greatest),
             "cuStreamCreateWithPriority(timestamp calibration stream)");
  return nullptr;
}

void ClockDriver::destroy_stream(CUstream s) const { dev->fn->cuStreamDestroy(s); }

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
  TS_CU_RETURN_IF_ERROR(bind(s->device));
  return s->device->stamps->record(s->stamps, s->stream, out);
}

void flush_timestamps(TsStream* s, bool synchronized) {
  plugin_support::flush_stream_points(s, synchronized, &bind);
}

void flush_device_timestamps(TsDevice* dev, bool synchronized) {
  plugin_support::flush_device_points(dev, synchronized, &bind);
}

void orphan_timestamps(TsStream* s) { s->device->stamps->orphan(s->stamps); }

void release_device_timestamps(TsDevice* dev) { plugin_support::release_device_points(dev, &bind); }

TS_CU_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("cuda", "Stream_WriteTimestamp", args->timestamp_ns))
    return e;
  TS_CU_RETURN_IF_ERROR(refuse_timestamp(args->stream, "Stream_WriteTimestamp"));
  return record_timestamp(args->stream, args->timestamp_ns);
}

}  // namespace tessera::cuda
