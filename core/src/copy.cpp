// Copies: synchronous (any host memory) and asynchronous on a stream (pinned
// host memory only).  See docs/memory-model.md.
#include "memory_checks.hpp"

#include <cstring>

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status CheckRange(const char* what, const Buffer& buffer, uint64_t offset,
                  uint64_t size) {
  TESSERA_CHECK_HANDLE(buffer.impl(), "Buffer");
  if (size == 0)
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + " of 0 bytes: the size must be > 0");
  uint64_t capacity = buffer.impl()->size;
  if (offset > capacity || size > capacity - offset)
    return Status(StatusCode::kOutOfRange,
                  std::string(what) + ": " + std::to_string(size) +
                      " bytes at offset " + std::to_string(offset) +
                      " run past the end of a buffer of " +
                      std::to_string(capacity) + " bytes");
  return Status::Ok();
}

StatusOr<TsMemoryRef> CheckRef(const char* what, const MemoryRef& ref,
                               uint64_t size) {
  TsMemoryRef out{};
  if (ref.buffer) {
    TESSERA_RETURN_IF_ERROR(CheckRange(what, *ref.buffer, ref.offset, size));
    out.buffer = ref.buffer->raw();
    out.offset = ref.offset;
  } else {
    if (ref.host == nullptr)
      return Status(StatusCode::kInvalidArgument,
                    std::string(what) + " is a null host pointer");
    out.host = ref.host;
  }
  return out;
}

RuntimeImpl* RuntimeOf(const MemoryRef& dst, const MemoryRef& src) {
  if (dst.buffer && dst.buffer->impl())
    return dst.buffer->impl()->device.impl()->runtime;
  if (src.buffer && src.buffer->impl())
    return src.buffer->impl()->device.impl()->runtime;
  return nullptr;
}

const char* CopyDirection(const MemoryRef& dst, const MemoryRef& src) {
  auto host = [](const MemoryRef& r) {
    return !r.buffer || r.buffer->impl()->kind == TS_BUFFER_HOST_PINNED;
  };
  if (host(dst) && host(src)) return "host to host";
  if (host(dst)) return "device to host";
  if (host(src)) return "host to device";
  return dst.buffer->impl()->device == src.buffer->impl()->device
             ? "device to device"
             : "peer";
}

namespace {

Status CheckCopy(const MemoryRef& dst, const MemoryRef& src, uint64_t size,
                 TsMemcpy_Args* args) {
  if (size == 0)
    return Status(StatusCode::kInvalidArgument,
                  "copy of 0 bytes: the size must be greater than zero");
  TESSERA_ASSIGN_OR_RETURN(args->dst, CheckRef("copy destination", dst, size));
  TESSERA_ASSIGN_OR_RETURN(args->src, CheckRef("copy source", src, size));
  args->size = size;
  if (!dst.buffer && !src.buffer)
    return Status(StatusCode::kInvalidArgument,
                  "copy between two host pointers: use std::memcpy; a Tessera "
                  "copy needs a buffer on at least one side");
  if (dst.buffer && src.buffer &&
      dst.buffer->impl()->device.impl()->runtime !=
          src.buffer->impl()->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "copy between buffers of two different Runtimes");
  if (dst.buffer && src.buffer && dst.buffer->impl() == src.buffer->impl()) {
    uint64_t a = dst.offset, b = src.offset;
    if (a < b + size && b < a + size)
      return Status(StatusCode::kInvalidArgument,
                    "copy within one buffer with overlapping ranges (dst "
                    "offset " + std::to_string(a) + ", src offset " +
                        std::to_string(b) + ", " + std::to_string(size) +
                        " bytes): copy through a temporary buffer");
  }
  return Status::Ok();
}

}  // namespace
}  // namespace detail

Status copy(MemoryRef dst, MemoryRef src, uint64_t size) {
  auto args = MakeArgs<TsMemcpy_Args>();
  TESSERA_RETURN_IF_ERROR(detail::CheckCopy(dst, src, size, &args));
  detail::RuntimeImpl* runtime = detail::RuntimeOf(dst, src);
  TESSERA_TRACE_API(runtime, "copy");
  TESSERA_INJECT_FAULT(runtime, kCopy, "copy");
  if (_trace_api.on())
    _trace_api.args = detail::TraceArg("bytes", size) + "," +
                      detail::TraceArg("direction", detail::CopyDirection(dst, src));
  return TESSERA_PLUGIN_CALL(runtime->lib(), Memcpy, args);
}

Status Stream::copy_async(MemoryRef dst, MemoryRef src, uint64_t size) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  auto args = MakeArgs<TsMemcpy_Args>();
  TESSERA_RETURN_IF_ERROR(detail::CheckCopy(dst, src, size, &args));
  detail::RuntimeImpl* runtime = impl_->device.impl()->runtime;
  if (detail::RuntimeOf(dst, src) != runtime)
    return Status(StatusCode::kInvalidArgument,
                  "copy_async: the buffers belong to another Runtime than the "
                  "stream");
  // The memory model: an asynchronous copy may only touch page-locked host
  // memory, which the device can read while the host thread moves on.
  for (const MemoryRef* ref : {&dst, &src}) {
    if (ref->buffer || runtime->pinned.Contains(ref->host, size)) continue;
    return Status(
        StatusCode::kFailedPrecondition,
        std::string("asynchronous copy ") + (ref == &dst ? "to" : "from") +
            " host memory this Runtime has not page-locked (" + std::to_string(size) +
            " bytes: pageable memory, or memory another Runtime pinned): host memory in an "
            "async copy must be page-locked by the stream's Runtime; allocate it with its "
            "Runtime::pinned_malloc(), or page-lock it with its Runtime::register_host(), or "
            "use the synchronous tessera::copy()");
  }
  // The stream must be on one of the devices the copy touches.
  bool on_device = false;
  for (const MemoryRef* ref : {&dst, &src})
    if (ref->buffer && ref->buffer->impl()->device == impl_->device)
      on_device = true;
  if (!on_device)
    return Status(StatusCode::kInvalidArgument,
                  "copy_async: the stream belongs to " +
                      impl_->device.impl()->Describe() +
                      ", which neither buffer of the copy is on");
  args.stream = impl_->raw;
  TESSERA_TRACE_API(runtime, "Stream::copy_async");
  TESSERA_INJECT_FAULT(runtime, kCopy, "copy_async");
  if (!runtime->trace) return TESSERA_PLUGIN_CALL(runtime->lib(), Memcpy, args);
  std::string details =
      detail::TraceArg("bytes", size) + "," +
      detail::TraceArg("direction", detail::CopyDirection(dst, src));
  _trace_api.args = details;
  auto op = runtime->trace->BeginOp(*impl_);
  Status st = TESSERA_PLUGIN_CALL(runtime->lib(), Memcpy, args);
  runtime->trace->EndOp(
      op, *impl_, nullptr,
      runtime->trace->tracer().Intern(std::string("copy ") +
                                      detail::CopyDirection(dst, src)),
      "copy", std::move(details), st.ok());
  return st;
}

Status Stream::memset_async(const Buffer& buffer, uint64_t offset,
                            uint8_t value, uint64_t size) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  TESSERA_RETURN_IF_ERROR(
      detail::CheckRange("memset_async", buffer, offset, size));
  if (buffer.impl()->device != impl_->device)
    return Status(StatusCode::kInvalidArgument,
                  buffer.impl()->device.impl()->runtime != impl_->device.impl()->runtime
                      ? "memset_async: the buffer belongs to another Runtime than the stream"
                      : "memset_async: the buffer is on another device than the stream");
  auto args = MakeArgs<TsMemset_Args>();
  args.buffer = buffer.raw();
  args.offset = offset;
  args.size = size;
  args.value = value;
  args.stream = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::memset_async");
  TESSERA_INJECT_FAULT(rt, kCopy, "memset_async");
  if (!rt->trace) return TESSERA_PLUGIN_CALL(rt->lib(), Memset, args);
  std::string details = detail::TraceArg("bytes", size);
  _trace_api.args = details;
  auto op = rt->trace->BeginOp(*impl_);
  Status st = TESSERA_PLUGIN_CALL(rt->lib(), Memset, args);
  rt->trace->EndOp(op, *impl_, "memset", 0, "copy", std::move(details), st.ok());
  return st;
}

}  // namespace tessera
