// Collectives across the devices of one client.  Each rank's part is a
// manual task on its own stream: when it runs it only records its arrival
// (the worker moves on; no thread blocks waiting for peers).  The last rank
// to arrive performs the whole collective and completes every rank's task.
#include <algorithm>
#include <cstring>

#include "internal.hpp"

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;
};

namespace tessera::cpu {
namespace {

struct CollectiveCall {
  TsCollectiveOp op;
  TsReduceOp reduce_op;
  TsDataType dtype;
  uint64_t count;
  uint32_t root;
  bool deterministic;
  std::vector<uint8_t*> send, recv;  // per rank
  Scheduler* sched;
  // Arrival state, reset by the last arriver (so graph replays can reuse it).
  std::mutex mu;
  std::vector<Task*> tasks;
  std::vector<uint32_t> order;  // ranks in arrival order
};

const char* dtype_name(TsDataType t) {
  switch (t) {
    case TS_DTYPE_F32: return "F32";
    case TS_DTYPE_F64: return "F64";
    case TS_DTYPE_I32: return "I32";
    case TS_DTYPE_I64: return "I64";
    case TS_DTYPE_F16: return "F16";
    case TS_DTYPE_BF16: return "BF16";
    case TS_DTYPE_I8: return "I8";
    case TS_DTYPE_U8: return "U8";
  }
  return "unknown";
}

template <class T>
inline T combine(TsReduceOp op, T a, T b) {
  switch (op) {
    case TS_REDUCE_SUM: return a + b;
    case TS_REDUCE_PROD: return a * b;
    case TS_REDUCE_MAX: return a > b ? a : b;
    case TS_REDUCE_MIN: return a < b ? a : b;
  }
  return a;
}

// out[i] = reduce over ranks of in[r][i] for i < n, in blocks.
// Deterministic: fixed pairwise tree ((r0 op r1) op (r2 op r3)) ...;
// otherwise in `order` (arrival order).
template <class T>
void reduce_block(TsReduceOp op, const std::vector<const T*>& in, const std::vector<uint32_t>& order,
                  bool deterministic, uint64_t n, std::vector<T>& tmp, T* out) {
  const size_t ranks = in.size();
  if (deterministic) {
    for (size_t r = 0; r < ranks; ++r) std::memcpy(&tmp[r * n], in[r], n * sizeof(T));
    for (size_t stride = 1; stride < ranks; stride *= 2)
      for (size_t r = 0; r + stride < ranks; r += 2 * stride) {
        T* a = &tmp[r * n];
        const T* b = &tmp[(r + stride) * n];
        for (uint64_t i = 0; i < n; ++i) a[i] = combine(op, a[i], b[i]);
      }
    std::memcpy(out, &tmp[0], n * sizeof(T));
  } else {
    std::memcpy(&tmp[0], in[order[0]], n * sizeof(T));
    for (size_t k = 1; k < ranks; ++k) {
      const T* b = in[order[k]];
      for (uint64_t i = 0; i < n; ++i) tmp[i] = combine(op, tmp[i], b[i]);
    }
    std::memcpy(out, &tmp[0], n * sizeof(T));
  }
}

template <class T>
void run_reduction(CollectiveCall& c, const std::vector<uint32_t>& order) {
  constexpr uint64_t kBlock = 4096;
  const size_t ranks = c.send.size();
  std::vector<T> tmp(ranks * kBlock);
  std::vector<T> result(kBlock);
  std::vector<const T*> in(ranks);
  // all_reduce: one segment written to every rank; reduce_scatter: segment r to rank r.
  const size_t segments = c.op == TS_COLLECTIVE_ALL_REDUCE ? 1 : ranks;
  for (size_t seg = 0; seg < segments; ++seg) {
    for (uint64_t off = 0; off < c.count; off += kBlock) {
      const uint64_t n = std::min(kBlock, c.count - off);
      for (size_t r = 0; r < ranks; ++r)
        in[r] = reinterpret_cast<const T*>(c.send[r]) + seg * c.count + off;
      reduce_block<T>(c.reduce_op, in, order, c.deterministic, n, tmp, result.data());
      if (c.op == TS_COLLECTIVE_ALL_REDUCE) {
        for (size_t r = 0; r < ranks; ++r)
          std::memcpy(reinterpret_cast<T*>(c.recv[r]) + off, result.data(), n * sizeof(T));
      } else {
        std::memcpy(reinterpret_cast<T*>(c.recv[seg]) + off, result.data(), n * sizeof(T));
      }
    }
  }
}

size_t dtype_size(TsDataType t) { return t == TS_DTYPE_F64 ? 8 : 4; }

void perform(CollectiveCall& c, const std::vector<uint32_t>& order) {
  const size_t ranks = c.send.size();
  const uint64_t bytes = c.count * dtype_size(c.dtype);
  switch (c.op) {
    case TS_COLLECTIVE_BROADCAST:
      for (size_t r = 0; r < ranks; ++r)
        if (c.recv[r] != c.send[c.root]) std::memmove(c.recv[r], c.send[c.root], bytes);
      return;
    case TS_COLLECTIVE_ALL_GATHER:
      for (size_t r = 0; r < ranks; ++r)
        for (size_t q = 0; q < ranks; ++q)
          if (c.recv[r] + q * bytes != c.send[q]) std::memmove(c.recv[r] + q * bytes, c.send[q], bytes);
      return;
    case TS_COLLECTIVE_ALL_REDUCE:
    case TS_COLLECTIVE_REDUCE_SCATTER:
      switch (c.dtype) {
        case TS_DTYPE_F32: return run_reduction<float>(c, order);
        case TS_DTYPE_F64: return run_reduction<double>(c, order);
        default: return run_reduction<int32_t>(c, order);
      }
  }
}

class CollectivePartOp final : public Op {
 public:
  CollectivePartOp(std::shared_ptr<CollectiveCall> c, uint32_t rank) : c_(std::move(c)), rank_(rank) {}
  bool manual_completion() const override { return true; }
  void run(Task& t, uint32_t, uint32_t, WorkerContext&) override {
    std::vector<Task*> tasks;
    std::vector<uint32_t> order;
    {
      std::lock_guard<std::mutex> lk(c_->mu);
      c_->tasks[rank_] = &t;
      c_->order.push_back(rank_);
      if (c_->order.size() < c_->tasks.size()) return;  // others will finish it
      tasks = c_->tasks;
      order.swap(c_->order);
    }
    perform(*c_, order);
    for (Task* rt : tasks) c_->sched->complete_manual(rt);
  }

 private:
  std::shared_ptr<CollectiveCall> c_;
  uint32_t rank_;
};

}  // namespace

TS_CPU_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || args->devices == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Communicator_Create: %s: pass at least one device",
                  args->devices == nullptr ? "devices is NULL" : "num_devices is 0");
  auto comm = std::make_unique<TsCommunicator>();
  comm->client = args->client;
  for (size_t i = 0; i < args->num_devices; ++i) {
    TsDevice* d = args->devices[i];
    if (!valid(d) || d->client != args->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Communicator_Create: devices[%zu] (%p) is not a device of this client",
                    i, static_cast<void*>(d));
    if (std::find(comm->devices.begin(), comm->devices.end(), d) != comm->devices.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Communicator_Create: devices[%zu] repeats device %u: each rank needs "
                    "a distinct device",
                    i, d->ordinal);
    comm->devices.push_back(d);
  }
  args->communicator = comm.release();
  return nullptr;
}

TS_CPU_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  // Queued parts own their CollectiveCall; nothing else to wait for.
  args->communicator->magic = kMagicDead;
  delete args->communicator;
  return nullptr;
}

TS_CPU_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  const char* E = "Communicator_Collective";
  TS_CPU_CHECK_HANDLE(args->communicator, E, "communicator");
  TsCommunicator* comm = args->communicator;
  const size_t ranks = comm->devices.size();
  if (args->send == nullptr || args->recv == nullptr || args->streams == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: %s: send, recv and streams must each point at %zu entries (one per "
                  "rank)",
                  E, ranks);
  if (static_cast<unsigned>(args->op) > TS_COLLECTIVE_REDUCE_SCATTER)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: op %d is not a TsCollectiveOp", E,
                  static_cast<int>(args->op));
  const bool reduces =
      args->op == TS_COLLECTIVE_ALL_REDUCE || args->op == TS_COLLECTIVE_REDUCE_SCATTER;
  if (reduces && static_cast<unsigned>(args->reduce_op) > TS_REDUCE_MIN)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: reduce_op %d is not a TsReduceOp", E,
                  static_cast<int>(args->reduce_op));
  if (args->dtype != TS_DTYPE_F32 && args->dtype != TS_DTYPE_F64 && args->dtype != TS_DTYPE_I32)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "cpu: %s: dtype %s is not supported by CPU collectives: use F32, F64 or I32",
                  E, dtype_name(args->dtype));
  if (args->count == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: count is 0", E);
  if (args->op == TS_COLLECTIVE_BROADCAST && args->root >= ranks)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: %s: root %u is not a rank: the communicator has %zu ranks", E,
                  args->root, ranks);
  const uint64_t esz = dtype_size(args->dtype);
  if (args->count > UINT64_MAX / esz / ranks)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: count %llu overflows", E,
                  static_cast<unsigned long long>(args->count));
  const uint64_t bytes = args->count * esz;
  uint64_t send_bytes = bytes, recv_bytes = bytes;
  if (args->op == TS_COLLECTIVE_ALL_GATHER) recv_bytes = bytes * ranks;
  if (args->op == TS_COLLECTIVE_REDUCE_SCATTER) send_bytes = bytes * ranks;

  auto call = std::make_shared<CollectiveCall>();
  call->op = args->op;
  call->reduce_op = args->reduce_op;
  call->dtype = args->dtype;
  call->count = args->count;
  call->root = args->root;
  call->deterministic = args->deterministic != 0;
  call->send.assign(ranks, nullptr);
  call->recv.assign(ranks, nullptr);
  call->tasks.assign(ranks, nullptr);
  call->order.reserve(ranks);
  call->sched = comm->client->scheduler.get();
  for (size_t r = 0; r < ranks; ++r) {
    TsStream* s = args->streams[r];
    if (!valid(s) || s->device != comm->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: %s: streams[%zu] must be a live stream of rank %zu's device %u", E, r,
                    r, comm->devices[r]->ordinal);
    const TsMemoryRef* refs[2] = {&args->send[r], &args->recv[r]};
    const uint64_t need[2] = {send_bytes, recv_bytes};
    const char* what[2] = {"send", "recv"};
    uint8_t** out[2] = {&call->send[r], &call->recv[r]};
    for (int k = 0; k < 2; ++k) {
      if (k == 0 && args->op == TS_COLLECTIVE_BROADCAST && r != args->root) continue;
      const std::string w = strprintf("%s[%zu]", what[k], r);
      if (TsError* e = resolve_ref(*refs[k], need[k], E, w.c_str(), out[k])) return e;
      if (refs[k]->buffer && refs[k]->buffer->device != comm->devices[r])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cpu: %s: %s is a buffer of device %u but rank %zu is device %u", E,
                      w.c_str(), refs[k]->buffer->device->ordinal, r, comm->devices[r]->ordinal);
    }
  }
  for (size_t r = 0; r < ranks; ++r)
    if (TsError* e = submit_op(args->streams[r], CollectivePartOp(call, static_cast<uint32_t>(r))))
      return e;
  return nullptr;
}

}  // namespace tessera::cpu
