// Memcpy / Memset: large ranges are split into 1 MiB items so every worker
// takes part.
#include <algorithm>
#include <cstring>

#include "internal.hpp"

namespace tessera::cpu {
namespace {

constexpr uint64_t kChunk = 1 << 20;

uint32_t chunks_for(uint64_t size) {
  if (size <= 2 * kChunk) return 1;
  const uint64_t n = (size + kChunk - 1) / kChunk;
  return n > 0xffffffffull ? 0xffffffffu : static_cast<uint32_t>(n);
}

class CopyOp final : public Op {
 public:
  CopyOp(uint8_t* dst, const uint8_t* src, uint64_t size)
      : dst_(dst), src_(src), size_(size), items_(chunks_for(size)),
        overlap_(dst < src + size && src < dst + size) {}
  uint32_t work_items() const override { return overlap_ ? 1 : items_; }
  void run(Task&, uint32_t begin, uint32_t end, WorkerContext&) override {
    if (overlap_) {
      std::memmove(dst_, src_, size_);
      return;
    }
    const uint64_t per = (size_ + items_ - 1) / items_;
    const uint64_t lo = begin * per;
    const uint64_t hi = std::min<uint64_t>(size_, end * per);
    if (lo < hi) std::memcpy(dst_ + lo, src_ + lo, hi - lo);
  }

 private:
  uint8_t* dst_;
  const uint8_t* src_;
  uint64_t size_;
  uint32_t items_;
  bool overlap_;
};

class MemsetOp final : public Op {
 public:
  MemsetOp(uint8_t* dst, uint8_t value, uint64_t size)
      : dst_(dst), size_(size), items_(chunks_for(size)), value_(value) {}
  uint32_t work_items() const override { return items_; }
  void run(Task&, uint32_t begin, uint32_t end, WorkerContext&) override {
    const uint64_t per = (size_ + items_ - 1) / items_;
    const uint64_t lo = begin * per;
    const uint64_t hi = std::min<uint64_t>(size_, end * per);
    if (lo < hi) std::memset(dst_ + lo, value_, hi - lo);
  }

 private:
  uint8_t* dst_;
  uint64_t size_;
  uint32_t items_;
  uint8_t value_;
};

}  // namespace

TS_CPU_ENTRY(Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE) {
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Memcpy: size is 0: copy at least one byte");
  uint8_t* dst = nullptr;
  uint8_t* src = nullptr;
  if (TsError* e = resolve_ref(args->dst, args->size, "Memcpy", "dst", &dst)) return e;
  if (TsError* e = resolve_ref(args->src, args->size, "Memcpy", "src", &src)) return e;
  TsBuffer* db = args->dst.buffer;
  TsBuffer* sb = args->src.buffer;
  if (db && sb && db->device->client != sb->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Memcpy: dst and src buffers belong to different clients");
  // Peer copies between CPU devices are plain loads and stores.
  args->peer_mode = (db && sb) ? TS_PEER_COPY_DIRECT : TS_PEER_COPY_NONE;
  if (args->stream != nullptr) {
    TS_CPU_CHECK_HANDLE(args->stream, "Memcpy", "stream");
    // Another client's stream runs on another scheduler: never mixed.
    TsBuffer* b = db ? db : sb;
    if (b && b->device->client != args->stream->device->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Memcpy: the stream belongs to another client than the buffer");
    OpUses uses;
    uses.buffers[0] = sb;
    uses.buffers[1] = db;
    uses.op = "copy";
    if (!sb || !db) {
      uses.host = sb ? static_cast<const void*>(dst) : static_cast<const void*>(src);
      uses.host_is_source = !sb;
    }
    return submit_op(args->stream, CopyOp(dst, src, args->size), &uses);
  }
  TsDevice* dev = db ? db->device : sb ? sb->device : nullptr;
  if (dev == nullptr) {  // host to host
    std::memmove(dst, src, args->size);
    return nullptr;
  }
  return run_sync(dev, CopyOp(dst, src, args->size));
}

TS_CPU_ENTRY(Memset, TS_MEMSET_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->buffer, "Memset", "buffer");
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Memset: size is 0: set at least one byte");
  uint8_t* dst = nullptr;
  TsMemoryRef ref{args->buffer, args->offset, nullptr};
  if (TsError* e = resolve_ref(ref, args->size, "Memset", "buffer", &dst)) return e;
  if (args->stream != nullptr) {
    TS_CPU_CHECK_HANDLE(args->stream, "Memset", "stream");
    if (args->stream->device->client != args->buffer->device->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Memset: the stream belongs to another client than the buffer");
    OpUses uses;
    uses.buffers[0] = args->buffer;
    uses.op = "memset";
    return submit_op(args->stream, MemsetOp(dst, args->value, args->size), &uses);
  }
  return run_sync(args->buffer->device, MemsetOp(dst, args->value, args->size));
}

}  // namespace tessera::cpu
