// Buffers and pinned host memory: Buffer_Allocate/Free (zeMemAllocDevice,
// zeMemAllocHost, zeMemAllocShared by kind, with the alignment asked for),
// Host_Allocate/Free (zeMemAllocHost / zeMemFree), Host_Register/Unregister
// (Intel's zexDriverImportExternalPointer / zexDriverReleaseImportedPointer
// when the driver has them, else UNSUPPORTED).
#include <cstring>

#include "internal.hpp"

namespace tessera::level_zero {

namespace {

const char* kind_name(TsBufferKind k) {
  switch (k) {
    case TS_BUFFER_DEVICE: return "device";
    case TS_BUFFER_HOST_PINNED: return "host-pinned";
    case TS_BUFFER_MANAGED: return "managed";
    default: return "unknown";
  }
}

TsError* synchronize_all(TsClient* c) {
  TsError* first = nullptr;
  for (auto& d : c->devices)
    if (TsError* e = synchronize_device(d.get())) {
      if (!first) first = e;
      else destroy_error(e);
    }
  return first;
}

}  // namespace

std::string describe_buffer(const TsBuffer* b) {
  return "a " + human_size(b->size) + " " + kind_name(b->kind) + " buffer";
}

TS_ZE_ENTRY(Buffer_Allocate, TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Buffer_Allocate", "device");
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t kind = plugin_support::raw_enum(args->kind);
      kind != TS_BUFFER_DEVICE && kind != TS_BUFFER_HOST_PINNED && kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Allocate: kind %lld is not a TsBufferKind (0 device, 1 "
                  "pinned, 2 managed)",
                  static_cast<long long>(kind));
  TsDevice* dev = args->device;
  const TsClient* c = dev->client;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Allocate: the size must be greater than zero");
  if (args->alignment & (args->alignment - 1))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Allocate: alignment %llu is not a power of two",
                  static_cast<unsigned long long>(args->alignment));
  if (args->kind != TS_BUFFER_DEVICE && args->kind != TS_BUFFER_HOST_PINNED &&
      args->kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Buffer_Allocate: unknown kind %d",
                  static_cast<int>(args->kind));
  if (!(dev->ts.buffer_kinds & (1u << args->kind)))
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: %s does not support %s buffers (its memory access capabilities "
                  "lack read/write for %s allocations)",
                  dev->ts.name, kind_name(args->kind),
                  args->kind == TS_BUFFER_MANAGED ? "shared" : "host");
  // Level Zero refuses single allocations above maxMemAllocSize (4 GiB on
  // many parts) unless relaxed limits are requested, which kernels must
  // then be compiled for: not done.
  if (args->kind == TS_BUFFER_DEVICE && dev->props.maxMemAllocSize &&
      args->size > dev->props.maxMemAllocSize)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: Buffer_Allocate: %s is more than %s allows in one allocation "
                  "(maxMemAllocSize %s)",
                  human_size(args->size).c_str(), dev->ts.name,
                  human_size(dev->props.maxMemAllocSize).c_str());
  if (args->alignment > (uint64_t{1} << 30))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Buffer_Allocate: alignment %llu is above 1 GiB",
                  static_cast<unsigned long long>(args->alignment));
  const size_t bytes = static_cast<size_t>(args->size);
  const size_t align = static_cast<size_t>(args->alignment);  // 0: the driver's choice
  const ZeFns& fn = *dev->fn;
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  ze_device_mem_alloc_desc_t dd{};
  dd.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  dd.ordinal = 0;
  ze_host_mem_alloc_desc_t hd{};
  hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  switch (args->kind) {
    case TS_BUFFER_DEVICE:
      TS_ZE_CALL(dev, fn.zeMemAllocDevice(c->context, &dd, bytes, align, dev->ze, &b->ptr),
                 strprintf("zeMemAllocDevice(%s)", human_size(bytes).c_str()));
      break;
    case TS_BUFFER_HOST_PINNED:
      TS_ZE_CALL(dev, fn.zeMemAllocHost(c->context, &hd, bytes, align, &b->ptr),
                 strprintf("zeMemAllocHost(%s)", human_size(bytes).c_str()));
      b->host = b->ptr;
      break;
    case TS_BUFFER_MANAGED:
      // Shared with this device: migrates between it and the host.
      TS_ZE_CALL(dev, fn.zeMemAllocShared(c->context, &dd, &hd, bytes, align, dev->ze, &b->ptr),
                 strprintf("zeMemAllocShared(%s)", human_size(bytes).c_str()));
      b->host = b->ptr;
      break;
  }
  args->host_pointer = b->host;
  dev->live_buffers.add(b.get());
  args->buffer = b.release();
  return nullptr;
}

TS_ZE_ENTRY(Buffer_Free, TS_BUFFER_FREE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->buffer, "Buffer_Free", "buffer");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  // cudaFree semantics: never free under running work (zeMemFree does not
  // wait).  Host and shared memory may be used by any device, device memory
  // by the devices with peer access to it (copies and kernel arguments).
  bool peers_use_it = false;
  for (const TsDevice* other : dev->client->device_list)
    if (other != dev && other->peer_access.size() > dev->ordinal && other->peer_access[dev->ordinal])
      peers_use_it = true;
  TsError* e = b->kind == TS_BUFFER_DEVICE && !peers_use_it ? synchronize_device(dev)
                                                             : synchronize_all(dev->client);
  ze_result_t r = b->imported ? ZE_RESULT_SUCCESS : dev->fn->zeMemFree(dev->client->context, b->ptr);
  dev->live_buffers.remove(b);
  b->magic = kMagicDead;
  const uint64_t size = b->size;
  delete b;
  if (r != ZE_RESULT_SUCCESS && !e)
    e = dev_error(dev, r, strprintf("zeMemFree(%s)", human_size(size).c_str()));
  return e;
}

// MINOR 6: its USM pointer (what kernels and
// zeCommandListAppendMemoryCopy take).
TS_ZE_ENTRY(Buffer_GetDeviceAddress, TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->buffer, "Buffer_GetDeviceAddress", "buffer");
  args->address = reinterpret_cast<uint64_t>(args->buffer->ptr);
  return nullptr;
}

// MINOR 6: USM memory another library allocated in the client's context,
// used in place (host and shared USM are host-addressable).
TS_ZE_ENTRY(Buffer_Import, TS_BUFFER_IMPORT_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Buffer_Import", "device");
  TsDevice* dev = args->device;
  if (TsError* e = tessera::plugin_support::check_import("level_zero", args, dev->ts.buffer_kinds)) return e;
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  b->ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(args->address));
  if (args->kind != TS_BUFFER_DEVICE) b->host = b->ptr;
  b->imported = true;
  args->host_pointer = b->host;
  dev->live_buffers.add(b.get());
  args->buffer = b.release();
  return nullptr;
}

TS_ZE_ENTRY(Host_Allocate, TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Host_Allocate", "client");
  TsClient* c = args->client;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Host_Allocate: size must be > 0");
  TsDevice* dev = c->devices.front().get();
  ze_host_mem_alloc_desc_t hd{};
  hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void* p = nullptr;
  TS_ZE_CALL(dev, c->fn.zeMemAllocHost(c->context, &hd, static_cast<size_t>(args->size), 4096, &p),
             strprintf("zeMemAllocHost(%s)", human_size(args->size).c_str()));
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    c->host_allocated[reinterpret_cast<uintptr_t>(p)] = HostRange{args->size};
  }
  args->pointer = p;
  return nullptr;
}

TS_ZE_ENTRY(Host_Free, TS_HOST_FREE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Host_Free", "client");
  TsClient* c = args->client;
  if (!args->pointer) return nullptr;
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    auto it = c->host_allocated.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_allocated.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Host_Free: %p was not returned by Host_Allocate", args->pointer);
    c->host_allocated.erase(it);
  }
  TsError* e = synchronize_all(c);
  ze_result_t r = c->fn.zeMemFree(c->context, args->pointer);
  if (r != ZE_RESULT_SUCCESS && !e) e = dev_error(c->devices.front().get(), r, "zeMemFree(host)");
  return e;
}

TS_ZE_ENTRY(Host_Register, TS_HOST_REGISTER_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Host_Register", "client");
  TsClient* c = args->client;
  if (!args->pointer || args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Host_Register needs a pointer and a size > 0");
  if (!c->import_pointer)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: Host_Register: the driver does not provide "
                  "zexDriverImportExternalPointer (an Intel extension); allocate pinned memory "
                  "with Host_Allocate instead");
  const uintptr_t key = reinterpret_cast<uintptr_t>(args->pointer);
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    if (c->host_registered.count(key))
      return errorf(TS_ERROR_ALREADY_EXISTS, "level_zero: Host_Register: %p is already registered",
                    args->pointer);
  }
  TS_ZE_CALL(c->devices.front().get(),
             c->import_pointer(c->driver, args->pointer, static_cast<size_t>(args->size)),
             strprintf("zexDriverImportExternalPointer(%p, %s)", args->pointer,
                       human_size(args->size).c_str()));
  std::lock_guard<std::mutex> lk(c->host_mu);
  c->host_registered[key] = HostRange{args->size};
  return nullptr;
}

TS_ZE_ENTRY(Host_Unregister, TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Host_Unregister", "client");
  TsClient* c = args->client;
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    auto it = c->host_registered.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_registered.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Host_Unregister: %p was not registered", args->pointer);
    c->host_registered.erase(it);
  }
  TsError* e = synchronize_all(c);
  ze_result_t r = c->release_pointer(c->driver, args->pointer);
  if (r != ZE_RESULT_SUCCESS && !e)
    e = dev_error(c->devices.front().get(), r, "zexDriverReleaseImportedPointer");
  return e;
}

}  // namespace tessera::level_zero
