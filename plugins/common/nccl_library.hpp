// NCCL (libnccl.so.2, for the cuda plugin) and RCCL (librccl.so.1, for the
// hip plugin): one C API, opened with dlopen and resolved through a symbol
// table like the drivers, never linked, so a plugin loads on machines
// without either and stages its collectives through the host instead
// (staged_collective.hpp).
//
// What the plugins use it for: a communicator over the devices of one
// client (ncclCommInitAll), and each collective call as one NCCL group over
// its ranks, queued on the ranks' streams (asynchronous: the data stays on
// the devices and the host does not wait).  The plugin checks the call
// first (CheckCollective) and gives the device address and the stream of
// every rank.
//
// The parts of nccl.h used are declared here (their layout and values are
// stable since NCCL 2.0 and the same in RCCL), so the plugins build with no
// NCCL or RCCL header.
//
// Thread-safety: an NcclLibrary is immutable after Open (any thread may call
// it).  One communicator's calls must not overlap: NCCL requires the ranks'
// operations to be issued in the same order on every rank, so the plugin
// serializes each communicator's calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "staged_collective.hpp"
#include "tessera/plugin.h"

namespace tessera::plugin_support {

// nccl.h's ncclUniqueId, ncclComm_t and ncclResult_t (ncclSuccess = 0).
struct NcclUniqueId {
  char internal[128];
};
struct NcclCommRecord;
using NcclComm = NcclCommRecord*;
using NcclResult = int;

// The entry points, by their nccl.h names.  Enums are passed as int (their
// C ABI); streams as the vendor's stream handle (cudaStream_t / hipStream_t,
// which CUstream / the hip plugin's stream are).
struct NcclFns {
  NcclResult (*ncclGetVersion)(int* version) = nullptr;
  NcclResult (*ncclCommInitAll)(NcclComm* comms, int ndev, const int* devlist) = nullptr;
  NcclResult (*ncclGetUniqueId)(NcclUniqueId* id) = nullptr;
  NcclResult (*ncclCommInitRank)(NcclComm* comm, int nranks, NcclUniqueId id, int rank) = nullptr;
  NcclResult (*ncclCommDestroy)(NcclComm comm) = nullptr;
  NcclResult (*ncclCommGetAsyncError)(NcclComm comm, NcclResult* async_error) = nullptr;
  const char* (*ncclGetErrorString)(NcclResult result) = nullptr;
  const char* (*ncclGetLastError)(NcclComm comm) = nullptr;  // 2.13 and later; may be null
  NcclResult (*ncclAllReduce)(const void* send, void* recv, size_t count, int dtype, int op,
                              NcclComm comm, void* stream) = nullptr;
  NcclResult (*ncclBroadcast)(const void* send, void* recv, size_t count, int dtype, int root,
                              NcclComm comm, void* stream) = nullptr;
  NcclResult (*ncclAllGather)(const void* send, void* recv, size_t send_count, int dtype,
                              NcclComm comm, void* stream) = nullptr;
  NcclResult (*ncclReduceScatter)(const void* send, void* recv, size_t recv_count, int dtype,
                                  int op, NcclComm comm, void* stream) = nullptr;
  NcclResult (*ncclGroupStart)() = nullptr;
  NcclResult (*ncclGroupEnd)() = nullptr;
};

// "2.28.9" from ncclGetVersion's code (X*10000 + Y*100 + Z from 2.9 on,
// X*1000 + Y*100 + Z before).
std::string NcclVersionText(int code);
// nccl.h's ncclDataType_t for `dtype` in a library of version `code`; false
// where it has none (bf16 before NCCL 2.10).
bool NcclDataType(TsDataType dtype, int code, int* out);
// nccl.h's ncclRedOp_t (ncclSum, ncclProd, ncclMax, ncclMin).
int NcclReduceOp(TsReduceOp op);
// The TsErrorCode for an ncclResult_t.
TsErrorCode NcclErrorCode(NcclResult result);

class NcclLibrary {
 public:
  // dlopen of `path` and every entry point.  `vendor` names the library in
  // messages ("NCCL", "RCCL").  On failure: null, and *reason says why (the
  // dlerror text, or the entry point the library lacks).
  static std::unique_ptr<NcclLibrary> Open(const std::string& path, const char* vendor,
                                           std::string* reason);
  ~NcclLibrary();
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  int version() const { return version_; }
  // "NCCL 2.28.9 (libnccl.so.2)".
  std::string description() const;
  // Whether Run can move `dtype` (else the plugin stages the call).
  bool Supports(TsDataType dtype) const;

  // One communicator per device of this process, rank i on ordinals[i] (the
  // vendor runtime's device numbers).  On error *comms is empty.
  TsError* InitAll(const char* plugin, const std::vector<int>& ordinals,
                   std::vector<NcclComm>* comms) const noexcept;
  // Communicator_CreateUniqueId: ncclGetUniqueId (128 bytes, as
  // TS_UNIQUE_ID_BYTES).
  TsError* UniqueId(const char* plugin, uint8_t out[128]) const noexcept;
  // One communicator per device of this process in a communicator of
  // `num_ranks` ranks over several processes (ncclCommInitRank in one
  // group), device i being rank ranks[i].  `bind(i)` makes device i the
  // calling thread's current device (NCCL creates on the current one).
  // Blocks until every rank joined (NCCL's own bootstrap; see docs/cuda.md).
  TsError* InitRanks(const char* plugin, const uint8_t* id, uint32_t num_ranks,
                     const std::vector<uint32_t>& ranks, const std::function<TsError*(size_t)>& bind,
                     std::vector<NcclComm>* comms) const noexcept;
  // Destroys every communicator of *comms (after their queued work); clears it.
  void DestroyAll(std::vector<NcclComm>* comms) const noexcept;

  // Rank r's part of one call: device addresses past the refs' offsets
  // (send is unused, may be null, on a broadcast's other ranks) and its
  // stream.
  struct RankPart {
    const void* send = nullptr;
    void* recv = nullptr;
    void* stream = nullptr;
  };
  // The call `args` (checked by CheckCollective, which gave `shape`) as one
  // group over comms[r] with parts[r]; returns once it is queued.  A
  // communicator that failed earlier (ncclCommGetAsyncError) refuses every
  // later call, naming the rank and NCCL's reason.
  TsError* Run(const char* plugin, const TsCommunicator_Collective_Args* args,
               const CollectiveShape& shape, const std::vector<NcclComm>& comms,
               const std::vector<RankPart>& parts) const noexcept;

  // What RunDeterministic needs of the plugin, per local rank r: device
  // scratch memory, and blocking copies ordered after r's stream.
  struct DeviceIo {
    std::function<TsError*(size_t r, uint64_t bytes, void** out)> alloc;
    std::function<void(size_t r, void* device)> free;
    std::function<TsError*(size_t r, const void* device, void* host, uint64_t bytes)> read;
    std::function<TsError*(size_t r, void* device, const void* host, uint64_t bytes)> write;
  };
  // A deterministic all_reduce or reduce_scatter on a communicator across
  // processes (the host-staged path sees one process only): every rank's
  // send is gathered to every rank (ncclAllGather into scratch memory),
  // read back, combined on the host in the fixed tree of
  // plugins/common/host_reduce (the bits of every other plugin, and of one
  // process with all the ranks) and written to the recv buffers.  Blocks
  // until done.  rank_of[r]: the rank of local r; `total`: all ranks.
  TsError* RunDeterministic(const char* plugin, const TsCommunicator_Collective_Args* args,
                            const CollectiveShape& shape, const std::vector<NcclComm>& comms,
                            const std::vector<RankPart>& parts, size_t total, const uint32_t* rank_of,
                            const DeviceIo& io) const noexcept;

 private:
  NcclLibrary() = default;
  // "<plugin>: <call>: <NCCL's text> (<its last error>)".
  TsError* Error(const char* plugin, const std::string& call, NcclResult result,
                 NcclComm comm) const;

  void* handle_ = nullptr;
  NcclFns fn_;
  std::string vendor_, path_;
  int version_ = 0;
};

// A plugin communicator's NCCL or RCCL side (the cuda and hip plugins'
// TsCommunicator holds one).
struct NcclCommunicator {
  // One per local rank, or none: every call is then staged through the
  // host (one process only).
  std::vector<NcclComm> comms;
  // Across processes (ABI 1.4): every process's ranks, and local rank r's
  // rank; 0 and empty for one process.
  uint32_t num_ranks = 0;
  std::vector<uint32_t> ranks;
  // Serializes the communicator's calls (NCCL needs every rank's calls in
  // one order).
  std::mutex mu;
};

// Communicator_Collective of the cuda and hip plugins, after the plugin's
// own handle check.  One process: staged through the host (`hooks`) where
// there are no NCCL communicators, the library has no such type, or the
// call is deterministic; else one NCCL group (Run).  Across processes:
// RunDeterministic for deterministic reductions, Run for the rest.
// `address(ref)`: the device address of a buffer ref (null ref: null);
// `stream(r)`: local rank r's vendor stream; `device_io()`: what
// RunDeterministic needs, made only when it runs.
TsError* RunNcclCollective(const char* plugin, const NcclLibrary* lib, NcclCommunicator& comm,
                           const TsCommunicator_Collective_Args* args, size_t ranks,
                           const StagedCollectiveHooks& hooks,
                           const std::function<void*(const TsMemoryRef&)>& address,
                           const std::function<void*(size_t)>& stream,
                           const std::function<NcclLibrary::DeviceIo()>& device_io) noexcept;

// A client's NCCL or RCCL, opened once (the cuda and hip plugins open it in
// Client_Create: whether it loads decides whether their communicators can
// span processes).  Thread-safe.
class NcclLoader {
 public:
  // Before the first For: the library to open ("" never opens one: every
  // collective is staged) and its name in messages.
  void Configure(std::string path, const char* vendor) {
    path_ = std::move(path);
    vendor_ = vendor;
  }
  // The opened library (the first call opens it), or null with *why_not.
  const NcclLibrary* Get(std::string* why_not);
  // Communicators over `ordinals` (rank i on ordinals[i]), or none, in
  // which case the communicator's calls are staged through the host and a
  // message says why: at TESSERA_LOG=debug when there is no library, as a
  // warning (once per client) when the library is there but fails.
  std::vector<NcclComm> CommsFor(const char* plugin, const std::vector<int>& ordinals);
  // The library the communicators of For came from (null before a success).
  const NcclLibrary* library() const { return lib_.get(); }

 private:
  std::string path_;
  const char* vendor_ = "NCCL";
  std::once_flag once_;
  std::unique_ptr<NcclLibrary> lib_;
  std::string why_not_;
  std::atomic<bool> warned_{false};
};

}  // namespace tessera::plugin_support
