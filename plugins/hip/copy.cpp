// Memcpy and Memset.  Every address is a unified virtual address (device
// buffers, pinned and managed memory, and pageable host memory), so one
// hipMemcpyAsync(hipMemcpyDefault) covers host<->device, device<->device
// and host<->host.  Buffers of two devices: hipMemcpyPeerAsync where peer
// access is enabled (direct), else the plugin stages the copy through host
// memory itself (blocking; peer_mode says which).  A synchronous call
// (stream NULL) runs on the device's NULL stream and waits for it: ordered
// as if on the default stream.
#include <algorithm>
#include <cstring>
#include <vector>

#include "internal.hpp"

namespace tessera::hip {

namespace {

// Chunk of a copy staged through the host.
constexpr size_t kStagingChunk = size_t{64} << 20;

TsError* check_ref(const TsMemoryRef& r, uint64_t size, const char* which) {
  if ((r.buffer == nullptr) == (r.host == nullptr))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Memcpy: the %s must name exactly one of a buffer and a host pointer",
                  which);
  if (r.buffer) {
    TS_HIP_CHECK_HANDLE(r.buffer, "Memcpy", which);
    if (r.offset > r.buffer->size || size > r.buffer->size - r.offset)
      return errorf(TS_ERROR_OUT_OF_RANGE, "hip: Memcpy: %llu bytes at offset %llu of the %s, %s",
                    static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(r.offset), which,
                    describe_buffer(r.buffer).c_str());
  }
  return nullptr;
}

void* address(const TsMemoryRef& r) {
  return r.buffer ? static_cast<void*>(r.buffer->dptr + r.offset)
                  : static_cast<uint8_t*>(r.host) + r.offset;
}

// A copy between buffers of two devices without peer access: after the
// stream's earlier work, device -> host on the source device's NULL stream,
// then host -> device on the destination's, chunk by chunk.  Blocks.
TsError* staged_peer_copy(TsStream* s, TsBuffer* db, void* dst, TsBuffer* sb, const void* src,
                          size_t n) {
  if (s) {
    TS_HIP_RETURN_IF_ERROR(refuse_if_capturing(
        s, "a copy between devices without peer access (staged through the host)"));
    TS_HIP_RETURN_IF_ERROR(bind(s->device));
    TS_HIP_CALL(s->device, s->device->fn->hipStreamSynchronize(s->stream),
                "hipStreamSynchronize (before a copy staged through the host)");
  }
  TsDevice* from = sb->device;
  TsDevice* to = db->device;
  TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(from, "a copy staged through the host"));
  TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(to, "a copy staged through the host"));
  std::vector<uint8_t> bounce(std::min(n, kStagingChunk));
  for (size_t done = 0; done < n;) {
    const size_t k = std::min(bounce.size(), n - done);
    TS_HIP_RETURN_IF_ERROR(bind(from));
    TS_HIP_CALL(from,
                from->fn->hipMemcpyAsync(bounce.data(), static_cast<const uint8_t*>(src) + done,
                                         k, hipMemcpyDeviceToHost, nullptr),
                strprintf("hipMemcpyAsync(%s, device %d -> host, staging a peer copy)",
                          human_size(k).c_str(), from->ordinal));
    TS_HIP_CALL(from, from->fn->hipStreamSynchronize(nullptr),
                "hipStreamSynchronize(NULL stream, staging a peer copy)");
    TS_HIP_RETURN_IF_ERROR(bind(to));
    TS_HIP_CALL(to,
                to->fn->hipMemcpyAsync(static_cast<uint8_t*>(dst) + done, bounce.data(), k,
                                       hipMemcpyHostToDevice, nullptr),
                strprintf("hipMemcpyAsync(%s, host -> device %d, staging a peer copy)",
                          human_size(k).c_str(), to->ordinal));
    TS_HIP_CALL(to, to->fn->hipStreamSynchronize(nullptr),
                "hipStreamSynchronize(NULL stream, staging a peer copy)");
    done += k;
  }
  return nullptr;
}

}  // namespace

TsError* refuse_sync_while_capturing(TsDevice* dev, const char* what) {
  if (dev->capturing_blocking.load(std::memory_order_acquire) == 0) return nullptr;
  return errorf(TS_ERROR_FAILED_PRECONDITION,
                "hip: %s while a blocking stream of device %d captures a graph: it would run "
                "on the device's NULL stream, which cannot run work during such a capture "
                "(and would invalidate it); end the capture first, or pass a stream",
                what, dev->ordinal);
}

TS_HIP_ENTRY(Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE) {
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Memcpy: the size must be greater than zero");
  TS_HIP_RETURN_IF_ERROR(check_ref(args->dst, args->size, "destination"));
  TS_HIP_RETURN_IF_ERROR(check_ref(args->src, args->size, "source"));
  TsBuffer* db = args->dst.buffer;
  TsBuffer* sb = args->src.buffer;
  TsStream* s = args->stream;
  if (s) TS_HIP_CHECK_HANDLE(s, "Memcpy", "stream");
  // Objects of two clients never mix in one call.
  if ((db && sb && db->device->client != sb->device->client) ||
      (s && ((db && db->device->client != s->device->client) ||
             (sb && sb->device->client != s->device->client))))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Memcpy: the buffers and the stream belong to different clients");
  TsDevice* dev = s ? s->device : (sb ? sb->device : (db ? db->device : nullptr));
  if (!dev) {
    // Host to host, synchronous: no device involved.
    std::memmove(static_cast<uint8_t*>(args->dst.host) + args->dst.offset,
                 static_cast<const uint8_t*>(args->src.host) + args->src.offset,
                 static_cast<size_t>(args->size));
    return nullptr;
  }
  const size_t n = static_cast<size_t>(args->size);
  if (db && sb && db->device->client != sb->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Memcpy: the source and destination buffers belong to different clients");
  // Pinned host memory is reached by every device in place: only device
  // and managed memory of two devices make a peer copy.
  const bool cross = db && sb && db->device != sb->device &&
                     db->kind != TS_BUFFER_HOST_PINNED && sb->kind != TS_BUFFER_HOST_PINNED;
  if (cross && !sb->device->peer_access[static_cast<size_t>(db->device->ordinal)]) {
    TS_HIP_RETURN_IF_ERROR(staged_peer_copy(s, db, address(args->dst), sb, address(args->src), n));
    args->peer_mode = TS_PEER_COPY_HOST_STAGED;
    return nullptr;
  }
  if (!s) TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a synchronous copy"));
  hipStream_t hs = s ? s->stream : nullptr;
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  const HipFns& fn = *dev->fn;
  if (cross) {
    TS_HIP_CALL(dev,
                fn.hipMemcpyPeerAsync(address(args->dst), db->device->ordinal, address(args->src),
                                      sb->device->ordinal, n, hs),
                strprintf("hipMemcpyPeerAsync(%s, device %d -> device %d)", human_size(n).c_str(),
                          sb->device->ordinal, db->device->ordinal));
    args->peer_mode = TS_PEER_COPY_DIRECT;
  } else {
    TS_HIP_CALL(dev, fn.hipMemcpyAsync(address(args->dst), address(args->src), n, hipMemcpyDefault, hs),
                strprintf("hipMemcpyAsync(%s)", human_size(n).c_str()));
  }
  if (s) {
    if (sb) capture_note(s, sb->life, [&] { return "the copy's source, " + describe_buffer(sb); });
    if (db)
      capture_note(s, db->life, [&] { return "the copy's destination, " + describe_buffer(db); });
    return nullptr;
  }
  TS_HIP_CALL(dev, fn.hipStreamSynchronize(nullptr),
              "hipStreamSynchronize(NULL stream) after a synchronous copy");
  return nullptr;
}

TS_HIP_ENTRY(Memset, TS_MEMSET_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->buffer, "Memset", "buffer");
  TsBuffer* b = args->buffer;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Memset: the size must be greater than zero");
  if (args->offset > b->size || args->size > b->size - args->offset)
    return errorf(TS_ERROR_OUT_OF_RANGE, "hip: Memset: %llu bytes at offset %llu of %s",
                  static_cast<unsigned long long>(args->size),
                  static_cast<unsigned long long>(args->offset), describe_buffer(b).c_str());
  TsStream* s = args->stream;
  if (s) TS_HIP_CHECK_HANDLE(s, "Memset", "stream");
  if (s && s->device->client != args->buffer->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Memset: the stream belongs to another client than the buffer");
  TsDevice* dev = s ? s->device : b->device;
  if (!s) TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a synchronous memset"));
  hipStream_t hs = s ? s->stream : nullptr;
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  const HipFns& fn = *dev->fn;
  uint8_t* p = b->dptr + args->offset;
  const size_t n = static_cast<size_t>(args->size);
  if (reinterpret_cast<uintptr_t>(p) % 4 == 0 && n % 4 == 0) {
    const uint32_t word = 0x01010101u * args->value;
    int value;
    std::memcpy(&value, &word, sizeof value);
    TS_HIP_CALL(dev, fn.hipMemsetD32Async(p, value, n / 4, hs),
                strprintf("hipMemsetD32Async(%s)", human_size(n).c_str()));
  } else {
    TS_HIP_CALL(dev, fn.hipMemsetAsync(p, args->value, n, hs),
                strprintf("hipMemsetAsync(%s)", human_size(n).c_str()));
  }
  if (s) {
    capture_note(s, b->life, [&] { return "the memset's " + describe_buffer(b); });
    return nullptr;
  }
  TS_HIP_CALL(dev, fn.hipStreamSynchronize(nullptr),
              "hipStreamSynchronize(NULL stream) after a synchronous memset");
  return nullptr;
}

}  // namespace tessera::hip
