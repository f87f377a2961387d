// Unified-memory hints on managed buffers: Buffer_Prefetch ->
// cuMemPrefetchAsync (CUDA 12.2+ form: a CUmemLocation and flags), applied
// where the device has concurrent managed access (without it the driver
// refuses prefetches: ignored); Buffer_Advise -> cuMemAdvise (CUmemLocation
// form), applied on every device with managed memory.  A hint on a buffer
// that is not managed does nothing and says so (ignored).
#include "internal.hpp"

namespace tessera::cuda {

namespace {

TsError* hint_range(const char* entry, TsBuffer* b, uint64_t offset, uint64_t size,
                    uint64_t* n) {
  *n = size == 0 ? (offset <= b->size ? b->size - offset : 0) : size;
  if (offset > b->size || *n > b->size - offset || (size == 0 && offset >= b->size))
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "cuda: %s: range at offset %llu (%llu bytes) lies outside a buffer of %llu "
                  "bytes",
                  entry, static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(b->size));
  return nullptr;
}

CUmemLocation location_of(const TsDevice* d) {
  CUmemLocation loc{};
  if (d) {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = static_cast<int>(d->ordinal);
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
    loc.id = 0;
  }
  return loc;
}

}  // namespace

TS_CU_ENTRY(Buffer_Prefetch, TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->buffer, "Buffer_Prefetch", "buffer");
  if (args->target) TS_CU_CHECK_HANDLE(args->target, "Buffer_Prefetch", "target");
  if (args->stream) TS_CU_CHECK_HANDLE(args->stream, "Buffer_Prefetch", "stream");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_CU_RETURN_IF_ERROR(hint_range("Buffer_Prefetch", b, args->offset, args->size, &n));
  if (args->target && args->target->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Buffer_Prefetch: the target device belongs to another client");
  if (b->kind != TS_BUFFER_MANAGED || dev->ts.prefetch_hint != TS_HINT_APPLIED ||
      (args->target && args->target->ts.prefetch_hint != TS_HINT_APPLIED)) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TsStream* s = args->stream ? args->stream : dev->default_stream;
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "a prefetch on the default stream"));
  TS_CU_RETURN_IF_ERROR(bind(s->device));
  TS_CU_CALL(s->device,
             dev->fn->cuMemPrefetchAsync(b->dptr + args->offset, static_cast<size_t>(n),
                                         location_of(args->target), 0, s->stream),
             strprintf("cuMemPrefetchAsync(%s to %s)", human_size(n).c_str(),
                       args->target ? strprintf("device %u", args->target->ordinal).c_str()
                                    : "the host"));
  capture_note(s, b->life, [&] { return "the prefetched " + describe_buffer(b); });
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

TS_CU_ENTRY(Buffer_Advise, TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->buffer, "Buffer_Advise", "buffer");
  if (args->device) TS_CU_CHECK_HANDLE(args->device, "Buffer_Advise", "device");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_CU_RETURN_IF_ERROR(hint_range("Buffer_Advise", b, args->offset, args->size, &n));
  CUmem_advise advice;
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t advice = plugin_support::raw_enum(args->advice);
      advice < TS_ADVICE_PREFERRED_LOCATION || advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Buffer_Advise: unknown advice %lld",
                  static_cast<long long>(advice));
  switch (args->advice) {
    case TS_ADVICE_PREFERRED_LOCATION: advice = CU_MEM_ADVISE_SET_PREFERRED_LOCATION; break;
    case TS_ADVICE_READ_MOSTLY: advice = CU_MEM_ADVISE_SET_READ_MOSTLY; break;
    case TS_ADVICE_ACCESSED_BY: advice = CU_MEM_ADVISE_SET_ACCESSED_BY; break;
    case TS_ADVICE_UNSET_PREFERRED_LOCATION: advice = CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION; break;
    case TS_ADVICE_UNSET_READ_MOSTLY: advice = CU_MEM_ADVISE_UNSET_READ_MOSTLY; break;
    case TS_ADVICE_UNSET_ACCESSED_BY: advice = CU_MEM_ADVISE_UNSET_ACCESSED_BY; break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Buffer_Advise: unknown advice %d",
                    static_cast<int>(args->advice));
  }
  if (args->device && args->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Buffer_Advise: the device belongs to another client");
  if (b->kind != TS_BUFFER_MANAGED || dev->ts.advise_hint != TS_HINT_APPLIED) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TS_CU_RETURN_IF_ERROR(bind(dev));
  TS_CU_CALL(dev,
             dev->fn->cuMemAdvise(b->dptr + args->offset, static_cast<size_t>(n), advice,
                                  location_of(args->device)),
             strprintf("cuMemAdvise(%s, advice %d)", human_size(n).c_str(),
                       static_cast<int>(advice)));
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

}  // namespace tessera::cuda
