// Unified-memory hints.  All CPU memory is already "unified": prefetch of a
// managed buffer becomes madvise(MADV_WILLNEED) on its pages (EMULATED);
// advice on a managed buffer is recorded (EMULATED); other kinds IGNORED.
#include <sys/mman.h>
#include <unistd.h>

#include "internal.hpp"

namespace tessera::cpu {
namespace {

class PrefetchOp final : public Op {
 public:
  PrefetchOp(void* addr, size_t len) : addr_(addr), len_(len) {}
  void run(Task&, uint32_t, uint32_t, WorkerContext&) override {
    madvise(addr_, len_, MADV_WILLNEED);  // advisory; failure changes nothing
  }

 private:
  void* addr_;
  size_t len_;
};

// Checks buffer and range; returns the page-aligned span.
TsError* hint_range(TsBuffer* b, uint64_t offset, uint64_t size, const char* entry,
                    void** addr, size_t* len) {
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: size is 0", entry);
  uint8_t* p = nullptr;
  if (TsError* e = resolve_ref(TsMemoryRef{b, offset, nullptr}, size, entry, "buffer", &p))
    return e;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t hi = reinterpret_cast<uintptr_t>(p) + size;
  *addr = reinterpret_cast<void*>(lo);
  *len = hi - lo;
  return nullptr;
}

}  // namespace

TS_CPU_ENTRY(Buffer_Prefetch, TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->buffer, "Buffer_Prefetch", "buffer");
  if (args->target != nullptr) TS_CPU_CHECK_HANDLE(args->target, "Buffer_Prefetch", "target");
  if (args->stream != nullptr) TS_CPU_CHECK_HANDLE(args->stream, "Buffer_Prefetch", "stream");
  void* addr = nullptr;
  size_t len = 0;
  if (TsError* e = hint_range(args->buffer, args->offset, args->size, "Buffer_Prefetch", &addr,
                              &len))
    return e;
  if (args->buffer->kind != TS_BUFFER_MANAGED) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  TsStream* s = args->stream ? args->stream : args->buffer->device->default_stream;
  if (TsError* e = submit_op(s, PrefetchOp(addr, len))) return e;
  args->result = TS_HINT_EMULATED;
  return nullptr;
}

TS_CPU_ENTRY(Buffer_Advise, TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->buffer, "Buffer_Advise", "buffer");
  if (args->device != nullptr) TS_CPU_CHECK_HANDLE(args->device, "Buffer_Advise", "device");
  // Checked as an integer before it is read as the enum (raw_enum).
  const int64_t advice = plugin_support::raw_enum(args->advice);
  if (advice < 0 || advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Buffer_Advise: advice %lld is not a TsAdvice value",
                  static_cast<long long>(advice));
  void* addr = nullptr;
  size_t len = 0;
  if (TsError* e = hint_range(args->buffer, args->offset, args->size, "Buffer_Advise", &addr,
                              &len))
    return e;
  TsBuffer* b = args->buffer;
  if (b->kind != TS_BUFFER_MANAGED) {
    args->result = TS_HINT_IGNORED;
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lk(b->advice_mu);
    b->advice.emplace_back(args->advice, args->device);
  }
  // Read-mostly data is worth faulting in ahead of use.
  if (args->advice == TS_ADVICE_READ_MOSTLY) madvise(addr, len, MADV_WILLNEED);
  args->result = TS_HINT_EMULATED;
  return nullptr;
}

}  // namespace tessera::cpu
