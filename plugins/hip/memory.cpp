// Buffers and pinned host memory: Buffer_Allocate/Free (hipMalloc,
// hipHostMalloc, hipMallocManaged by kind), Host_Allocate/Free
// (hipHostMalloc / hipHostFree), Host_Register/Unregister (hipHostRegister
// / hipHostUnregister).  Pinned memory is Portable (every device of the
// process sees it) and Mapped (the devices address it in place; with
// unified addressing at the host address).
#include <cstring>

#include "internal.hpp"

namespace tessera::hip {

namespace {

constexpr uint64_t kNaturalDeviceAlignment = 256;  // hipMalloc's guarantee
constexpr uint64_t kNaturalHostAlignment = 4096;   // hipHostMalloc: pages

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

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

uint8_t* aligned(void* p, uint64_t align) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<uint8_t*>(align ? round_up(v, align) : v);
}

}  // namespace

std::string describe_buffer(const TsBuffer* b) {
  return "a " + human_size(b->size) + " " + kind_name(b->kind) + " buffer";
}

TS_HIP_ENTRY(Buffer_Allocate, TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Buffer_Allocate", "device");
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t kind = plugin_support::raw_enum(args->kind);
      kind != TS_BUFFER_DEVICE && kind != TS_BUFFER_HOST_PINNED && kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Buffer_Allocate: kind %lld is not a TsBufferKind (0 device, 1 "
                  "pinned, 2 managed)",
                  static_cast<long long>(kind));
  TsDevice* dev = args->device;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Buffer_Allocate: the size must be greater than zero");
  if (args->alignment & (args->alignment - 1))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Buffer_Allocate: alignment %llu is not a power of two",
                  static_cast<unsigned long long>(args->alignment));
  if (args->kind != TS_BUFFER_DEVICE && args->kind != TS_BUFFER_HOST_PINNED &&
      args->kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Buffer_Allocate: unknown kind %d",
                  static_cast<int>(args->kind));
  if (args->kind == TS_BUFFER_MANAGED && !dev->managed)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "hip: %s does not support managed memory (hipDeviceAttributeManagedMemory is 0)",
                  dev->ts.name);
  const uint64_t natural =
      args->kind == TS_BUFFER_HOST_PINNED ? kNaturalHostAlignment : kNaturalDeviceAlignment;
  const uint64_t align = args->alignment > natural ? args->alignment : 0;
  const uint64_t pad = align ? align - 1 : 0;
  if (args->size > (uint64_t{1} << 62) || pad > (uint64_t{1} << 62))
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "hip: cannot allocate %s (alignment %llu)",
                  human_size(args->size).c_str(),
                  static_cast<unsigned long long>(args->alignment));
  const size_t bytes = static_cast<size_t>(args->size + pad);
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  const HipFns& fn = *dev->fn;
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  switch (args->kind) {
    case TS_BUFFER_DEVICE:
      TS_HIP_CALL(dev, fn.hipMalloc(&b->base, bytes),
                  strprintf("hipMalloc(%s)", human_size(bytes).c_str()));
      b->dptr = aligned(b->base, align);
      break;
    case TS_BUFFER_HOST_PINNED: {
      TS_HIP_CALL(dev, fn.hipHostMalloc(&b->base, bytes, hipHostMallocPortable | hipHostMallocMapped),
                  strprintf("hipHostMalloc(%s)", human_size(bytes).c_str()));
      void* d0 = nullptr;
      hipError_t r = fn.hipHostGetDevicePointer(&d0, b->base, 0);
      if (r != hipSuccess) {
        (void)fn.hipHostFree(b->base);
        return dev_error(dev, r, "hipHostGetDevicePointer");
      }
      const uintptr_t h = reinterpret_cast<uintptr_t>(b->base);
      const uint64_t skip = align ? round_up(h, align) - h : 0;
      b->host = static_cast<uint8_t*>(b->base) + skip;
      b->dptr = static_cast<uint8_t*>(d0) + skip;
      break;
    }
    case TS_BUFFER_MANAGED:
      TS_HIP_CALL(dev, fn.hipMallocManaged(&b->base, bytes, hipMemAttachGlobal),
                  strprintf("hipMallocManaged(%s)", human_size(bytes).c_str()));
      b->dptr = aligned(b->base, align);
      b->host = b->dptr;
      break;
  }
  args->host_pointer = b->host;
  dev->live_buffers.add(b.get());
  args->buffer = b.release();
  return nullptr;
}

TS_HIP_ENTRY(Buffer_Free, TS_BUFFER_FREE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->buffer, "Buffer_Free", "buffer");
  TsBuffer* b = args->buffer;
  TsDevice* dev = b->device;
  // Never free under running work.
  TsError* e = synchronize_device(dev);
  if (TsError* be = bind(dev)) {
    if (e) destroy_error(e);
    return be;
  }
  const bool pinned = b->kind == TS_BUFFER_HOST_PINNED;
  hipError_t r = b->imported ? hipSuccess : pinned ? dev->fn->hipHostFree(b->base) : dev->fn->hipFree(b->base);
  dev->live_buffers.remove(b);
  b->magic = kMagicDead;
  const uint64_t size = b->size;
  delete b;
  if (r != hipSuccess && !e)
    e = dev_error(dev, r, strprintf("%s(%s)", pinned ? "hipHostFree" : "hipFree",
                                    human_size(size).c_str()));
  return e;
}

// MINOR 6: its device address (hipDeviceptr_t).
TS_HIP_ENTRY(Buffer_GetDeviceAddress, TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->buffer, "Buffer_GetDeviceAddress", "buffer");
  args->address = reinterpret_cast<uint64_t>(args->buffer->dptr);
  return nullptr;
}

// MINOR 6: memory another library allocated (a device pointer; pinned and
// managed memory have the same address on the host), used in place.
TS_HIP_ENTRY(Buffer_Import, TS_BUFFER_IMPORT_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Buffer_Import", "device");
  TsDevice* dev = args->device;
  if (TsError* e = tessera::plugin_support::check_import("hip", args, dev->ts.buffer_kinds)) return e;
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  b->dptr = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(args->address));
  if (args->kind != TS_BUFFER_DEVICE) b->host = b->dptr;
  b->imported = true;
  args->host_pointer = b->host;
  dev->live_buffers.add(b.get());
  args->buffer = b.release();
  return nullptr;
}

TS_HIP_ENTRY(Host_Allocate, TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Host_Allocate", "client");
  TsClient* c = args->client;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Host_Allocate: size must be > 0");
  TsDevice* dev = c->devices.front().get();
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  void* p = nullptr;
  TS_HIP_CALL(dev,
              c->fn.hipHostMalloc(&p, static_cast<size_t>(args->size),
                                  hipHostMallocPortable | hipHostMallocMapped),
              strprintf("hipHostMalloc(%s)", human_size(args->size).c_str()));
  {
    std::lock_guard<std::mutex> lk(c->capture_mu);
    c->host_allocated[reinterpret_cast<uintptr_t>(p)] = args->size;
  }
  args->pointer = p;
  return nullptr;
}

TS_HIP_ENTRY(Host_Free, TS_HOST_FREE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Host_Free", "client");
  TsClient* c = args->client;
  if (!args->pointer) return nullptr;
  {
    std::lock_guard<std::mutex> lk(c->capture_mu);
    auto it = c->host_allocated.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_allocated.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: Host_Free: %p was not returned by Host_Allocate", args->pointer);
    c->host_allocated.erase(it);
  }
  TsError* e = synchronize_all(c);
  TsDevice* dev = c->devices.front().get();
  if (TsError* be = bind(dev)) {
    if (e) destroy_error(e);
    return be;
  }
  hipError_t r = c->fn.hipHostFree(args->pointer);
  if (r != hipSuccess && !e) e = dev_error(dev, r, "hipHostFree");
  return e;
}

TS_HIP_ENTRY(Host_Register, TS_HOST_REGISTER_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Host_Register", "client");
  TsClient* c = args->client;
  if (!args->pointer || args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Host_Register needs a pointer and a size > 0");
  const uintptr_t key = reinterpret_cast<uintptr_t>(args->pointer);
  {
    std::lock_guard<std::mutex> lk(c->capture_mu);
    if (c->host_registered.count(key))
      return errorf(TS_ERROR_ALREADY_EXISTS, "hip: Host_Register: %p is already registered",
                    args->pointer);
  }
  TsDevice* dev = c->devices.front().get();
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  TS_HIP_CALL(dev,
              c->fn.hipHostRegister(args->pointer, static_cast<size_t>(args->size),
                                    hipHostRegisterPortable | hipHostRegisterMapped),
              strprintf("hipHostRegister(%p, %s)", args->pointer,
                        human_size(args->size).c_str()));
  std::lock_guard<std::mutex> lk(c->capture_mu);
  c->host_registered[key] = args->size;
  return nullptr;
}

TS_HIP_ENTRY(Host_Unregister, TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Host_Unregister", "client");
  TsClient* c = args->client;
  {
    std::lock_guard<std::mutex> lk(c->capture_mu);
    auto it = c->host_registered.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_registered.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Host_Unregister: %p was not registered",
                    args->pointer);
    c->host_registered.erase(it);
  }
  TsError* e = synchronize_all(c);
  TsDevice* dev = c->devices.front().get();
  if (TsError* be = bind(dev)) {
    if (e) destroy_error(e);
    return be;
  }
  hipError_t r = c->fn.hipHostUnregister(args->pointer);
  if (r != hipSuccess && !e) e = dev_error(dev, r, "hipHostUnregister");
  return e;
}

}  // namespace tessera::hip
