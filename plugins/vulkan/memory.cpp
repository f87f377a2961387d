// Buffers and pinned host memory: Buffer_Allocate/Free, Host_Allocate/Free,
// Host_Register/Unregister.  Every TsBuffer is one VkBuffer bound to its own
// VkDeviceMemory, persistently mapped when its memory type is host-visible.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"

namespace tessera::vk {

VkBufferUsageFlags buffer_usage() {
  return VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
}

namespace {

int type_for(TsDevice* dev, MemoryUse use, uint32_t allowed_bits) {
  if (allowed_bits == 0) return -1;
  int preferred = use == MemoryUse::kDevice   ? dev->type_device
                  : use == MemoryUse::kHost   ? dev->type_host
                                              : dev->type_managed;
  if (preferred >= 0 && (allowed_bits >> preferred) & 1u) return preferred;
  // The preferred type is not allowed for this buffer: any type with the
  // same required properties.
  VkMemoryPropertyFlags need =
      use == MemoryUse::kDevice ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
      : use == MemoryUse::kHost
          ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
          : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < dev->memory.memoryTypeCount; ++i)
    if (((allowed_bits >> i) & 1u) &&
        (dev->memory.memoryTypes[i].propertyFlags & need) == need)
      return static_cast<int>(i);
  return -1;
}

const char* use_name(MemoryUse use) {
  return use == MemoryUse::kDevice ? "device-local"
         : use == MemoryUse::kHost ? "host-visible"
                                   : "device-local host-visible";
}

}  // namespace

void release(TsDevice* dev, Allocation& a) {
  if (a.buffer) dev->fn.vkDestroyBuffer(dev->device, a.buffer, nullptr);
  if (a.memory) dev->fn.vkFreeMemory(dev->device, a.memory, nullptr);  // unmaps
  a = Allocation{};
}

TsError* allocate(TsDevice* dev, uint64_t size, MemoryUse use, Allocation* out,
                  const char* what, uint64_t align) {
  const DeviceFns& f = dev->fn;
  uint64_t max_alloc = dev->maint3.maxMemoryAllocationSize;
  if (max_alloc && size > max_alloc)
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "vulkan: cannot allocate %s of %s memory: the device allows at most "
                  "%s per allocation (maxMemoryAllocationSize)",
                  human_size(size).c_str(), use_name(use), human_size(max_alloc).c_str());
  Allocation a;
  a.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = buffer_usage();
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = f.vkCreateBuffer(dev->device, &bci, nullptr, &a.buffer);
  if (r != VK_SUCCESS)
    return vk_error(r, strprintf("vkCreateBuffer(%s)", human_size(size).c_str()));
  VkMemoryRequirements req{};
  f.vkGetBufferMemoryRequirements(dev->device, a.buffer, &req);
  int type = type_for(dev, use, req.memoryTypeBits);
  if (type < 0) {
    release(dev, a);
    return errorf(TS_ERROR_UNSUPPORTED, "vulkan: the device has no %s memory type for %s",
                  use_name(use), what);
  }
  uint32_t heap = dev->memory.memoryTypes[type].heapIndex;
  if (req.size > dev->memory.memoryHeaps[heap].size) {
    release(dev, a);
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "vulkan: cannot allocate %s: memory heap %u holds %s",
                  human_size(size).c_str(), heap,
                  human_size(dev->memory.memoryHeaps[heap].size).c_str());
  }
  const bool visible =
      (dev->memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
  // An alignment the mapping may not give: room to bind the buffer further
  // in, where the host address is aligned.
  const uint64_t slack = visible && align > 1 ? align + req.alignment : 0;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size + slack;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = f.vkAllocateMemory(dev->device, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    release(dev, a);
    return vk_error(r, strprintf("vkAllocateMemory(%s)", human_size(req.size).c_str()));
  }
  a.type = static_cast<uint32_t>(type);
  uint8_t* mapped = nullptr;
  if (visible) {
    void* p = nullptr;
    r = f.vkMapMemory(dev->device, a.memory, 0, VK_WHOLE_SIZE, 0, &p);
    if (r != VK_SUCCESS) {
      release(dev, a);
      return vk_error(r, strprintf("vkMapMemory(%s)", human_size(req.size).c_str()));
    }
    mapped = static_cast<uint8_t*>(p);
  }
  uint64_t offset = 0;
  if (slack) {
    const uint64_t step = std::max<uint64_t>(req.alignment, 1);
    while (offset <= slack - step &&
           (reinterpret_cast<uintptr_t>(mapped + offset) % align != 0))
      offset += step;
    if (reinterpret_cast<uintptr_t>(mapped + offset) % align != 0) {
      release(dev, a);
      return errorf(TS_ERROR_UNSUPPORTED,
                    "vulkan: cannot place %s at a host address aligned to %llu bytes "
                    "(the memory maps at %p and binds at multiples of %llu)",
                    what, static_cast<unsigned long long>(align), static_cast<void*>(mapped),
                    static_cast<unsigned long long>(req.alignment));
    }
  }
  r = f.vkBindBufferMemory(dev->device, a.buffer, a.memory, offset);
  if (r != VK_SUCCESS) {
    release(dev, a);
    return vk_error(r, "vkBindBufferMemory");
  }
  if (mapped) a.mapped = mapped + offset;
  *out = a;
  return nullptr;
}

TsError* import_host(TsDevice* dev, void* host, uint64_t size, Allocation* out) {
  const DeviceFns& f = dev->fn;
  if (!dev->import_host || !f.vkGetMemoryHostPointerPropertiesEXT)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: the device lacks VK_EXT_external_memory_host");
  VkMemoryHostPointerPropertiesEXT hp{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  TS_VK_CALL(f.vkGetMemoryHostPointerPropertiesEXT(
                 dev->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, host,
                 &hp),
             "vkGetMemoryHostPointerPropertiesEXT");
  Allocation a;
  a.size = size;
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &ext};
  bci.size = size;
  bci.usage = buffer_usage();
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TS_VK_CALL(f.vkCreateBuffer(dev->device, &bci, nullptr, &a.buffer),
             "vkCreateBuffer(external host memory)");
  VkMemoryRequirements req{};
  f.vkGetBufferMemoryRequirements(dev->device, a.buffer, &req);
  uint32_t bits = req.memoryTypeBits & hp.memoryTypeBits;
  int type = -1;
  for (uint32_t i = 0; i < dev->memory.memoryTypeCount && type < 0; ++i)
    if ((bits >> i) & 1u) type = static_cast<int>(i);
  if (type < 0) {
    release(dev, a);
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: no memory type can import this host pointer");
  }
  VkImportMemoryHostPointerInfoEXT imp{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
  imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  imp.pHostPointer = host;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &imp};
  mai.allocationSize = size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  VkResult r = f.vkAllocateMemory(dev->device, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    release(dev, a);
    return vk_error(r, strprintf("vkAllocateMemory(import %s of host memory)",
                                 human_size(size).c_str()));
  }
  r = f.vkBindBufferMemory(dev->device, a.buffer, a.memory, 0);
  if (r != VK_SUCCESS) {
    release(dev, a);
    return vk_error(r, "vkBindBufferMemory(imported host memory)");
  }
  a.type = static_cast<uint32_t>(type);
  *out = a;
  return nullptr;
}

HostView resolve_host(TsDevice* dev, const void* p, uint64_t size) {
  HostView v;
  TsClient* c = dev->client;
  uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lk(c->host_mu);
  auto it = c->host_ranges.upper_bound(addr);
  if (it == c->host_ranges.begin()) return v;
  --it;
  const HostRange& r = *it->second;
  uintptr_t start = reinterpret_cast<uintptr_t>(r.start);
  if (addr < start || addr + size > start + r.size || addr + size < addr) return v;
  if (dev->ordinal >= r.views.size() || !r.views[dev->ordinal].buffer) return v;
  v.buffer = r.views[dev->ordinal].buffer;
  v.offset = addr - reinterpret_cast<uintptr_t>(r.view_base);
  v.range = it->second;
  return v;
}

namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Imports [base, base+size) into every device that can; the others see the
// range as pageable (copies staged).
void import_everywhere(TsClient* c, HostRange& r) {
  r.views.resize(c->devices.size());
  for (auto& d : c->devices) {
    if (!d->import_host) continue;
    uintptr_t a = reinterpret_cast<uintptr_t>(r.view_base);
    uint64_t len = round_up(reinterpret_cast<uintptr_t>(r.start) + r.size - a,
                            d->import_alignment);
    if (a % d->import_alignment) continue;
    Allocation view;
    if (TsError* e = import_host(d.get(), r.view_base, len, &view)) {
      // The device cannot see the range: its copies are staged (and blocking).
      TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
      plugin_support::Error_Destroy(&da);
    } else {
      r.views[d->ordinal] = view;
      d->stat_imports.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void release_views(TsClient* c, HostRange& r) {
  if (r.origin == HostRange::kPinnedBuffer) return;  // the buffer owns it
  for (size_t i = 0; i < r.views.size() && i < c->devices.size(); ++i)
    if (r.views[i].buffer) release(c->devices[i].get(), r.views[i]);
}

uint64_t max_import_alignment(TsClient* c) {
  uint64_t a = 4096;
  for (auto& d : c->devices) a = std::max(a, d->import_alignment);
  return a;
}

}  // namespace

// ------------------------------------------------------------ entry points

TS_VK_ENTRY(Buffer_Allocate, TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Buffer_Allocate", "device");
  // Checked as an integer before it is read as the enum (raw_enum).
  if (const int64_t kind = plugin_support::raw_enum(args->kind);
      kind != TS_BUFFER_DEVICE && kind != TS_BUFFER_HOST_PINNED && kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Buffer_Allocate: kind %lld is not a TsBufferKind (0 device, 1 "
                  "pinned, 2 managed)",
                  static_cast<long long>(kind));
  TsDevice* dev = args->device;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Buffer_Allocate: the size must be greater than zero");
  if (args->alignment & (args->alignment - 1))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Buffer_Allocate: alignment %llu is not a power of two",
                  static_cast<unsigned long long>(args->alignment));
  MemoryUse use;
  switch (args->kind) {
    case TS_BUFFER_DEVICE: use = MemoryUse::kDevice; break;
    case TS_BUFFER_HOST_PINNED: use = MemoryUse::kHost; break;
    case TS_BUFFER_MANAGED:
      if (dev->type_managed < 0)
        return errorf(TS_ERROR_UNSUPPORTED,
                      "vulkan: managed buffers need a DEVICE_LOCAL|HOST_VISIBLE|"
                      "HOST_COHERENT memory type, which %s lacks",
                      dev->props.deviceName);
      use = MemoryUse::kManaged;
      break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Buffer_Allocate: unknown kind %d",
                    static_cast<int>(args->kind));
  }
  auto* b = new TsBuffer;
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  if (TsError* e = allocate(dev, args->size, use, &b->alloc, "a buffer", args->alignment)) {
    delete b;
    if (e->code != TS_ERROR_RESOURCE_EXHAUSTED) return e;
    // The driver ran out before the accounting below could say why: what
    // the heaps hold and what this device's buffers use of them.
    std::string heaps;
    {
      std::lock_guard<std::mutex> lk(dev->heap_mu);
      for (uint32_t h = 0; h < dev->memory.memoryHeapCount; ++h)
        heaps += strprintf("%sheap %u: %llu buffers use %s of %s", h ? ", " : "", h,
                           static_cast<unsigned long long>(dev->heap_buffers[h]),
                           human_size(dev->heap_in_use[h]).c_str(),
                           human_size(dev->memory.memoryHeaps[h].size).c_str());
    }
    std::string message = e->message + " (" + heaps + "): free buffers first";
    TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
    plugin_support::Error_Destroy(&da);
    return make_error(TS_ERROR_RESOURCE_EXHAUSTED, std::move(message));
  }
  {
    // Counted against the heap the driver placed it in.
    const uint32_t heap = dev->memory.memoryTypes[b->alloc.type].heapIndex;
    const uint64_t total = dev->memory.memoryHeaps[heap].size;
    std::lock_guard<std::mutex> lk(dev->heap_mu);
    const uint64_t used = dev->heap_in_use[heap];
    if (b->alloc.size > total - std::min(used, total)) {
      release(dev, b->alloc);
      delete b;
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "vulkan: cannot allocate %s for a buffer on %s: memory heap %u holds %s, of "
                    "which %llu buffers use %s (%s free); free buffers first",
                    human_size(args->size).c_str(), dev->props.deviceName, heap,
                    human_size(total).c_str(),
                    static_cast<unsigned long long>(dev->heap_buffers[heap]),
                    human_size(used).c_str(), human_size(total - std::min(used, total)).c_str());
    }
    dev->heap_in_use[heap] += b->alloc.size;
    ++dev->heap_buffers[heap];
    b->accounted = b->alloc.size;
    b->heap = heap;
  }
  args->buffer = b;
  args->host_pointer = nullptr;
  if (args->kind != TS_BUFFER_DEVICE) {
    args->host_pointer = b->alloc.mapped;
    if (args->kind == TS_BUFFER_HOST_PINNED) {
      // Async copies may name this memory by its host address.
      auto r = std::make_shared<HostRange>();
      r->origin = HostRange::kPinnedBuffer;
      r->start = r->view_base = b->alloc.mapped;
      r->size = b->size;
      r->views.resize(dev->client->devices.size());
      r->views[dev->ordinal] = b->alloc;
      std::lock_guard<std::mutex> lk(dev->client->host_mu);
      dev->client->host_ranges[reinterpret_cast<uintptr_t>(r->start)] = r;
    }
  }
  std::lock_guard<std::mutex> lk(dev->mu);
  dev->live.buffers.insert(b);
  return nullptr;
}

TsError* destroy_buffer(TsBuffer* b) {
  TsDevice* dev = b->device;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->live.buffers.erase(b);
  }
  // cudaFree semantics: never free under running work.
  TsError* e = synchronize_device(dev);
  if (b->kind == TS_BUFFER_HOST_PINNED) {
    std::lock_guard<std::mutex> lk(dev->client->host_mu);
    dev->client->host_ranges.erase(reinterpret_cast<uintptr_t>(b->alloc.mapped));
  }
  release(dev, b->alloc);
  if (b->accounted) {
    std::lock_guard<std::mutex> lk(dev->heap_mu);
    dev->heap_in_use[b->heap] -= b->accounted;
    --dev->heap_buffers[b->heap];
  }
  b->magic = kMagicDead;
  delete b;
  return e;
}

TS_VK_ENTRY(Buffer_Free, TS_BUFFER_FREE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->buffer, "Buffer_Free", "buffer");
  return destroy_buffer(args->buffer);
}

TS_VK_ENTRY(Host_Allocate, TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Host_Allocate", "client");
  TsClient* c = args->client;
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Host_Allocate: size must be > 0");
  uint64_t align = max_import_alignment(c);
  // Bounded before the rounding, which would wrap past 2^64 (SIZE_MAX once
  // became a few bytes, then a crash).
  if (args->size > (uint64_t{1} << 62))
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "vulkan: cannot allocate %s of host memory",
                  human_size(args->size).c_str());
  uint64_t len = round_up(args->size, align);
  void* p = std::aligned_alloc(align, len);
  if (!p)
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "vulkan: cannot allocate %s of host memory",
                  human_size(len).c_str());
  auto r = std::make_shared<HostRange>();
  r->origin = HostRange::kAllocated;
  r->start = r->view_base = static_cast<uint8_t*>(p);
  r->size = len;
  r->heap = p;
  import_everywhere(c, *r);
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    c->host_ranges[reinterpret_cast<uintptr_t>(p)] = r;
  }
  args->pointer = p;
  return nullptr;
}

TS_VK_ENTRY(Host_Free, TS_HOST_FREE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Host_Free", "client");
  TsClient* c = args->client;
  if (!args->pointer) return nullptr;
  std::shared_ptr<HostRange> r;
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    auto it = c->host_ranges.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_ranges.end() || it->second->origin != HostRange::kAllocated)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Host_Free: %p was not returned by Host_Allocate",
                    args->pointer);
    r = it->second;
    c->host_ranges.erase(it);
  }
  for (auto& d : c->devices) synchronize_device(d.get());  // cudaFreeHost waits too
  release_views(c, *r);
  std::free(r->heap);
  return nullptr;
}

TS_VK_ENTRY(Host_Register, TS_HOST_REGISTER_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Host_Register", "client");
  TsClient* c = args->client;
  if (!args->pointer || args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Host_Register needs a pointer and a size > 0");
  // The range must not wrap the address space (the page rounding below
  // would then import a wrong, tiny range).
  if (args->size > UINTPTR_MAX - reinterpret_cast<uintptr_t>(args->pointer) ||
      args->size > (uint64_t{1} << 62))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Host_Register: %p + %s wraps the address space", args->pointer,
                  human_size(args->size).c_str());
  // Import the whole pages around the range; devices without
  // VK_EXT_external_memory_host stage copies of it instead.
  uint64_t align = max_import_alignment(c);
  auto r = std::make_shared<HostRange>();
  r->origin = HostRange::kRegistered;
  r->start = static_cast<uint8_t*>(args->pointer);
  r->size = args->size;
  r->view_base = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(args->pointer) /
                                            align * align);
  import_everywhere(c, *r);
  std::lock_guard<std::mutex> lk(c->host_mu);
  uintptr_t key = reinterpret_cast<uintptr_t>(args->pointer);
  if (c->host_ranges.count(key)) {
    release_views(c, *r);
    return errorf(TS_ERROR_ALREADY_EXISTS, "vulkan: Host_Register: %p is already registered",
                  args->pointer);
  }
  c->host_ranges[key] = r;
  return nullptr;
}

TS_VK_ENTRY(Host_Unregister, TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Host_Unregister", "client");
  TsClient* c = args->client;
  std::shared_ptr<HostRange> r;
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    auto it = c->host_ranges.find(reinterpret_cast<uintptr_t>(args->pointer));
    if (it == c->host_ranges.end() || it->second->origin != HostRange::kRegistered)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Host_Unregister: %p was not registered", args->pointer);
    r = it->second;
    c->host_ranges.erase(it);
  }
  for (auto& d : c->devices) synchronize_device(d.get());
  release_views(c, *r);
  return nullptr;
}

}  // namespace tessera::vk
