// Unified-memory hints on managed (shared) buffers: Buffer_Prefetch ->
// zeCommandListAppendMemoryPrefetch on the stream (Level Zero prefetches to
// the device of the command list only: a prefetch to that device is
// applied, one to the host or to another device is ignored);
// Buffer_Advise -> zeCommandListAppendMemAdvise on the buffer device's
// default stream (READ_MOSTLY and PREFERRED_LOCATION and their clears are
// applied; ACCESSED_BY has no Level Zero advice and a preferred location on
// the host needs API 1.8: both ignored).  A hint on a buffer that is not
// managed does nothing and says so (ignored).
#include "internal.hpp"

namespace tessera::level_zero {

namespace {

TsError* hint_range(const char* entry, TsBuffer* b, uint64_t offset, uint64_t size,
                    uint64_t* n) {
  *n = size == 0 ? (offset <= b->size ? b->size - offset : 0) : size;
  if (offset > b->size || *n > b->size - offset || (size == 0 && offset >= b->size))
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "level_zero: %s: range at offset %llu (%llu bytes) lies outside a buffer of "
                  "%llu bytes",
                  entry, static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(b->size));
  return nullptr;
}

}  // namespace

TS_ZE_ENTRY(Buffer_Prefetch, TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->buffer, "Buffer_Prefetch", "buffer");
  if (args->target) TS_ZE_CHECK_HANDLE(args->target, "Buffer_Prefetch", "target");
  if (args->stream) TS_ZE_CHECK_HANDLE(args->stream, "Buffer_Prefetch", "stream");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_ZE_RETURN_IF_ERROR(hint_range("Buffer_Prefetch", b, args->offset, args->size, &n));
  if (args->target && args->target->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Prefetch: the target device belongs to another client");
  TsStream* s = args->stream ? args->stream : dev->default_stream;
  if (b->kind != TS_BUFFER_MANAGED || dev->ts.prefetch_hint != TS_HINT_APPLIED ||
      args->target != s->device) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TsDevice* sdev = s->device;
  std::lock_guard<std::mutex> lk(sdev->mu);
  if (s->capture) {
    TS_ZE_RETURN_IF_ERROR(capture_append_locked(s, [&](ze_command_list_handle_t list) -> TsError* {
      TS_ZE_CALL(sdev,
                 sdev->fn->zeCommandListAppendMemoryPrefetch(
                     list, static_cast<uint8_t*>(b->ptr) + args->offset, static_cast<size_t>(n)),
                 strprintf("zeCommandListAppendMemoryPrefetch(%s to device %u, captured)",
                           human_size(n).c_str(), sdev->ordinal));
      return nullptr;
    }));
    capture_note_locked(s, b->life, "the prefetched " + describe_buffer(b));
    args->result = TS_HINT_APPLIED;
    return nullptr;
  }
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  TS_ZE_CALL(sdev,
             sdev->fn->zeCommandListAppendMemoryPrefetch(
                 s->list, static_cast<uint8_t*>(b->ptr) + args->offset, static_cast<size_t>(n)),
             strprintf("zeCommandListAppendMemoryPrefetch(%s to device %u)",
                       human_size(n).c_str(), sdev->ordinal));
  commit_op_locked(s, nullptr);
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

TS_ZE_ENTRY(Buffer_Advise, TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->buffer, "Buffer_Advise", "buffer");
  if (args->device) TS_ZE_CHECK_HANDLE(args->device, "Buffer_Advise", "device");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  uint64_t n = 0;
  TS_ZE_RETURN_IF_ERROR(hint_range("Buffer_Advise", b, args->offset, args->size, &n));
  if (args->device && args->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Advise: the device belongs to another client");
  bool mapped = true;
  ze_memory_advice_t advice = ZE_MEMORY_ADVICE_SET_READ_MOSTLY;
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t advice = plugin_support::raw_enum(args->advice);
      advice < TS_ADVICE_PREFERRED_LOCATION || advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Buffer_Advise: unknown advice %lld",
                  static_cast<long long>(advice));
  switch (args->advice) {
    case TS_ADVICE_READ_MOSTLY: advice = ZE_MEMORY_ADVICE_SET_READ_MOSTLY; break;
    case TS_ADVICE_UNSET_READ_MOSTLY: advice = ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY; break;
    case TS_ADVICE_PREFERRED_LOCATION:
      advice = ZE_MEMORY_ADVICE_SET_PREFERRED_LOCATION;
      mapped = args->device != nullptr;  // the host: API 1.8's system-memory advice
      break;
    case TS_ADVICE_UNSET_PREFERRED_LOCATION:
      advice = ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION;
      mapped = args->device != nullptr;
      break;
    case TS_ADVICE_ACCESSED_BY:
    case TS_ADVICE_UNSET_ACCESSED_BY:
      mapped = false;  // no Level Zero equivalent
      break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Buffer_Advise: unknown advice %d",
                    static_cast<int>(args->advice));
  }
  if (!mapped || b->kind != TS_BUFFER_MANAGED || dev->ts.advise_hint != TS_HINT_APPLIED) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TsDevice* target = args->device ? args->device : dev;
  TsStream* s = dev->default_stream;
  std::lock_guard<std::mutex> lk(dev->mu);
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  TS_ZE_CALL(dev,
             dev->fn->zeCommandListAppendMemAdvise(s->list, target->ze,
                                                   static_cast<uint8_t*>(b->ptr) + args->offset,
                                                   static_cast<size_t>(n), advice),
             strprintf("zeCommandListAppendMemAdvise(%s, advice %d, device %u)",
                       human_size(n).c_str(), static_cast<int>(advice), target->ordinal));
  commit_op_locked(s, nullptr);
  args->result = TS_HINT_APPLIED;
  return nullptr;
}

}  // namespace tessera::level_zero
