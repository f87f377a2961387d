// Buffers (device / pinned / managed are all host memory here) and
// page-locked host memory.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internal.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kDefaultAlignment = 64;
constexpr uint64_t kMmapThreshold = 256 * 1024;
constexpr uint64_t kHugePage = 2 * 1024 * 1024;

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}

std::string rlimit_text(rlim_t v) {
  if (v == RLIM_INFINITY) return "unlimited";
  return human_size(static_cast<uint64_t>(v));
}

// Bytes this process has locked now (VmLck of /proc/self/status), or -1
// when the kernel does not say.  Read with one bounded read: the file is a
// few KiB.
int64_t locked_bytes() {
  FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return -1;
  char buf[8192];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* line = std::strstr(buf, "\nVmLck:");
  unsigned long long kib = 0;
  if (!line || std::sscanf(line + 1, "VmLck: %llu kB", &kib) != 1) return -1;
  return static_cast<int64_t>(kib * 1024);
}

// The message for a failed mlock: size, errno text, what is locked already,
// the limit, the fix.
TsError* mlock_error(const char* entry, uint64_t size, int err) {
  rlimit rl{};
  getrlimit(RLIMIT_MEMLOCK, &rl);
  const int64_t locked = locked_bytes();
  const std::string held =
      locked >= 0 ? "; this process has " + human_size(static_cast<uint64_t>(locked)) + " locked already" : "";
  return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                "cpu: %s: mlock(%s) failed: %s%s; RLIMIT_MEMLOCK is %s (hard limit %s): raise "
                "it with `ulimit -l unlimited`, a `memlock` line in "
                "/etc/security/limits.conf, or grant the process CAP_IPC_LOCK",
                entry, human_size(size).c_str(), std::strerror(err), held.c_str(),
                rlimit_text(rl.rlim_cur).c_str(), rlimit_text(rl.rlim_max).c_str());
}

// Takes `size` bytes of the device's total for a new buffer; an error when
// they are not there (the sizes and what is in use, for the user).
TsError* reserve_device_memory(TsDevice* dev, uint64_t size) {
  TsClient* c = dev->client;
  const uint64_t total = c->physical_memory;
  std::lock_guard<std::mutex> lk(dev->memory_mu);
  std::lock_guard<std::mutex> all(c->memory_mu);
  if (size > total - std::min(c->bytes_in_use, total)) {
    const uint64_t others = c->bytes_in_use - dev->bytes_in_use;
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "cpu: cannot allocate %s on device %u: the host's %s hold %s of this device's %llu "
                  "buffers%s (%s free); free buffers first",
                  human_size(size).c_str(), dev->ordinal, human_size(total).c_str(),
                  human_size(dev->bytes_in_use).c_str(), static_cast<unsigned long long>(dev->buffers_in_use),
                  others ? (" and " + human_size(others) + " of the other devices'").c_str() : "",
                  human_size(total - std::min(c->bytes_in_use, total)).c_str());
  }
  dev->bytes_in_use += size;
  ++dev->buffers_in_use;
  c->bytes_in_use += size;
  return nullptr;
}

void release_device_memory(TsDevice* dev, uint64_t size) {
  std::lock_guard<std::mutex> lk(dev->memory_mu);
  std::lock_guard<std::mutex> all(dev->client->memory_mu);
  dev->bytes_in_use -= size;
  --dev->buffers_in_use;
  dev->client->bytes_in_use -= size;
}

void free_buffer_memory(TsBuffer* b) {
  if (b->locked) munlock(b->data, b->size);
  if (b->mapped) {
    munmap(b->base, b->mapped);
  } else {
    std::free(b->base);
  }
}

}  // namespace

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long psz = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psz <= 0) return 1ull << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(psz);
}

TsError* resolve_ref(const TsMemoryRef& ref, uint64_t size, const char* entry, const char* what,
                     uint8_t** out) {
  if ((ref.buffer == nullptr) == (ref.host == nullptr))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: %s: %s must name exactly one of a buffer and a host pointer (got %s)",
                  entry, what, ref.buffer ? "both" : "neither");
  if (ref.host != nullptr) {
    *out = static_cast<uint8_t*>(ref.host) + ref.offset;
    return nullptr;
  }
  TsBuffer* b = ref.buffer;
  if (!valid(b))
    return errorf(TS_ERROR_INVALID_HANDLE,
                  "cpu: %s: %s buffer %p is not a live CPU-plugin buffer", entry, what,
                  static_cast<void*>(b));
  if (ref.offset > b->size || size > b->size - ref.offset)
    return errorf(TS_ERROR_OUT_OF_RANGE,
                  "cpu: %s: %s range [offset %llu, +%llu bytes) runs past the end of the "
                  "buffer, which has %llu bytes",
                  entry, what, static_cast<unsigned long long>(ref.offset),
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(b->size));
  *out = b->data + ref.offset;
  return nullptr;
}

TS_CPU_ENTRY(Buffer_Allocate, TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Buffer_Allocate", "device");
  TsDevice* dev = args->device;
  const uint64_t size = args->size;
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Buffer_Allocate: size is 0: a buffer needs at least one byte");
  // Checked as an integer before it is read as the enum (raw_enum).
  const int64_t kind = plugin_support::raw_enum(args->kind);
  if (kind != TS_BUFFER_DEVICE && kind != TS_BUFFER_HOST_PINNED && kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Buffer_Allocate: kind %lld is not a TsBufferKind (0 device, 1 pinned, 2 "
                  "managed)",
                  static_cast<long long>(kind));
  uint64_t align = args->alignment == 0 ? kDefaultAlignment : args->alignment;
  if ((align & (align - 1)) != 0 || align > (1ull << 30))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Buffer_Allocate: alignment %llu is not a power of two up to 1 GiB",
                  static_cast<unsigned long long>(args->alignment));
  if (align < kDefaultAlignment) align = kDefaultAlignment;
  const uint64_t total = dev->client->physical_memory;
  if (size > total)
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "cpu: cannot allocate %s of device memory on device %u: the device has %s in "
                  "total",
                  human_size(size).c_str(), dev->ordinal, human_size(total).c_str());

  TsError* no_room = reserve_device_memory(dev, size);
  if (no_room != nullptr) return no_room;
  // Returned unless the buffer is handed out (then Buffer_Free returns it).
  bool granted = false;
  struct Release {
    TsDevice* dev;
    uint64_t size;
    const bool* granted;
    ~Release() {
      if (!*granted) release_device_memory(dev, size);
    }
  } release{dev, size, &granted};
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = size;
  b->accounted = true;
  const bool use_mmap =
      size >= kMmapThreshold || align > page_size() || args->kind == TS_BUFFER_HOST_PINNED;
  if (use_mmap) {
    // Buffers of 2 MiB and more start on a 2 MiB boundary and ask for
    // transparent huge pages (on with "madvise", Debian's default): a
    // kernel that walks a matrix row by row touches a new 4 KiB page per
    // row, and those TLB misses stalled the prefetches of a 2048^3 GEMM's
    // micro-kernel.  Where THP is off the advice is ignored.
    const bool huge = size >= kHugePage;
    if (huge && align < kHugePage) align = kHugePage;
    const uint64_t extra = align > page_size() ? align : 0;
    const uint64_t len = size + extra;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "cpu: cannot allocate %s of device memory on device %u: mmap failed: %s",
                    human_size(size).c_str(), dev->ordinal, std::strerror(errno));
    b->base = p;
    b->mapped = len;
    const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + (align - 1)) & ~(uintptr_t)(align - 1);
    b->data = reinterpret_cast<uint8_t*>(a);
    if (huge) madvise(b->data, size, MADV_HUGEPAGE);  // advice: failure changes nothing
  } else {
    const uint64_t rounded = (size + align - 1) & ~(align - 1);
    void* p = std::aligned_alloc(align, rounded);
    if (p == nullptr)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "cpu: cannot allocate %s of device memory on device %u: out of host memory",
                    human_size(size).c_str(), dev->ordinal);
    b->base = p;
    b->data = static_cast<uint8_t*>(p);
  }
  if (args->kind == TS_BUFFER_HOST_PINNED) {
    if (mlock(b->data, size) != 0) {
      const int err = errno;
      free_buffer_memory(b.get());
      return mlock_error("Buffer_Allocate(TS_BUFFER_HOST_PINNED)", size, err);
    }
    b->locked = true;
  }
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    dev->live.buffers.insert(b.get());
  }
  args->host_pointer = b->data;
  args->buffer = b.release();
  granted = true;
  return nullptr;
}

void destroy_buffer(TsBuffer* b) {
  TsDevice* dev = b->device;
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    dev->live.buffers.erase(b);
  }
  // cudaFree semantics, over every device of the client: a stream of
  // another device may copy from or launch on this buffer (peer access),
  // and a graph replays captured work on its own device's streams.
  for (TsDevice* d : dev->client->device_list) device_synchronize(d);
  if (!b->imported) free_buffer_memory(b);
  if (b->accounted) release_device_memory(dev, b->size);
  b->magic = kMagicDead;
  delete b;
}

TS_CPU_ENTRY(Buffer_Free, TS_BUFFER_FREE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->buffer, "Buffer_Free", "buffer");
  destroy_buffer(args->buffer);
  return nullptr;
}

// MINOR 6: the buffer's memory (the host address: cpu memory is host memory).
TS_CPU_ENTRY(Buffer_GetDeviceAddress, TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->buffer, "Buffer_GetDeviceAddress", "buffer");
  args->address = reinterpret_cast<uint64_t>(args->buffer->data);
  return nullptr;
}

// MINOR 6: host memory another library allocated, used in place.
TS_CPU_ENTRY(Buffer_Import, TS_BUFFER_IMPORT_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Buffer_Import", "device");
  const uint32_t kinds = (1u << TS_BUFFER_DEVICE) | (1u << TS_BUFFER_HOST_PINNED) | (1u << TS_BUFFER_MANAGED);
  if (TsError* e = tessera::plugin_support::check_import("cpu", args, kinds)) return e;
  TsDevice* dev = args->device;
  auto b = std::make_unique<TsBuffer>();
  b->device = dev;
  b->kind = args->kind;
  b->size = args->size;
  b->data = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(args->address));
  b->imported = true;
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    dev->live.buffers.insert(b.get());
  }
  args->host_pointer = b->data;
  args->buffer = b.release();
  return nullptr;
}

TS_CPU_ENTRY(Host_Allocate, TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Host_Allocate", "client");
  TsClient* c = args->client;
  const uint64_t size = args->size;
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Host_Allocate: size is 0: ask for at least one byte");
  if (size > c->physical_memory)
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "cpu: Host_Allocate: cannot page-lock %s: the machine has %s of memory",
                  human_size(size).c_str(), human_size(c->physical_memory).c_str());
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "cpu: Host_Allocate: mmap(%s) failed: %s",
                  human_size(size).c_str(), std::strerror(errno));
  if (mlock(p, size) != 0) {
    const int err = errno;
    munmap(p, size);
    return mlock_error("Host_Allocate", size, err);
  }
  try {
    std::lock_guard<std::mutex> lk(c->host_mu);
    c->host_allocs[p].size = size;
  } catch (...) {
    munlock(p, size);
    munmap(p, size);
    throw;
  }
  args->pointer = p;
  return nullptr;
}

TS_CPU_ENTRY(Host_Free, TS_HOST_FREE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Host_Free", "client");
  TsClient* c = args->client;
  if (args->pointer == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Host_Free: pointer is NULL");
  uint64_t size = 0;
  {
    std::lock_guard<std::mutex> lk(c->host_mu);
    auto it = c->host_allocs.find(args->pointer);
    if (it == c->host_allocs.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Host_Free: %p was not returned by Host_Allocate of this client (or "
                    "was already freed); memory from Host_Register is released with "
                    "Host_Unregister",
                    args->pointer);
    size = it->second.size;
    c->host_allocs.erase(it);  // its life token expires: graphs that copy it refuse to replay
  }
  for (TsDevice* d : c->device_list) device_synchronize(d);  // cudaFreeHost semantics
  munlock(args->pointer, size);
  munmap(args->pointer, size);
  return nullptr;
}

TS_CPU_ENTRY(Host_Register, TS_HOST_REGISTER_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Host_Register", "client");
  TsClient* c = args->client;
  if (args->pointer == nullptr || args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Host_Register: %s: pass the start and the size of existing host memory",
                  args->pointer == nullptr ? "pointer is NULL" : "size is 0");
  // mlock rounds the end up to a page: a range that wraps the address space
  // became a small one and "succeeded", locking nothing asked for.
  if (uintptr_t end = 0;
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(args->pointer), args->size, &end))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Host_Register: %llu bytes from %p wrap the address space: give the size of "
                  "the memory at the pointer",
                  static_cast<unsigned long long>(args->size), args->pointer);
  {
    // Claimed first, locked after: mlock of a large range takes long, and
    // a capture noting host ranges waits for host_mu under the scheduler
    // mutex (internal.hpp).
    std::lock_guard<std::mutex> lk(c->host_mu);
    if (c->host_registered.count(args->pointer))
      return errorf(TS_ERROR_ALREADY_EXISTS,
                    "cpu: Host_Register: %p is already registered: Host_Unregister it first",
                    args->pointer);
    c->host_registered[args->pointer].size = args->size;
  }
  if (mlock(args->pointer, args->size) != 0) {
    const int e = errno;
    std::lock_guard<std::mutex> lk(c->host_mu);
    c->host_registered.erase(args->pointer);
    return mlock_error("Host_Register", args->size, e);
  }
  return nullptr;
}

TS_CPU_ENTRY(Host_Unregister, TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Host_Unregister", "client");
  TsClient* c = args->client;
  std::lock_guard<std::mutex> lk(c->host_mu);
  auto it = c->host_registered.find(args->pointer);
  if (it == c->host_registered.end())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Host_Unregister: %p was not registered with Host_Register on this "
                  "client",
                  args->pointer);
  munlock(it->first, it->second.size);
  c->host_registered.erase(it);
  return nullptr;
}

}  // namespace tessera::cpu
