// Helpers for the conformance kernels in the cpu plugin's "elf-native"
// format (tessera/cpu_kernel.h).  One call runs ONE tile group; the body
// loops over the group's lanes, and a group barrier is the boundary between
// two lane loops (PoCL's work-item loops).  Lane-private values that live
// across a barrier are kept in arrays indexed by lane.
//
// Until the IR issue generates these objects from Tile IR, the suite ships
// them as C++ sources; the Tile IR programs will replace them one for one.
#ifndef TESSERA_CONFORMANCE_KERNEL_UTIL_H_
#define TESSERA_CONFORMANCE_KERNEL_UTIL_H_

#include <stdint.h>

#include "tessera/cpu_kernel.h"

namespace cts_kernels {

template <typename T>
inline T Arg(const TsCpuLaunchContext* ctx, uint32_t i) {
  return *static_cast<const T*>(ctx->args[i]);
}
template <typename T>
inline T* Ptr(const TsCpuLaunchContext* ctx, uint32_t i) {
  return static_cast<T*>(ctx->args[i]);
}
inline uint64_t LinearGroup(const TsCpuLaunchContext* ctx) {
  return ctx->group_id[0] +
         static_cast<uint64_t>(ctx->grid[0]) *
             (ctx->group_id[1] +
              static_cast<uint64_t>(ctx->grid[1]) * ctx->group_id[2]);
}
inline uint32_t Lanes(const TsCpuLaunchContext* ctx) {
  return ctx->group_size[0] * ctx->group_size[1] * ctx->group_size[2];
}

}  // namespace cts_kernels

#endif  // TESSERA_CONFORMANCE_KERNEL_UTIL_H_
