// Communicators whose ranks span processes of one host (ABI 1.4,
// TS_COLLECTIVE_CAP_MULTI_PROCESS): the ranks meet in a POSIX shared-memory
// segment named by the communicator's unique id, as NCCL's ranks meet
// through their bootstrap id.
//
// Segment: a header (the communicator's size, who joined, a failure flag
// and its reason, a barrier counter), per rank its process id and the
// description of its current call, then one slot of `slot_bytes` per rank
// and one for a result.  A call moves its data in slot-sized chunks: every
// rank copies its chunk into its slot and all meet at a barrier; then an
// all_reduce has each rank reduce its 1/N share of the chunk over the
// slots into the result slot and, after a second barrier, every process
// copies the result to its ranks; reduce_scatter has every rank put a
// piece of each segment in its slot and each rank reduce its own segment's
// pieces; all_gather and broadcast copy slots out.  Reductions combine the
// ranks in plugins/common/host_reduce's fixed tree, so the bits equal
// those of one process with every rank.  Each process takes part with all
// of its ranks at once (the caller's thread; the call blocks).
//
// Failures are errors, never hangs: every wait is bounded (`timeout_s`), a
// process that exits is noticed by its process id, and a process that
// fails marks the segment so that the others fail at once with its reason.
// After a failure in the middle of a call the communicator is broken (the
// ranks are out of step): every later call says so.  A call the ranks
// disagree on (operation, type, count, root) fails on every rank, naming
// what each rank passed, and leaves the communicator usable.
//
// The segment's name is removed once every rank has joined (or the join
// failed), so nothing outlives the processes.
//
// Thread-safety: a group serializes its calls.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::cpu {

// Removes the segments of joins that never finished (/dev/shm/tessera-cpu-*
// of this user, at least 30 s old, whose registered processes are all
// gone): a process killed or interrupted while it waited left its segment
// for good.  Every join calls it first.
void RemoveStaleSegments();

// Communicator_CreateUniqueId: "tessera-cpu-shm/1 <host name> <32 hex digits>".
TsError* MakeShmUniqueId(uint8_t out[TS_UNIQUE_ID_BYTES]) noexcept;

// One collective call with this process's ranks (in the group's my_ranks
// order): their send and recv addresses (a broadcast's non-roots' send may
// be null), counts as TsCommunicator_Collective_Args.
struct ShmCall {
  TsCollectiveOp op = TS_COLLECTIVE_ALL_REDUCE;
  TsReduceOp reduce_op = TS_REDUCE_SUM;
  TsDataType dtype = TS_DTYPE_F32;
  uint64_t count = 0;
  uint32_t root = 0;
  std::vector<const uint8_t*> send;
  std::vector<uint8_t*> recv;
};

class ShmGroup {
 public:
  // Joins the communicator of `id` with this process's ranks `my_ranks`
  // (of `num_ranks`); returns once all ranks have joined.
  static TsError* Join(const uint8_t* id, uint32_t num_ranks, std::vector<uint32_t> my_ranks,
                       double timeout_s, std::unique_ptr<ShmGroup>* out) noexcept;
  ~ShmGroup();
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  uint32_t num_ranks() const { return num_ranks_; }
  const std::vector<uint32_t>& my_ranks() const { return my_ranks_; }
  // Runs `call` with every other process; returns when this process's
  // results are written.
  TsError* Run(const ShmCall& call) noexcept;

  // The segment's layout (shm_group.cpp).
  struct Header;
  struct RankRecord;

 private:
  ShmGroup() = default;
  Header* header() const;
  RankRecord* rank_record(uint32_t r) const;
  uint8_t* slot(uint32_t r) const;
  // Meets every rank (this process arrives with all of its ranks).  Fails
  // when a process gave up, exited, or the bound passed.
  TsError* Barrier(const char* where);
  // Marks the segment failed with `why` (the first reason wins) and this
  // group broken; returns an error with the reason.
  TsError* Fail(TsErrorCode code, const std::string& why);
  TsError* Exchange(const ShmCall& call);

  void* base_ = nullptr;
  size_t bytes_ = 0;
  uint64_t slot_bytes_ = 0;
  uint32_t num_ranks_ = 0;
  std::vector<uint32_t> my_ranks_;
  uint64_t barriers_ = 0;  // barriers passed (all processes pass the same ones)
  uint64_t calls_ = 0;
  double timeout_s_ = 600;
  std::string broken_;
  std::mutex mu_;
};

}  // namespace tessera::cpu
