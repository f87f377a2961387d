// Unified-memory hints.  Core Vulkan has no migrating memory: a managed
// buffer lives in DEVICE_LOCAL|HOST_VISIBLE memory both sides address in
// place, so prefetch and advise have nothing to do.  They say so (IGNORED),
// as TsDeviceProperties announces; they are never a silent success.
#include "internal.hpp"

namespace tessera::vk {

namespace {
TsError* check_hint_range(const char* entry, TsBuffer* b, uint64_t offset, uint64_t size) {
  uint64_t n = size == 0 ? (offset <= b->size ? b->size - offset : 0) : size;
  if (offset > b->size || n > b->size - offset || (size == 0 && offset >= b->size))
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "vulkan: %s: range at offset %llu (%llu bytes) lies outside a buffer of "
                  "%llu bytes",
                  entry, static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(size),
                  static_cast<unsigned long long>(b->size));
  return nullptr;
}
}  // namespace

TS_VK_ENTRY(Buffer_Prefetch, TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->buffer, "Buffer_Prefetch", "buffer");
  if (args->target) TS_VK_CHECK_HANDLE(args->target, "Buffer_Prefetch", "target");
  if (args->stream) TS_VK_CHECK_HANDLE(args->stream, "Buffer_Prefetch", "stream");
  TS_VK_RETURN_IF_ERROR(
      check_hint_range("Buffer_Prefetch", args->buffer, args->offset, args->size));
  args->result = TS_HINT_IGNORED;
  return nullptr;
}

TS_VK_ENTRY(Buffer_Advise, TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->buffer, "Buffer_Advise", "buffer");
  if (args->device) TS_VK_CHECK_HANDLE(args->device, "Buffer_Advise", "device");
  TS_VK_RETURN_IF_ERROR(
      check_hint_range("Buffer_Advise", args->buffer, args->offset, args->size));
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t advice = plugin_support::raw_enum(args->advice);
      advice < TS_ADVICE_PREFERRED_LOCATION || advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Buffer_Advise: unknown advice %lld",
                  static_cast<long long>(advice));
  args->result = TS_HINT_IGNORED;
  return nullptr;
}

}  // namespace tessera::vk
