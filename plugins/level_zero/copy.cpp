// Memcpy and Memset: zeCommandListAppendMemoryCopy / zeCommandListAppendMemoryFill
// on the stream's command list.  Every USM pointer of the context (device,
// host and shared allocations) and imported host memory can be used in
// place; pageable host memory (allowed in synchronous copies) is staged
// through a host USM bounce buffer of the device, chunk by chunk.  Buffers
// of two devices: a direct copy when the executing device can access the
// other (zeDeviceCanAccessPeer), else staged through the host.  A
// synchronous call (stream NULL) runs on the device's default stream and
// waits for it: ordered as if on the default stream.
#include <algorithm>
#include <cstring>
#include <vector>

#include "internal.hpp"

namespace tessera::level_zero {

namespace {

constexpr size_t kStagingBytes = 8u << 20;

TsError* check_ref(const TsMemoryRef& r, uint64_t size, const char* which) {
  if ((r.buffer == nullptr) == (r.host == nullptr))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Memcpy: the %s must name exactly one of a buffer and a host "
                  "pointer",
                  which);
  if (r.buffer) {
    TS_ZE_CHECK_HANDLE(r.buffer, "Memcpy", which);
    if (r.offset > r.buffer->size || size > r.buffer->size - r.offset)
      return errorf(TS_ERROR_OUT_OF_RANGE,
                    "level_zero: Memcpy: %llu bytes at offset %llu of the %s, %s",
                    static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(r.offset), which,
                    describe_buffer(r.buffer).c_str());
  }
  return nullptr;
}

void* address(const TsMemoryRef& r) {
  return r.buffer ? static_cast<uint8_t*>(r.buffer->ptr) + r.offset
                  : static_cast<uint8_t*>(r.host) + r.offset;
}

// The range of `m` holding [p, p + size), or NULL.
const HostRange* find_range(const std::map<uintptr_t, HostRange>& m, uintptr_t p,
                            uint64_t size) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return nullptr;
  --it;
  const uint64_t n = it->second.size;
  return p - it->first <= n && size <= n - (p - it->first) ? &it->second : nullptr;
}

// The two sides of an asynchronous Memcpy, for a capture to note.
struct CopySides {
  TsClient* client;
  const TsMemoryRef* src;
  const TsMemoryRef* dst;
  uint64_t size;
};

// In a capture (device->mu held): the graph notes both sides, so a replay
// after one was freed is refused; host memory must be pinned by this
// client, which the graph can check.
TsError* note_copy_sides_locked(TsStream* s, const CopySides& c) {
  for (const TsMemoryRef* r : {c.src, c.dst}) {
    const char* side = r == c.src ? "source" : "destination";
    if (r->buffer) {
      capture_note_locked(s, r->buffer->life,
                          strprintf("the %s of a copy (%s)", side,
                                    describe_buffer(r->buffer).c_str()));
      continue;
    }
    std::weak_ptr<const void> life = host_range_life(c.client, address(*r), c.size);
    if (life.expired())
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "level_zero: Memcpy: the %s of a captured copy is host memory at %p that is "
                    "neither from Host_Allocate nor registered with Host_Register; a graph "
                    "copies only pinned memory it can check at each replay",
                    side, address(*r));
    capture_note_locked(s, life,
                        strprintf("the pinned host memory at %p (the %s of a copy)", address(*r),
                                  side));
  }
  return nullptr;
}

// One copy appended to `s` (device->mu taken here), or recorded into the
// capture `s` takes part in when `sides` says what it copies (NULL: a
// blocking copy, refused in a capture).
TsError* append_copy(TsStream* s, void* dst, const void* src, size_t n, const char* what,
                     const CopySides* sides = nullptr) {
  TsDevice* dev = s->device;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s->capture) {
    if (!sides) return refuse_in_capture_locked(s, "a blocking or host-staged copy");
    TS_ZE_RETURN_IF_ERROR(note_copy_sides_locked(s, *sides));
    return capture_append_locked(s, [&](ze_command_list_handle_t list) -> TsError* {
      TS_ZE_CALL(dev, dev->fn->zeCommandListAppendMemoryCopy(list, dst, src, n, nullptr, 0, nullptr),
                 strprintf("zeCommandListAppendMemoryCopy(%s, %s, captured)",
                           human_size(n).c_str(), what));
      return nullptr;
    });
  }
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  MarkerRef m;
  TS_ZE_RETURN_IF_ERROR(op_marker_locked(s, &m));
  TS_ZE_CALL(dev,
             dev->fn->zeCommandListAppendMemoryCopy(s->list, dst, src, n, m ? m->event() : nullptr,
                                                    0, nullptr),
             strprintf("zeCommandListAppendMemoryCopy(%s, %s)", human_size(n).c_str(), what));
  commit_op_locked(s, std::move(m));
  return nullptr;
}

}  // namespace

bool device_accessible(TsClient* c, const void* p, uint64_t size) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    if (find_range(c->host_registered, u, size) || find_range(c->host_allocated, u, size))
      return true;
  }
  ze_memory_allocation_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  ze_device_handle_t owner = nullptr;
  return c->fn.zeMemGetAllocProperties(c->context, p, &props, &owner) == ZE_RESULT_SUCCESS &&
         props.type != ZE_MEMORY_TYPE_UNKNOWN;
}

std::weak_ptr<const void> host_range_life(TsClient* c, const void* p, uint64_t size) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lk(c->host_mu);
  if (const HostRange* r = find_range(c->host_registered, u, size)) return r->life;
  if (const HostRange* r = find_range(c->host_allocated, u, size)) return r->life;
  return {};
}

TsError* blocking_host_copy(TsStream* s, void* device_ptr, void* host, uint64_t size,
                            bool to_device, const char* what) {
  TsDevice* dev = s->device;
  TsClient* c = dev->client;
  if (size == 0) return nullptr;
  {
    // The host waits for this copy: nothing a graph could replay.
    std::lock_guard<std::mutex> lk(dev->mu);
    TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, what));
  }
  if (device_accessible(c, host, size)) {
    TS_ZE_RETURN_IF_ERROR(append_copy(s, to_device ? device_ptr : host,
                                      to_device ? host : device_ptr, static_cast<size_t>(size),
                                      what));
    return synchronize_stream(s);
  }
  // Pageable: through the bounce buffer, one chunk at a time.
  std::lock_guard<std::mutex> slk(dev->staging_mu);
  if (!dev->staging) {
    ze_host_mem_alloc_desc_t hd{};
    hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    TS_ZE_CALL(dev, c->fn.zeMemAllocHost(c->context, &hd, kStagingBytes, 4096, &dev->staging),
               strprintf("zeMemAllocHost(%s staging buffer)", human_size(kStagingBytes).c_str()));
  }
  auto* h = static_cast<uint8_t*>(host);
  auto* d = static_cast<uint8_t*>(device_ptr);
  for (uint64_t off = 0; off < size; off += kStagingBytes) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kStagingBytes, size - off));
    if (to_device) {
      std::memcpy(dev->staging, h + off, n);
      TS_ZE_RETURN_IF_ERROR(append_copy(s, d + off, dev->staging, n, what));
      TS_ZE_RETURN_IF_ERROR(synchronize_stream(s));
    } else {
      TS_ZE_RETURN_IF_ERROR(append_copy(s, dev->staging, d + off, n, what));
      TS_ZE_RETURN_IF_ERROR(synchronize_stream(s));
      std::memcpy(h + off, dev->staging, n);
    }
  }
  return nullptr;
}

TS_ZE_ENTRY(Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE) {
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Memcpy: the size must be greater than zero");
  TS_ZE_RETURN_IF_ERROR(check_ref(args->dst, args->size, "destination"));
  TS_ZE_RETURN_IF_ERROR(check_ref(args->src, args->size, "source"));
  TsBuffer* db = args->dst.buffer;
  TsBuffer* sb = args->src.buffer;
  TsStream* s = args->stream;
  if (s) TS_ZE_CHECK_HANDLE(s, "Memcpy", "stream");
  // Objects of two clients never mix in one call.
  if ((db && sb && db->device->client != sb->device->client) ||
      (s && ((db && db->device->client != s->device->client) ||
             (sb && sb->device->client != s->device->client))))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Memcpy: the buffers and the stream belong to different clients");
  TsDevice* dev = s ? s->device : (sb ? sb->device : (db ? db->device : nullptr));
  if (!dev) {
    // Host to host, synchronous: no device involved.
    std::memmove(address(args->dst), address(args->src), static_cast<size_t>(args->size));
    return nullptr;
  }
  TsClient* c = dev->client;
  const size_t n = static_cast<size_t>(args->size);
  TsStream* exec = s ? s : dev->default_stream;
  const CopySides sides{c, &args->src, &args->dst, args->size};
  if (db && sb && db->device != sb->device) {
    const TsDevice* other = dev == sb->device ? db->device : sb->device;
    if (dev->peer_access.size() > other->ordinal && dev->peer_access[other->ordinal] &&
        (dev == sb->device || dev == db->device)) {
      TS_ZE_RETURN_IF_ERROR(append_copy(
          exec, address(args->dst), address(args->src), n,
          strprintf("device %u -> device %u", sb->device->ordinal, db->device->ordinal).c_str(),
          s ? &sides : nullptr));
      args->peer_mode = TS_PEER_COPY_DIRECT;
      return s ? nullptr : synchronize_stream(exec);
    }
    // No peer access: through the host, blocking, after the stream's work.
    if (s) TS_ZE_RETURN_IF_ERROR(synchronize_stream(s));
    std::vector<uint8_t> tmp(n);
    TS_ZE_RETURN_IF_ERROR(blocking_host_copy(sb->device->default_stream, address(args->src),
                                             tmp.data(), n, false, "peer copy via the host"));
    TS_ZE_RETURN_IF_ERROR(blocking_host_copy(db->device->default_stream, address(args->dst),
                                             tmp.data(), n, true, "peer copy via the host"));
    args->peer_mode = TS_PEER_COPY_HOST_STAGED;
    return nullptr;
  }
  const bool dst_ok = db || device_accessible(c, address(args->dst), n);
  const bool src_ok = sb || device_accessible(c, address(args->src), n);
  if (dst_ok && src_ok) {
    TS_ZE_RETURN_IF_ERROR(append_copy(exec, address(args->dst), address(args->src), n,
                                      s ? "async" : "synchronous", s ? &sides : nullptr));
    return s ? nullptr : synchronize_stream(exec);
  }
  if (s)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Memcpy: an asynchronous copy of pageable host memory (%s); "
                  "allocate it with Host_Allocate or register it with Host_Register",
                  dst_ok ? "the source" : "the destination");
  if (!dst_ok && !src_ok) {
    std::memmove(address(args->dst), address(args->src), n);
    return nullptr;
  }
  // One side is a buffer (or USM), the other pageable host memory.
  return dst_ok ? blocking_host_copy(exec, address(args->dst), address(args->src), n, true,
                                     "from pageable host memory")
                : blocking_host_copy(exec, address(args->src), address(args->dst), n, false,
                                     "to pageable host memory");
}

TS_ZE_ENTRY(Memset, TS_MEMSET_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->buffer, "Memset", "buffer");
  TsBuffer* b = args->buffer;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Memset: the size must be greater than zero");
  if (args->offset > b->size || args->size > b->size - args->offset)
    return errorf(TS_ERROR_OUT_OF_RANGE, "level_zero: Memset: %llu bytes at offset %llu of %s",
                  static_cast<unsigned long long>(args->size),
                  static_cast<unsigned long long>(args->offset), describe_buffer(b).c_str());
  TsStream* s = args->stream;
  if (s) TS_ZE_CHECK_HANDLE(s, "Memset", "stream");
  if (s && s->device->client != args->buffer->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Memset: the stream belongs to another client than the buffer");
  TsStream* exec = s ? s : b->device->default_stream;
  TsDevice* dev = exec->device;
  const size_t n = static_cast<size_t>(args->size);
  const uint8_t value = args->value;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    if (exec->capture) {
      // The pattern lives with the graph: the specification does not say
      // the driver copies it when the command is appended.
      const void* pattern = capture_keep_locked(exec, &value, 1);
      TS_ZE_RETURN_IF_ERROR(capture_append_locked(exec, [&](ze_command_list_handle_t list) -> TsError* {
        TS_ZE_CALL(dev,
                   dev->fn->zeCommandListAppendMemoryFill(
                       list, static_cast<uint8_t*>(b->ptr) + args->offset, pattern, 1, n, nullptr,
                       0, nullptr),
                   strprintf("zeCommandListAppendMemoryFill(%s, captured)", human_size(n).c_str()));
        return nullptr;
      }));
      capture_note_locked(exec, b->life, "the " + describe_buffer(b) + " of a memset");
      return nullptr;
    }
    TS_ZE_RETURN_IF_ERROR(prepare_op_locked(exec));
    MarkerRef m;
    TS_ZE_RETURN_IF_ERROR(op_marker_locked(exec, &m));
    TS_ZE_CALL(dev,
               dev->fn->zeCommandListAppendMemoryFill(
                   exec->list, static_cast<uint8_t*>(b->ptr) + args->offset, &value, 1, n,
                   m ? m->event() : nullptr, 0, nullptr),
               strprintf("zeCommandListAppendMemoryFill(%s)", human_size(n).c_str()));
    commit_op_locked(exec, std::move(m));
  }
  return s ? nullptr : synchronize_stream(exec);
}

}  // namespace tessera::level_zero
