// Collectives across the devices of one client.  Each rank's part is a
// manual task on its own stream: when it runs it only records its arrival
// (the worker moves on; no thread blocks waiting for peers).  The last rank
// to arrive performs the whole collective and completes every rank's task.
//
// Across processes (ABI 1.4, a unique_id at Communicator_Create): the ranks
// meet in shared memory (shm_group.hpp).  Such a call waits for its ranks'
// streams, then runs in the caller's thread and returns when this
// process's results are written (it blocks, as the host-staged plugins'
// calls do), so that a peer's failure comes back as its error.
#include <algorithm>
#include <cstring>

#include "host_reduce.hpp"
#include "internal.hpp"
#include "shm_group.hpp"

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;
  // Across processes: the shared-memory group (its ranks are devices'
  // ranks, in order); null for one process.
  std::unique_ptr<tessera::cpu::ShmGroup> group;
};

namespace tessera::cpu {
namespace {

using plugin_support::dtype_size;
using plugin_support::host_reduce;

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

// Reduces rank by rank in blocks (host_reduce: every TsDataType; integers
// wrap, F16/BF16 accumulate in float).  all_reduce: one segment written to
// every rank; reduce_scatter: segment r to rank r.
void run_reduction(CollectiveCall& c, const std::vector<uint32_t>& order) {
  const size_t ranks = c.send.size();
  const size_t esz = dtype_size(c.dtype);
  const size_t segments = c.op == TS_COLLECTIVE_ALL_REDUCE ? 1 : ranks;
  std::vector<const void*> in(ranks);
  for (size_t seg = 0; seg < segments; ++seg) {
    for (size_t r = 0; r < ranks; ++r) in[r] = c.send[r] + seg * c.count * esz;
    // host_reduce reads every rank's block before writing it, so a
    // destination that aliases its own rank's send buffer is safe; the other
    // ranks' copies are made once every send buffer has been read.
    uint8_t* dst = c.op == TS_COLLECTIVE_ALL_REDUCE ? c.recv[0] : c.recv[seg];
    host_reduce(c.dtype, c.reduce_op, in, order, c.deterministic, c.count, dst);
    if (c.op == TS_COLLECTIVE_ALL_REDUCE)
      for (size_t r = 1; r < ranks; ++r)
        if (c.recv[r] != dst) std::memmove(c.recv[r], dst, c.count * esz);
  }
}

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
      return run_reduction(c, order);
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

TS_CPU_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || args->devices == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Communicator_Create: %s: pass at least one device",
                  args->devices == nullptr ? "devices is NULL" : "num_devices is 0");
  bool across_processes = false;
  if (TsError* e = plugin_support::check_process_spanning_create("cpu", args, true, &across_processes))
    return e;
  auto comm = std::make_unique<TsCommunicator>();
  comm->client = args->client;
  for (size_t i = 0; i < args->num_devices; ++i) {
    TsDevice* d = args->devices[i];
    if (d != nullptr && !valid(d))
      return errorf(TS_ERROR_INVALID_HANDLE,
                    "cpu: Communicator_Create: devices[%zu] (%p) is not a live CPU-plugin device",
                    i, static_cast<void*>(d));
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
  if (across_processes)
    if (TsError* e = ShmGroup::Join(args->unique_id, args->num_ranks,
                                    std::vector<uint32_t>(args->ranks, args->ranks + args->num_devices),
                                    args->client->process_timeout_s, &comm->group))
      return e;
  {
    std::lock_guard<std::mutex> lk(comm->client->scheduler->mutex());
    comm->client->communicators.insert(comm.get());
  }
  args->communicator = comm.release();
  return nullptr;
}

void destroy_communicator(TsCommunicator* c) {
  {
    std::lock_guard<std::mutex> lk(c->client->scheduler->mutex());
    c->client->communicators.erase(c);
  }
  // Queued parts own their CollectiveCall; nothing else to wait for.
  c->magic = kMagicDead;
  delete c;
}

TS_CPU_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  destroy_communicator(args->communicator);
  return nullptr;
}

TS_CPU_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  const char* E = "Communicator_Collective";
  TS_CPU_CHECK_HANDLE(args->communicator, E, "communicator");
  TsCommunicator* comm = args->communicator;
  const size_t ranks = comm->devices.size();
  // Every process's ranks (counts and the root are over all of them), and
  // the rank of local index r.
  const size_t total = comm->group ? comm->group->num_ranks() : ranks;
  auto rank_of = [&](size_t r) -> uint32_t {
    return comm->group ? comm->group->my_ranks()[r] : static_cast<uint32_t>(r);
  };
  if (args->send == nullptr || args->recv == nullptr || args->streams == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: %s: send, recv and streams must each point at %zu entries (one per "
                  "rank)",
                  E, ranks);
  // The enum fields are checked as integers first (plugin_support::raw_enum).
  const int64_t op = plugin_support::raw_enum(args->op);
  if (op < 0 || op > TS_COLLECTIVE_REDUCE_SCATTER)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: op %lld is not a TsCollectiveOp", E,
                  static_cast<long long>(op));
  const bool reduces =
      args->op == TS_COLLECTIVE_ALL_REDUCE || args->op == TS_COLLECTIVE_REDUCE_SCATTER;
  const int64_t reduce_op = plugin_support::raw_enum(args->reduce_op);
  if (reduces && (reduce_op < 0 || reduce_op > TS_REDUCE_MIN))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: reduce_op %lld is not a TsReduceOp", E,
                  static_cast<long long>(reduce_op));
  const int64_t dtype = plugin_support::raw_enum(args->dtype);
  if (dtype < TS_DTYPE_F32 || dtype > TS_DTYPE_U8)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: dtype %lld is not a TsDataType", E,
                  static_cast<long long>(dtype));
  if (args->count == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: count is 0", E);
  if (args->op == TS_COLLECTIVE_BROADCAST && args->root >= total)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: %s: root %u is not a rank: the communicator has %zu ranks", E,
                  args->root, total);
  const uint64_t esz = dtype_size(args->dtype);
  if (args->count > UINT64_MAX / esz / total)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: %s: count %llu overflows", E,
                  static_cast<unsigned long long>(args->count));
  const uint64_t bytes = args->count * esz;
  uint64_t send_bytes = bytes, recv_bytes = bytes;
  if (args->op == TS_COLLECTIVE_ALL_GATHER) recv_bytes = bytes * total;
  if (args->op == TS_COLLECTIVE_REDUCE_SCATTER) send_bytes = bytes * total;

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
    if (s != nullptr && !valid(s))
      return errorf(TS_ERROR_INVALID_HANDLE,
                    "cpu: %s: streams[%zu] (%p) is not a live CPU-plugin stream", E, r,
                    static_cast<void*>(s));
    if (!valid(s) || s->device != comm->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: %s: streams[%zu] must be a live stream of rank %zu's device %u", E, r,
                    r, comm->devices[r]->ordinal);
    const TsMemoryRef* refs[2] = {&args->send[r], &args->recv[r]};
    const uint64_t need[2] = {send_bytes, recv_bytes};
    const char* what[2] = {"send", "recv"};
    uint8_t** out[2] = {&call->send[r], &call->recv[r]};
    for (int k = 0; k < 2; ++k) {
      if (k == 0 && args->op == TS_COLLECTIVE_BROADCAST && rank_of(r) != args->root) continue;
      const std::string w = strprintf("%s[%zu]", what[k], r);
      if (TsError* e = resolve_ref(*refs[k], need[k], E, w.c_str(), out[k])) return e;
      if (refs[k]->buffer && refs[k]->buffer->device != comm->devices[r])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cpu: %s: %s is a buffer of device %u but rank %zu is device %u", E,
                      w.c_str(), refs[k]->buffer->device->ordinal, r, comm->devices[r]->ordinal);
    }
  }
  if (comm->group) {
    for (size_t r = 0; r < ranks; ++r)
      if (TsError* e = synchronize_stream(args->streams[r], E)) return e;
    ShmCall shm;
    shm.op = call->op;
    shm.reduce_op = call->reduce_op;
    shm.dtype = call->dtype;
    shm.count = call->count;
    shm.root = call->root;
    shm.send.assign(call->send.begin(), call->send.end());
    shm.recv = call->recv;
    return comm->group->Run(shm);
  }
  for (size_t r = 0; r < ranks; ++r)
    if (TsError* e = submit_op(args->streams[r], CollectivePartOp(call, static_cast<uint32_t>(r))))
      return e;
  return nullptr;
}

TS_CPU_ENTRY(Communicator_CreateUniqueId, TS_COMMUNICATOR_CREATEUNIQUEID_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Communicator_CreateUniqueId", "client");
  return MakeShmUniqueId(args->unique_id);
}

}  // namespace tessera::cpu
