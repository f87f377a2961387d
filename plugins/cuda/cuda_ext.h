/*
 * Vendor extensions of the CUDA plugin (plugin.h: extension chains, vendor
 * ids from 0x10000).  C99.
 *
 * TsCudaDeviceInfo: what TsDeviceProperties has no field for -- the compute
 * capability, the driver's CUDA version, both shared-memory limits, TMA and
 * wgmma.  Chain it on TsDevice_GetProperties_Args.extension_start and call
 * the plugin's Device_GetProperties (Runtime::plugin_api(), Device::raw());
 * the plugin fills, in every TsCudaDeviceInfo of the chain, the fields its
 * header.struct_size covers (append-only, like the ABI's structs).  Other
 * plugins ignore it.
 */
#ifndef TESSERA_PLUGINS_CUDA_CUDA_EXT_H_
#define TESSERA_PLUGINS_CUDA_CUDA_EXT_H_

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TS_EXTENSION_CUDA_DEVICE_INFO 0x10200u

typedef struct TsCudaDeviceInfo {
  TsExtension header; /* header.type = TS_EXTENSION_CUDA_DEVICE_INFO,
                         header.struct_size = TS_CUDA_DEVICE_INFO_STRUCT_SIZE */
  uint32_t compute_capability_major; /* out: 9 for Hopper */
  uint32_t compute_capability_minor; /* out */
  uint32_t driver_version;           /* out: cuDriverGetVersion, 13000 = 13.0 */
  uint64_t shared_memory_per_block;       /* out: without opting in (48 KiB) */
  uint64_t shared_memory_per_block_optin; /* out: the most a launch may ask
                                             (TsDeviceProperties.shared_memory_per_group) */
  uint32_t tma;   /* out: 1 from compute capability 9.0 (cp.async.bulk.tensor) */
  uint32_t wgmma; /* out: 1 on compute capability 9.0 exactly (sm_90a) */
  int32_t stream_priority_least;    /* out: cuCtxGetStreamPriorityRange */
  int32_t stream_priority_greatest; /* out */
} TsCudaDeviceInfo;
#define TS_CUDA_DEVICE_INFO_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsCudaDeviceInfo, stream_priority_greatest)

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGINS_CUDA_CUDA_EXT_H_ */
