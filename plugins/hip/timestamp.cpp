// Stream_WriteTimestamp (ABI 1.3) and TsKernel_Launch_Args.completion_ns.
//
// A point is a timing event (hipEventRecord) whose time on the device's
// event clock becomes host CLOCK_MONOTONIC through a calibration event:
// plugins/common/event_timestamps.hpp has the scheme, its clock and its
// locks; this file makes its driver calls and decides when a caller has
// observed work complete (the plugin's synchronizes and queries call the
// flush_* functions below).
#include "internal.hpp"

namespace tessera::hip {

using plugin_support::EventState;

TsError* ClockDriver::create_event(hipEvent_t* e, const char* what) const {
  TS_HIP_CALL(dev, dev->fn->hipEventCreateWithFlags(e, hipEventDefault),
             strprintf("hipEventCreateWithFlags(%s)", what));
  return nullptr;
}

// Failures are ignored: the runtime frees the event when it completes.
void ClockDriver::destroy_event(hipEvent_t e) const { (void)dev->fn->hipEventDestroy(e); }

TsError* ClockDriver::record(hipEvent_t e, hipStream_t s, const char* what) const {
  TS_HIP_CALL(dev, dev->fn->hipEventRecord(e, s), strprintf("hipEventRecord(%s)", what));
  return nullptr;
}

EventState ClockDriver::query(hipEvent_t e, TsError** error) const {
  const hipError_t r = dev->fn->hipEventQuery(e);
  if (r == hipSuccess) return EventState::kComplete;
  if (r == hipErrorNotReady) return EventState::kNotReady;
  if (error) *error = dev_error(dev, r, "hipEventQuery(timestamp calibration)");
  return EventState::kFailed;
}

TsError* ClockDriver::synchronize(hipEvent_t e, const char* what) const {
  TS_HIP_CALL(dev, dev->fn->hipEventSynchronize(e), strprintf("hipEventSynchronize(%s)", what));
  return nullptr;
}

bool ClockDriver::elapsed_ms(hipEvent_t from, hipEvent_t to, float* ms) const {
  return dev->fn->hipEventElapsedTime(ms, from, to) == hipSuccess;
}

TsError* ClockDriver::create_clock_stream(hipStream_t* s) const {
  // The greatest priority: the calibration event should not queue behind
  // other work to be picked up.
  TS_HIP_CALL(dev, dev->fn->hipStreamCreateWithPriority(s, hipStreamNonBlocking, dev->priority_greatest),
             "hipStreamCreateWithPriority(timestamp calibration stream)");
  return nullptr;
}

void ClockDriver::destroy_stream(hipStream_t s) const { (void)dev->fn->hipStreamDestroy(s); }

TsError* refuse_timestamp(TsStream* s, const char* what) {
  if (capture_of(s))
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "hip: %s: the stream is capturing a graph, and a graph replayed later has "
                  "nowhere to write the time: end the capture first",
                  what);
  if (s->is_default) return refuse_sync_while_capturing(s->device, "a timestamp on the default stream");
  return nullptr;
}

TsError* record_timestamp(TsStream* s, uint64_t* out) {
  TS_HIP_RETURN_IF_ERROR(bind(s->device));
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

TS_HIP_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("hip", "Stream_WriteTimestamp", args->timestamp_ns))
    return e;
  TS_HIP_RETURN_IF_ERROR(refuse_timestamp(args->stream, "Stream_WriteTimestamp"));
  return record_timestamp(args->stream, args->timestamp_ns);
}

}  // namespace tessera::hip
