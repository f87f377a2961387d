// Checks the core makes before any memory operation reaches a plugin: live
// handles, non-zero sizes, ranges inside their buffers, and the memory
// model's rule that asynchronous copies touch only page-locked host memory.
#ifndef TESSERA_CORE_MEMORY_CHECKS_HPP_
#define TESSERA_CORE_MEMORY_CHECKS_HPP_

#include "log.hpp"
#include "runtime_impl.hpp"

namespace tessera::detail {

// `what`: the operation, for the message ("copy destination", "memset").
Status CheckRange(const char* what, const Buffer& buffer, uint64_t offset,
                  uint64_t size);

// Converts a MemoryRef to the ABI's form after checking it.
StatusOr<TsMemoryRef> CheckRef(const char* what, const MemoryRef& ref,
                               uint64_t size);

// The runtime behind the buffers of a copy (nullptr for host-only copies).
RuntimeImpl* RuntimeOf(const MemoryRef& dst, const MemoryRef& src);

// "host to device", "device to host", "device to device", "peer" or "host
// to host" (pinned host buffers count as host memory).
const char* CopyDirection(const MemoryRef& dst, const MemoryRef& src);

}  // namespace tessera::detail

#endif  // TESSERA_CORE_MEMORY_CHECKS_HPP_
