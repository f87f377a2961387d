/*
 * Vendor extensions of the Vulkan plugin (plugin.h: extension chains, vendor
 * ids from 0x10000).  C99.
 *
 * TsVulkanDeviceStats: what the plugin did on one device, for tests,
 * benchmarks and tools that want to see it (how many submits a batch of
 * launches took, whether pinned host memory was imported or staged, whether
 * the pipeline cache file was loaded).  Chain it on
 * TsDevice_GetProperties_Args.extension_start and call the plugin's
 * Device_GetProperties (Runtime::plugin_api(), Device::raw()); the plugin
 * fills, in every TsVulkanDeviceStats of the chain, the fields its
 * header.struct_size covers (TS_FIELD_PRESENT: the struct is append-only,
 * like the ABI's), and leaves other extensions alone.  Counters only grow;
 * compare two readings.  Other plugins ignore the extension.
 */
#ifndef TESSERA_PLUGINS_VULKAN_VULKAN_EXT_H_
#define TESSERA_PLUGINS_VULKAN_VULKAN_EXT_H_

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TS_EXTENSION_VULKAN_DEVICE_STATS 0x10100u

typedef struct TsVulkanDeviceStats {
  TsExtension header; /* header.type = TS_EXTENSION_VULKAN_DEVICE_STATS,
                         header.struct_size = TS_VULKAN_DEVICE_STATS_STRUCT_SIZE */
  uint64_t queue_submits;      /* out: vkQueueSubmit calls on the device's queue */
  uint64_t submitted_commands; /* out: operations (launches, copies, ...) in them */
  uint64_t staged_copies;      /* out: host<->device copies through a staging buffer */
  uint64_t host_imports;       /* out: host ranges imported with
                                  VK_EXT_external_memory_host (Host_Allocate,
                                  Host_Register) since the device was created */
  uint64_t pipeline_cache_loaded_bytes; /* out: bytes of the cache file accepted
                                           when the device was created; 0: none */
  const char* pipeline_cache_path; /* out: the cache file ("" without a cache
                                      directory); valid while the device lives */
  uint64_t timeline_semaphores; /* out: timeline semaphores created (streams
                                   reuse those of dead streams) */
  uint32_t validation_layer;  /* out: 1 when VK_LAYER_KHRONOS_validation was
                                 enabled by name (TESSERA_VALIDATE=1) and the
                                 instance was created with it */
  uint32_t debug_messenger;   /* out: 1 when a VK_EXT_debug_utils messenger
                                 routes validation messages to stderr */
  uint32_t calibrated_timestamps; /* out: 1 when completion times are calibrated
                                     with VK_EXT_calibrated_timestamps (no
                                     queue work); 0: through the queue */
  uint64_t queue_calibrations;    /* out: calibrations of the completion-time
                                     clock that ran a batch on the queue */
} TsVulkanDeviceStats;
#define TS_VULKAN_DEVICE_STATS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsVulkanDeviceStats, queue_calibrations)

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGINS_VULKAN_VULKAN_EXT_H_ */
