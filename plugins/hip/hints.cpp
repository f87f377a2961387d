// Unified-memory hints on managed buffers: Buffer_Prefetch ->
// hipMemPrefetchAsync, applied where the device accesses managed memory
// concurrently with the host (hipDeviceAttributeConcurrentManagedAccess:
// HMM with XNACK on; elsewhere nothing migrates: ignored); Buffer_Advise ->
// hipMemAdvise, applied on every device with managed memory.  A hint on a
// buffer that is not managed does nothing and says so (ignored).  The host
// is hipCpuDeviceId.
#include "internal.hpp"

namespace tessera::hip {

namespace {

TsError* hint_range(const char* entry, TsBuffer* b, uint64_t offset, uint64_t size,
                    uint64_t* n) {
  *n = size == 0 ? (offset <= b->size ? b->size - offset : 0) : size;
  if (offset > b->size || *n > b->size - offset || (size == 0 && offset >= b->size))
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "hip: %s: range at offset %llu (%llu bytes) lies outside a buffer of %llu "
                  "bytes",
                  entry, static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(b->size));
  return nullptr;
}

int location_of(const TsDevice* d) { return d ? d->ordinal : hipCpuDeviceId; }

}  // namespace

TS_HIP_ENTRY(Buffer_Prefetch, TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->buffer, "Buffer_Prefetch", "buffer");
  if (args->target) TS_HIP_CHECK_HANDLE(args->target, "Buffer_Prefetch", "target");
  if (args->stream) TS_HIP_CHECK_HANDLE(args->stream, "Buffer_Prefetch", "stream");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_HIP_RETURN_IF_ERROR(hint_range("Buffer_Prefetch", b, args->offset, args->size, &n));
  if (args->target && args->target->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Buffer_Prefetch: the target device belongs to another client");
  if (b->kind != TS_BUFFER_MANAGED || dev->ts.prefetch_hint != TS_HINT_APPLIED ||
      (args->target && args->target->ts.prefetch_hint != TS_HINT_APPLIED)) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TsStream* s = args->stream ? args->stream : dev->default_stream;
  if (s->is_default)
    TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "a prefetch on the default stream"));
  TS_HIP_RETURN_IF_ERROR(bind(s->device));
  TS_HIP_CALL(s->device,
              dev->fn->hipMemPrefetchAsync(b->dptr + args->offset, static_cast<size_t>(n),
                                           location_of(args->target), s->stream),
              strprintf("hipMemPrefetchAsync(%s to %s)", human_size(n).c_str(),
                        args->target ? strprintf("device %d", args->target->ordinal).c_str()
                                     : "the host"));
  capture_note(s, b->life, [&] { return "the prefetched " + describe_buffer(b); });
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

TS_HIP_ENTRY(Buffer_Advise, TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->buffer, "Buffer_Advise", "buffer");
  if (args->device) TS_HIP_CHECK_HANDLE(args->device, "Buffer_Advise", "device");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_HIP_RETURN_IF_ERROR(hint_range("Buffer_Advise", b, args->offset, args->size, &n));
  hipMemoryAdvise advice;
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t advice = plugin_support::raw_enum(args->advice);
      advice < TS_ADVICE_PREFERRED_LOCATION || advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Buffer_Advise: unknown advice %lld",
                  static_cast<long long>(advice));
  switch (args->advice) {
    case TS_ADVICE_PREFERRED_LOCATION: advice = hipMemAdviseSetPreferredLocation; break;
    case TS_ADVICE_READ_MOSTLY: advice = hipMemAdviseSetReadMostly; break;
    case TS_ADVICE_ACCESSED_BY: advice = hipMemAdviseSetAccessedBy; break;
    case TS_ADVICE_UNSET_PREFERRED_LOCATION: advice = hipMemAdviseUnsetPreferredLocation; break;
    case TS_ADVICE_UNSET_READ_MOSTLY: advice = hipMemAdviseUnsetReadMostly; break;
    case TS_ADVICE_UNSET_ACCESSED_BY: advice = hipMemAdviseUnsetAccessedBy; break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Buffer_Advise: unknown advice %d",
                    static_cast<int>(args->advice));
  }
  if (args->device && args->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Buffer_Advise: the device belongs to another client");
  if (b->kind != TS_BUFFER_MANAGED || dev->ts.advise_hint != TS_HINT_APPLIED) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  TS_HIP_CALL(dev,
              dev->fn->hipMemAdvise(b->dptr + args->offset, static_cast<size_t>(n), advice,
                                    location_of(args->device)),
              strprintf("hipMemAdvise(%s, advice %d)", human_size(n).c_str(),
                        static_cast<int>(advice)));
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

}  // namespace tessera::hip
