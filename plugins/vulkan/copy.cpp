// Memcpy and Memset.
//
// device<->device on one device: vkCmdCopyBuffer on the stream.
// host<->device, asynchronous: the host side is pinned (the core checks), so
//   it is a VkBuffer over that memory (imported host pointer or a pinned
//   buffer): vkCmdCopyBuffer.  A pinned range this device could not import
//   is copied through a staging buffer, blocking.
// host<->device, synchronous: ordered like the default stream.  A device
//   buffer the host can map (lavapipe, UMA, ReBAR) is copied with memcpy once
//   the default stream's earlier work is done; otherwise pinned memory is
//   copied directly and pageable memory through a staging buffer.
// across devices: through host memory (TS_PEER_COPY_HOST_STAGED), blocking.
#include <algorithm>
#include <cstring>
#include <vector>

#include "internal.hpp"

namespace tessera::vk {

namespace {

constexpr uint64_t kStagingChunk = 64ull << 20;

void record_copy(TsDevice* dev, CommandList& cl, VkBuffer src, uint64_t src_off,
                 VkBuffer dst, uint64_t dst_off, uint64_t size) {
  VkBufferCopy region{src_off, dst_off, size};
  dev->fn.vkCmdCopyBuffer(cl.cb, src, dst, 1, &region);
}

std::shared_ptr<StreamState> default_shared(TsDevice* dev) {
  return dev->default_stream->state;
}

TsError* check_range(const char* what, TsBuffer* b, uint64_t offset, uint64_t size) {
  if (offset > b->size || size > b->size - offset)
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "vulkan: %s: %llu bytes at offset %llu run past the end of a buffer of "
                  "%llu bytes",
                  what, static_cast<unsigned long long>(size),
                  static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(b->size));
  return nullptr;
}

// Synchronous copy between `buf` and host memory, default-stream ordered.
TsError* sync_host_copy(TsBuffer* buf, uint64_t offset, void* host, uint64_t size,
                        bool to_device) {
  TsDevice* dev = buf->device;
  auto s = default_shared(dev);
  if (buf->alloc.mapped) {
    // Wait for the work the default stream is ordered after, then copy on
    // the host: one copy instead of two through a staging buffer.
    TS_VK_RETURN_IF_ERROR(run_blocking(s, [](CommandList&) -> TsError* { return nullptr; }));
    if (to_device)
      std::memcpy(buf->alloc.mapped + offset, host, size);
    else
      std::memcpy(host, buf->alloc.mapped + offset, size);
    return nullptr;
  }
  HostView v = resolve_host(dev, host, size);
  if (v.buffer) {
    return run_blocking(s, [&](CommandList& cl) -> TsError* {
      if (to_device)
        record_copy(dev, cl, v.buffer, v.offset, buf->alloc.buffer, offset, size);
      else
        record_copy(dev, cl, buf->alloc.buffer, offset, v.buffer, v.offset, size);
      return nullptr;
    });
  }
  return staged_copy(s, buf, offset, host, size, to_device);
}

}  // namespace

TsError* staged_copy(const std::shared_ptr<StreamState>& s, TsBuffer* buf, uint64_t offset,
                     void* host, uint64_t size, bool to_device) {
  TsDevice* dev = buf->device;
  dev->stat_staged.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lk(dev->staging_mu);
  uint64_t want = std::min(size, kStagingChunk);
  if (dev->staging.size < want) {
    release(dev, dev->staging);
    TS_VK_RETURN_IF_ERROR(allocate(dev, std::max<uint64_t>(want, 1u << 20), MemoryUse::kHost,
                                   &dev->staging, "a staging buffer"));
  }
  uint8_t* h = static_cast<uint8_t*>(host);
  for (uint64_t done = 0; done < size;) {
    uint64_t n = std::min(size - done, dev->staging.size);
    if (to_device) std::memcpy(dev->staging.mapped, h + done, n);
    TS_VK_RETURN_IF_ERROR(run_blocking(s, [&](CommandList& cl) -> TsError* {
      if (to_device)
        record_copy(dev, cl, dev->staging.buffer, 0, buf->alloc.buffer, offset + done, n);
      else
        record_copy(dev, cl, buf->alloc.buffer, offset + done, dev->staging.buffer, 0, n);
      return nullptr;
    }));
    if (!to_device) std::memcpy(h + done, dev->staging.mapped, n);
    done += n;
  }
  return nullptr;
}

TS_VK_ENTRY(Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE) {
  TsBuffer* db = args->dst.buffer;
  TsBuffer* sb = args->src.buffer;
  uint64_t size = args->size;
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Memcpy of 0 bytes");
  if ((db != nullptr) == (args->dst.host != nullptr) ||
      (sb != nullptr) == (args->src.host != nullptr))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Memcpy: each side needs exactly one of buffer and host");
  if (!db && !sb)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Memcpy between two host pointers: use memcpy");
  if (db) {
    TS_VK_CHECK_HANDLE(db, "Memcpy", "destination buffer");
    TS_VK_RETURN_IF_ERROR(check_range("Memcpy destination", db, args->dst.offset, size));
  }
  if (sb) {
    TS_VK_CHECK_HANDLE(sb, "Memcpy", "source buffer");
    TS_VK_RETURN_IF_ERROR(check_range("Memcpy source", sb, args->src.offset, size));
  }
  if (db && sb && db->device->client != sb->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Memcpy: dst and src buffers belong to different clients");
  TsStream* stream = args->stream;
  if (stream) {
    TS_VK_CHECK_HANDLE(stream, "Memcpy", "stream");
    if ((!db || db->device != stream->device) && (!sb || sb->device != stream->device))
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Memcpy: the stream is on neither device of the copy");
  }

  // ---- across devices: through the host.
  if (db && sb && db->device != sb->device) {
    if (TS_FIELD_PRESENT(args, TsMemcpy_Args, peer_mode))
      args->peer_mode = TS_PEER_COPY_HOST_STAGED;
    if (stream) TS_VK_RETURN_IF_ERROR(synchronize_stream(stream->state));
    std::vector<uint8_t> bounce(size);
    TS_VK_RETURN_IF_ERROR(sync_host_copy(sb, args->src.offset, bounce.data(), size, false));
    return sync_host_copy(db, args->dst.offset, bounce.data(), size, true);
  }

  // ---- within one device.
  if (db && sb) {
    TsDevice* dev = db->device;
    auto rec = [&](CommandList& cl) -> TsError* {
      record_copy(dev, cl, sb->alloc.buffer, args->src.offset, db->alloc.buffer,
                  args->dst.offset, size);
      return nullptr;
    };
    if (!stream) return run_blocking(default_shared(dev), rec);
    StreamState& s = *stream->state;
    std::lock_guard<std::mutex> lk(dev->mu);
    CommandList* cl = nullptr;
    TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
    if (s.capture) {
      capture_note_locked(s, sb->life, "the source (" + describe_buffer(sb) + ") of a copy");
      capture_note_locked(s, db->life,
                          "the destination (" + describe_buffer(db) + ") of a copy");
    }
    rec(*cl);
    return end_op_locked(s);
  }

  // ---- host <-> device.
  bool to_device = db != nullptr;
  TsBuffer* buf = to_device ? db : sb;
  uint64_t offset = to_device ? args->dst.offset : args->src.offset;
  void* host = to_device ? args->src.host : args->dst.host;
  TsDevice* dev = buf->device;
  if (!stream) return sync_host_copy(buf, offset, host, size, to_device);
  HostView v = resolve_host(dev, host, size);
  if (!v.buffer) {
    // Pinned for the core, but not visible to this device (no
    // VK_EXT_external_memory_host): a blocking staged copy, in stream order.
    return staged_copy(stream->state, buf, offset, host, size, to_device);
  }
  StreamState& s = *stream->state;
  std::lock_guard<std::mutex> lk(dev->mu);
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  if (s.capture) {
    capture_note_locked(s, buf->life,
                        strprintf("the %s (%s) of a copy", to_device ? "destination" : "source",
                                  describe_buffer(buf).c_str()));
    capture_note_locked(s, v.range,
                        strprintf("the pinned host memory at %p (%s) of a copy", host,
                                  to_device ? "source" : "destination"));
  }
  if (to_device)
    record_copy(dev, *cl, v.buffer, v.offset, buf->alloc.buffer, offset, size);
  else
    record_copy(dev, *cl, buf->alloc.buffer, offset, v.buffer, v.offset, size);
  return end_op_locked(s);
}

namespace {

// vkCmdFillBuffer for the whole 32-bit words, and copies from the device's
// pattern buffer (16 bytes of each value) for the unaligned edges.
void record_fill(TsDevice* dev, CommandList& cl, TsBuffer* b, uint64_t offset,
                 uint64_t size, uint8_t value) {
  uint64_t start = offset, end = offset + size;
  uint64_t a = (start + 3) / 4 * 4, z = end / 4 * 4;
  VkBuffer pat = dev->patterns.buffer;
  uint64_t pat_off = static_cast<uint64_t>(value) * 16;
  auto edge = [&](uint64_t from, uint64_t to) {
    while (from < to) {
      uint64_t n = std::min<uint64_t>(to - from, 16);
      VkBufferCopy region{pat_off, from, n};
      dev->fn.vkCmdCopyBuffer(cl.cb, pat, b->alloc.buffer, 1, &region);
      from += n;
    }
  };
  if (a < z) {
    uint32_t word = value * 0x01010101u;
    dev->fn.vkCmdFillBuffer(cl.cb, b->alloc.buffer, a, z - a, word);
    edge(start, a);
    edge(z, end);
  } else {
    edge(start, end);
  }
}

}  // namespace

TS_VK_ENTRY(Memset, TS_MEMSET_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->buffer, "Memset", "buffer");
  TsBuffer* b = args->buffer;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Memset of 0 bytes");
  TS_VK_RETURN_IF_ERROR(check_range("Memset", b, args->offset, args->size));
  TsDevice* dev = b->device;
  auto rec = [&](CommandList& cl) -> TsError* {
    record_fill(dev, cl, b, args->offset, args->size, args->value);
    return nullptr;
  };
  if (!args->stream) return run_blocking(dev->default_stream->state, rec);
  TS_VK_CHECK_HANDLE(args->stream, "Memset", "stream");
  if (args->stream->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Memset: the stream is on another device than the buffer");
  StreamState& s = *args->stream->state;
  std::lock_guard<std::mutex> lk(dev->mu);
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  if (s.capture) capture_note_locked(s, b->life, "the " + describe_buffer(b) + " of a memset");
  rec(*cl);
  return end_op_locked(s);
}

}  // namespace tessera::vk
