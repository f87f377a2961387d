// Communicator_Collective for plugins whose collectives are staged through
// the host (vulkan and level_zero; cuda and hip where NCCL or RCCL cannot be
// loaded, and for deterministic calls): what every one of them checks and
// does, with the plugin's own parts as callbacks.  CheckCollective is the
// checking half alone, for plugins that hand the call to a vendor library
// (plugins/common/nccl_library.hpp).
//
//  - the arguments: dtype, op, count (bounded), root, the arrays present;
//  - per rank: the plugin checks the buffer handle and its device
//    (`buffer` returns the buffer's size in bytes) and the stream
//    (`stream`); then each buffer must hold the bytes the op moves past its
//    offset;
//  - each rank's send part is copied to the host, ordered on its stream
//    (`host_io`, blocking: it returns when the bytes are there);
//  - host_collective combines them (fixed tree: deterministic whatever the
//    caller asked) and `host_io` copies each rank's result back.
//
// Messages start with "<plugin>: collective: ...".
// Thread-safety: as the plugin's callbacks; the driver keeps no state.
#pragma once

#include <cstdint>
#include <functional>

#include "tessera/plugin.h"

namespace tessera::plugin_support {

struct StagedCollectiveHooks {
  const char* plugin = "";
  // Checks rank r's buffer (handle, device; `recv`: which of the two) and
  // sets *bytes to its size.
  std::function<TsError*(size_t rank, const TsMemoryRef& ref, bool recv, uint64_t* bytes)> buffer;
  // Checks rank r's stream (handle, device, whether it may take part now).
  std::function<TsError*(size_t rank)> stream;
  // Copies `bytes` between rank r's buffer at `ref` and `host`, after what
  // rank r's stream already holds; returns when the copy is complete.
  std::function<TsError*(size_t rank, const TsMemoryRef& ref, void* host, uint64_t bytes,
                         bool to_device)>
      host_io;
};

// What a checked call moves: elements of `elem_size` bytes, per rank.
struct CollectiveShape {
  size_t elem_size = 0;
  uint64_t send_elems = 0, recv_elems = 0;
};

// Every check above (`host_io` is not used); fills *shape.  For a
// communicator across processes (ABI 1.4) `total` is every process's ranks
// and `rank_of[r]` the rank of this process's r-th (counts and the root are
// over all of them); 0 and null for one process.
TsError* CheckCollective(const TsCommunicator_Collective_Args* args, size_t ranks,
                         const StagedCollectiveHooks& hooks, CollectiveShape* shape, size_t total = 0,
                         const uint32_t* rank_of = nullptr) noexcept;

TsError* RunStagedCollective(const TsCommunicator_Collective_Args* args, size_t ranks,
                             const StagedCollectiveHooks& hooks) noexcept;

}  // namespace tessera::plugin_support
