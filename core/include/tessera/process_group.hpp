// Collectives whose ranks span processes (docs/spmd.md, "Across processes").
//
// The core and programs see only these interfaces; libtessera_mpi.so
// (Tessera::mpi, tessera/mpi.hpp) implements them over MPI.  A build
// without MPI has the interfaces and no implementation: single-process
// SPMD is unaffected.
//
// Thread-safety: an implementation serializes its calls (MPI is used from
// one thread at a time).
#ifndef TESSERA_PROCESS_GROUP_HPP_
#define TESSERA_PROCESS_GROUP_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera {

// One collective call as a provider sees it: the buffers and streams of
// this process's ranks only (Communicator::devices() order), checked by the
// core (devices, sizes) before the provider runs.
struct CollectiveRequest {
  TsCollectiveOp op = TS_COLLECTIVE_ALL_REDUCE;
  TsReduceOp reduce = TS_REDUCE_SUM;
  TsDataType dtype = TS_DTYPE_F32;
  uint64_t count = 0;     // as TsCommunicator_Collective_Args::count
  uint32_t root = 0;      // broadcast: a rank of the whole communicator
  bool deterministic = false;
  // Device buffers (never host pointers), each from its offset.
  const MemoryRefs* send = nullptr;
  const MemoryRefs* recv = nullptr;
  const std::vector<Stream>* streams = nullptr;
};

// The other processes' side of a Communicator made by
// Communicator::FromProvider.  Run returns when this process's ranks hold
// their results (it waits for their streams first).
class CollectiveProvider {
 public:
  virtual ~CollectiveProvider() = default;
  virtual std::string name() const = 0;  // "mpi"
  virtual size_t size() const = 0;       // ranks of every process
  virtual Status Run(const CollectiveRequest& request) = 0;
};

// A set of processes (an MPI communicator): what an SPMD program spans when
// one process holds only some of the mesh's devices.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;  // this process, 0..size()-1
  virtual int size() const = 0;
  // The provider and its library, e.g. "mpi (Open MPI v4.1.4)".
  virtual std::string provider() const = 0;
  // A communicator of rank_process.size() ranks; rank r lives on process
  // rank_process[r].  `local_devices` are this process's ranks in rank
  // order.  Called by every process that rank_process names, with the same
  // rank_process, in the same order as their other CreateCommunicator calls.
  virtual StatusOr<Communicator> CreateCommunicator(const std::vector<uint32_t>& rank_process,
                                                    const std::vector<Device>& local_devices) = 0;
  // Every process's `bytes`, in process order (collective over the group).
  virtual StatusOr<std::vector<std::string>> AllGather(const std::string& bytes) = 0;
  // Ends every process of the group with `code` (a process that fails while
  // the others may be waiting in a collective).
  [[noreturn]] virtual void Abort(int code) = 0;
};

// Which provider moves a plugin's buffers between processes, and how (what
// tessera-info reports): MPI for every plugin today, on host memory: in
// place where the host addresses the plugin's buffers (cpu), staged through
// host copies otherwise (vulkan, cuda, hip: their plugins use NCCL and RCCL
// among one process's devices only).
struct ProcessCollectives {
  std::string provider;   // "mpi"
  std::string data_path;  // "host memory in place" / "staged through host memory"
};
inline ProcessCollectives ProcessCollectivesFor(const std::string& plugin) {
  return {"mpi", plugin == "cpu" ? "host memory in place" : "staged through host memory"};
}

// Whether `runtime`'s plugin makes communicators across processes itself
// (ABI 1.4: the Communicator_CreateUniqueId entry, and every device reports
// TS_COLLECTIVE_CAP_MULTI_PROCESS): Runtime::create_collective_id and the
// create_communicator that takes it.
bool PluginSpansProcesses(const Runtime& runtime);

// Whether a ProcessGroup's communicator over `local_devices` is the
// plugin's own across processes (true) or moved by the group's provider
// (false), as TESSERA_PROCESS_COLLECTIVES says: "auto" or unset (the
// plugin's own where it has them and the provider would stage the data
// through host memory: NCCL on cuda, RCCL on hip; the provider on cpu,
// whose buffers MPI uses in place), "plugin" (the plugin's own; an error
// naming the plugin where it has none) or "provider".  Every process of a
// communicator must come to the same answer; ProcessGroup implementations
// check that they do.
StatusOr<bool> UsePluginCollectives(const std::vector<Device>& local_devices);

// ---- for implementations of ProcessGroup and CollectiveProvider

// The processes a communicator of `rank_process` spans, ascending, after
// the checks every ProcessGroup::CreateCommunicator makes: each process is
// in a group of `group_size`, and process `me` holds as many ranks as it
// passes devices (`local_devices`).
StatusOr<std::vector<int>> CommunicatorProcesses(const std::vector<uint32_t>& rank_process, int group_size,
                                                 int me, size_t local_devices);

// Host memory for a collective's buffers on this process: each buffer in
// place where the host addresses it (the cpu plugin's), else a staged copy
// (read from the device for a send; written back by WriteBack for a recv).
// send[i] is null where needs_send(i) is false (a broadcast's non-roots).
class HostViews {
 public:
  static StatusOr<HostViews> Take(const CollectiveRequest& q, uint64_t send_bytes, uint64_t recv_bytes,
                                  const std::function<bool(size_t)>& needs_send);
  // Copies the staged results into their buffers (in place ones need
  // nothing).
  Status WriteBack(const CollectiveRequest& q, uint64_t recv_bytes) const;
  std::vector<const uint8_t*> send;
  std::vector<uint8_t*> recv;

 private:
  std::vector<std::vector<uint8_t>> staged_send_, staged_recv_;
};

}  // namespace tessera

#endif  // TESSERA_PROCESS_GROUP_HPP_
