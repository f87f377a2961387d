// tessera-bench's Vulkan benchmarks: Tessera on the Vulkan plugin
// (`<metric>/tessera_vulkan[/size]`) against raw Vulkan code doing the same
// thing in the same binary (`<metric>/raw_vulkan[/size]`).  See README.md.
#ifndef TESSERA_BENCH_VULKAN_BENCH_HPP_
#define TESSERA_BENCH_VULKAN_BENCH_HPP_

#include "bench_env.hpp"

namespace tessera_bench {

// Registers dispatch_small, submit_wait, copy/.../64MiB and saxpy/.../16M for
// both implementations.  Without Vulkan (no driver, no loader, or built
// without the headers) they are still registered and skip with
// "not available: <reason>".
void RegisterVulkanBenchmarks(const RegisterOptions& options);

}  // namespace tessera_bench

#endif  // TESSERA_BENCH_VULKAN_BENCH_HPP_
