// Memcpy and Memset.  Every address is a unified virtual address (device
// buffers, pinned and managed memory, and -- for synchronous copies --
// pageable host memory), so one cuMemcpyAsync covers host<->device,
// device<->device and host<->host; buffers of two devices go through
// cuMemcpyPeerAsync (direct with peer access enabled, else the driver stages
// through the host).  A synchronous call (stream NULL) runs on the device's
// legacy default stream and waits for it: ordered as if on the default
// stream.
#include <cstring>

#include "internal.hpp"

namespace tessera::cuda {

namespace {

TsError* check_ref(const TsMemoryRef& r, uint64_t size, const char* which) {
  if ((r.buffer == nullptr) == (r.host == nullptr))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Memcpy: the %s must name exactly one of a buffer and a host pointer",
                  which);
  if (r.buffer) {
    TS_CU_CHECK_HANDLE(r.buffer, "Memcpy", which);
    if (r.offset > r.buffer->size || size > r.buffer->size - r.offset)
      return errorf(TS_ERROR_OUT_OF_RANGE,
                    "cuda: Memcpy: %llu bytes at offset %llu of the %s, %s",
                    static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(r.offset), which,
                    describe_buffer(r.buffer).c_str());
  }
  return nullptr;
}

CUdeviceptr address(const TsMemoryRef& r) {
  return r.buffer ? r.buffer->dptr + r.offset
                  : host_address(static_cast<const uint8_t*>(r.host) + r.offset);
}

}  // namespace

TsError* refuse_sync_while_capturing(TsDevice* dev, const char* what) {
  if (dev->capturing_blocking.load(std::memory_order_acquire) == 0) return nullptr;
  return errorf(TS_ERROR_FAILED_PRECONDITION,
                "cuda: %s while a blocking stream of device %u captures a graph: it would run "
                "on CUDA's legacy default stream, which cannot run work during such a capture "
                "(and would invalidate it); end the capture first, or pass a stream",
                what, dev->ordinal);
}

TS_CU_ENTRY(Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE) {
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Memcpy: the size must be greater than zero");
  TS_CU_RETURN_IF_ERROR(check_ref(args->dst, args->size, "destination"));
  TS_CU_RETURN_IF_ERROR(check_ref(args->src, args->size, "source"));
  TsBuffer* db = args->dst.buffer;
  TsBuffer* sb = args->src.buffer;
  TsStream* s = args->stream;
  if (s) TS_CU_CHECK_HANDLE(s, "Memcpy", "stream");
  // Objects of two clients never mix in one call.
  if ((db && sb && db->device->client != sb->device->client) ||
      (s && ((db && db->device->client != s->device->client) ||
             (sb && sb->device->client != s->device->client))))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Memcpy: the buffers and the stream belong to different clients");
  TsDevice* dev = s ? s->device : (sb ? sb->device : (db ? db->device : nullptr));
  if (!dev) {
    // Host to host, synchronous: no device involved.
    std::memmove(static_cast<uint8_t*>(args->dst.host) + args->dst.offset,
                 static_cast<const uint8_t*>(args->src.host) + args->src.offset,
                 static_cast<size_t>(args->size));
    return nullptr;
  }
  if (!s) TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a synchronous copy"));
  CUstream cs = s ? s->stream : CU_STREAM_LEGACY;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  const CudaFns& fn = *dev->fn;
  const size_t n = static_cast<size_t>(args->size);
  if (db && sb && db->device != sb->device) {
    TS_CU_CALL(dev,
               fn.cuMemcpyPeerAsync(address(args->dst), db->device->ctx, address(args->src),
                                    sb->device->ctx, n, cs),
               strprintf("cuMemcpyPeerAsync(%s, device %u -> device %u)",
                         human_size(n).c_str(), sb->device->ordinal, db->device->ordinal));
    args->peer_mode = sb->device->peer_access.size() > db->device->ordinal &&
                              sb->device->peer_access[db->device->ordinal]
                          ? TS_PEER_COPY_DIRECT
                          : TS_PEER_COPY_HOST_STAGED;
  } else {
    TS_CU_CALL(dev, fn.cuMemcpyAsync(address(args->dst), address(args->src), n, cs),
               strprintf("cuMemcpyAsync(%s)", human_size(n).c_str()));
  }
  if (s) {
    if (sb) capture_note(s, sb->life, [&] { return "the copy's source, " + describe_buffer(sb); });
    if (db)
      capture_note(s, db->life, [&] { return "the copy's destination, " + describe_buffer(db); });
    return nullptr;
  }
  TS_CU_CALL(dev, fn.cuStreamSynchronize(CU_STREAM_LEGACY),
             "cuStreamSynchronize(default stream) after a synchronous copy");
  return nullptr;
}

TS_CU_ENTRY(Memset, TS_MEMSET_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->buffer, "Memset", "buffer");
  TsBuffer* b = args->buffer;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Memset: the size must be greater than zero");
  if (args->offset > b->size || args->size > b->size - args->offset)
    return errorf(TS_ERROR_OUT_OF_RANGE, "cuda: Memset: %llu bytes at offset %llu of %s",
                  static_cast<unsigned long long>(args->size),
                  static_cast<unsigned long long>(args->offset), describe_buffer(b).c_str());
  TsStream* s = args->stream;
  if (s) TS_CU_CHECK_HANDLE(s, "Memset", "stream");
  if (s && s->device->client != args->buffer->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Memset: the stream belongs to another client than the buffer");
  TsDevice* dev = s ? s->device : b->device;
  if (!s) TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a synchronous memset"));
  CUstream cs = s ? s->stream : CU_STREAM_LEGACY;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  const CudaFns& fn = *dev->fn;
  const CUdeviceptr p = b->dptr + args->offset;
  const size_t n = static_cast<size_t>(args->size);
  if (p % 4 == 0 && n % 4 == 0) {
    const unsigned int word = 0x01010101u * args->value;
    TS_CU_CALL(dev, fn.cuMemsetD32Async(p, word, n / 4, cs),
               strprintf("cuMemsetD32Async(%s)", human_size(n).c_str()));
  } else {
    TS_CU_CALL(dev, fn.cuMemsetD8Async(p, args->value, n, cs),
               strprintf("cuMemsetD8Async(%s)", human_size(n).c_str()));
  }
  if (s) {
    capture_note(s, b->life, [&] { return "the memset's " + describe_buffer(b); });
    return nullptr;
  }
  TS_CU_CALL(dev, fn.cuStreamSynchronize(CU_STREAM_LEGACY),
             "cuStreamSynchronize(default stream) after a synchronous memset");
  return nullptr;
}

}  // namespace tessera::cuda
