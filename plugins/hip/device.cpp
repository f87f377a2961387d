// Devices: creation (limits, gcnArchName), properties, the default stream,
// Device_Synchronize.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "compile_targets.hpp"
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::hip {

namespace {

int attr(const TsDevice* d, hipDeviceAttribute_t a, int fallback = 0) {
  int v = 0;
  return d->fn->hipDeviceGetAttribute(&v, a, d->ordinal) == hipSuccess ? v : fallback;
}

// hipDeviceProp_t as this header knows it, with room after it: a runtime
// of a later 5.x release that writes a longer struct writes into the slack
// instead of past the object.
struct PaddedProps {
  hipDeviceProp_t p;
  unsigned char slack[4096];
};

}  // namespace

TsError* create_device(TsClient* client, int ordinal, std::unique_ptr<TsDevice>* out) {
  const HipFns& fn = client->fn;
  auto d = std::make_unique<TsDevice>();
  d->client = client;
  d->fn = &client->fn;
  d->ordinal = ordinal;
  TS_HIP_RETURN_IF_ERROR(bind(d.get()));
  auto props = std::make_unique<PaddedProps>();
  std::memset(props.get(), 0, sizeof *props);
  TS_HIP_CALL(d.get(), fn.hipGetDeviceProperties(&props->p, ordinal),
              strprintf("hipGetDeviceProperties(%d)", ordinal));
  hipDeviceProp_t& p = props->p;
  p.name[sizeof p.name - 1] = '\0';
  p.gcnArchName[sizeof p.gcnArchName - 1] = '\0';
  d->arch = p.gcnArchName;
  TsDeviceProperties& ts = d->ts;
  ts = TsDeviceProperties{};
  if (p.name[0])
    std::snprintf(ts.name, sizeof ts.name, "%s", p.name);
  else
    std::snprintf(ts.name, sizeof ts.name, "AMD GPU %d (%s)", ordinal, d->arch.c_str());
  ts.total_memory = p.totalGlobalMem;
  d->max_threads_per_block = attr(d.get(), hipDeviceAttributeMaxThreadsPerBlock, 1024);
  d->max_block[0] = attr(d.get(), hipDeviceAttributeMaxBlockDimX, 1024);
  d->max_block[1] = attr(d.get(), hipDeviceAttributeMaxBlockDimY, 1024);
  d->max_block[2] = attr(d.get(), hipDeviceAttributeMaxBlockDimZ, 1024);
  d->max_grid[0] = attr(d.get(), hipDeviceAttributeMaxGridDimX, 65535);
  d->max_grid[1] = attr(d.get(), hipDeviceAttributeMaxGridDimY, 65535);
  d->max_grid[2] = attr(d.get(), hipDeviceAttributeMaxGridDimZ, 65535);
  d->shared_per_block = static_cast<uint64_t>(
      std::max(0, attr(d.get(), hipDeviceAttributeMaxSharedMemoryPerBlock,
                       static_cast<int>(std::min<size_t>(p.sharedMemPerBlock, 1u << 30)))));
  d->warp_size = attr(d.get(), hipDeviceAttributeWarpSize, p.warpSize > 0 ? p.warpSize : 64);
  d->managed = attr(d.get(), hipDeviceAttributeManagedMemory) != 0;
  d->concurrent_managed = attr(d.get(), hipDeviceAttributeConcurrentManagedAccess) != 0;
  d->host_native_atomics = attr(d.get(), hipDeviceAttributeHostNativeAtomicSupported) != 0;
  if (fn.hipDeviceGetStreamPriorityRange(&d->priority_least, &d->priority_greatest) !=
      hipSuccess)
    d->priority_least = d->priority_greatest = 0;
  d->stamps = std::make_unique<Timestamps>(ClockDriver{d.get()});
  auto* s = new TsStream;
  s->device = d.get();
  s->stream = nullptr;  // the device's NULL stream
  s->is_default = true;
  s->hip_priority = 0;
  d->default_stream = s;
  *out = std::move(d);
  return nullptr;
}

}  // namespace tessera::hip

TsDevice::~TsDevice() {
  if (fn) tessera::hip::release_device_timestamps(this);
  if (default_stream) {
    default_stream->magic = tessera::hip::kMagicDead;
    delete default_stream;
  }
}

namespace tessera::hip {

void fill_properties(TsDevice* d) {
  TsDeviceProperties& p = d->ts;  // name and total_memory set at creation
  p.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  std::snprintf(p.vendor, sizeof p.vendor, "AMD");
  const TsClient* c = d->client;
  const std::string hip = hip_version_text(c->runtime_version);
  if (!c->driver_text.empty())
    std::snprintf(p.driver_version, sizeof p.driver_version, "%s, HIP runtime %s",
                  c->driver_text.c_str(), hip.c_str());
  else
    std::snprintf(p.driver_version, sizeof p.driver_version, "HIP runtime %s", hip.c_str());
  std::snprintf(p.api_version, sizeof p.api_version, "HIP %s, %s", hip.c_str(),
                d->arch.c_str());
  p.type = attr(d, hipDeviceAttributeIntegrated) ? TS_DEVICE_TYPE_INTEGRATED_GPU
                                                 : TS_DEVICE_TYPE_DISCRETE_GPU;
  p.ordinal = static_cast<uint32_t>(d->ordinal);
  p.buffer_kinds = (1u << TS_BUFFER_DEVICE) | (1u << TS_BUFFER_HOST_PINNED);
  if (d->managed) p.buffer_kinds |= 1u << TS_BUFFER_MANAGED;
  p.managed_memory = d->managed ? 1 : 0;
  // hipMemPrefetchAsync migrates only where the device accesses managed
  // memory concurrently with the host (HMM with XNACK enabled, e.g. an
  // MI250 booted with HSA_XNACK=1, or an MI300A); hipMemAdvise works on any
  // managed memory.
  p.prefetch_hint = d->managed && d->concurrent_managed ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  p.advise_hint = d->managed ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  // Direct when every other device of the client is a peer (vacuously with
  // one device); otherwise the plugin stages some pairs through the host.
  bool all_peers = true;
  for (size_t i = 0; i < d->peer_access.size(); ++i)
    if (i != static_cast<size_t>(d->ordinal) && !d->peer_access[i]) all_peers = false;
  p.peer_copy = all_peers ? TS_PEER_COPY_DIRECT : TS_PEER_COPY_HOST_STAGED;
  p.graphs = 1;
  p.collectives = TS_COLLECTIVE_CAP_ALL_REDUCE | TS_COLLECTIVE_CAP_BROADCAST |
                  TS_COLLECTIVE_CAP_ALL_GATHER | TS_COLLECTIVE_CAP_REDUCE_SCATTER |
                  TS_COLLECTIVE_CAP_DETERMINISTIC;
  // Across processes through RCCL (loaded by Client_Create when it can be).
  if (d->client->nccl.library()) p.collectives |= TS_COLLECTIVE_CAP_MULTI_PROCESS;
  // Workgroup, agent and system scopes exist on every GCN/CDNA/RDNA part;
  // system-scope atomics are atomic with the host only over a link that
  // carries them (hipDeviceAttributeHostNativeAtomicSupported).
  p.atomic_scopes = TS_ATOMIC_SCOPE_TILE | TS_ATOMIC_SCOPE_GROUP | TS_ATOMIC_SCOPE_DEVICE |
                    (d->host_native_atomics ? static_cast<uint32_t>(TS_ATOMIC_SCOPE_MESH) : 0u);
  // 64 on GCN/CDNA (MI250, MI300), 32 on RDNA (the runtime reports the
  // wave size HIP code is compiled for).
  p.subgroup_size = static_cast<uint32_t>(d->warp_size);
  p.shared_memory_per_group = d->shared_per_block;
  p.max_group_size = static_cast<uint32_t>(d->max_threads_per_block);
  p.compute_units = static_cast<uint32_t>(attr(d, hipDeviceAttributeMultiprocessorCount));
  // Priorities only (stream.cpp): weights are accepted and not honoured.
  p.stream_weights = 0;
  std::snprintf(p.executable_formats, sizeof p.executable_formats, "archive:hsaco,hsaco");
  // The kernel argument segment HIP fills for a launch: 4 KiB.
  p.max_scalar_arg_bytes = 4096;
  p.num_memory_heaps = 1;
  p.memory_heaps[0].size = p.total_memory;
  p.memory_heaps[0].flags = TS_MEMORY_DEVICE_LOCAL;
  p.num_memory_types = 1;
  p.memory_types[0].heap_index = 0;
  p.memory_types[0].flags = TS_MEMORY_DEVICE_LOCAL;
  p.max_buffer_arg_bytes = 0;  // a pointer: no binding limit
  p.kernel_features_known = 1;
  p.shader_types = TS_SHADER_TYPE_INT8 | TS_SHADER_TYPE_INT16 | TS_SHADER_TYPE_INT64 |
                   TS_SHADER_TYPE_FLOAT16 | TS_SHADER_TYPE_FLOAT64;
  // Wave-level operations: ballot and vote (s_ballot), DPP and
  // ds_swizzle/ds_bpermute shuffles, reductions over them.
  p.subgroup_ops = TS_SUBGROUP_OP_BASIC | TS_SUBGROUP_OP_VOTE | TS_SUBGROUP_OP_ARITHMETIC |
                   TS_SUBGROUP_OP_BALLOT | TS_SUBGROUP_OP_SHUFFLE |
                   TS_SUBGROUP_OP_SHUFFLE_RELATIVE | TS_SUBGROUP_OP_CLUSTERED |
                   TS_SUBGROUP_OP_QUAD;
  // ds_add_f32 on LDS everywhere.  Global f32 atomic add is not claimed:
  // on gfx90a it is not atomic on fine-grained (host-coherent) memory, and
  // RDNA2 has none; compilers use compare-exchange loops.
  p.float_atomics = TS_FLOAT_ATOMIC_ADD_SHARED;
  p.subgroup_size_min = p.subgroup_size;
  p.subgroup_size_max = p.subgroup_size;
  p.subgroup_size_control = 0;
  p.full_subgroups = 0;
  p.host_memory_import = 1;  // pinned memory is mapped for the device
  p.concurrent_streams = attr(d, hipDeviceAttributeConcurrentKernels, 1) ? 1 : 0;
  // What Compiler_Compile takes for "hip" on this device (compiler.cpp),
  // when the target lists it: the caller schedules for it (CDNA: mfma).
  plugin_support::set_compile_arch(p.compile_arch, hip_arch_for(d->arch), kArchs);
}

TS_HIP_ENTRY(Device_GetProperties, TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Device_GetProperties", "device");
  TsDeviceProperties* out = args->properties;
  if (!out)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Device_GetProperties: properties is NULL");
  if (out->struct_size < TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Device_GetProperties: TsDeviceProperties.struct_size is %zu, smaller "
                  "than the %zu bytes of ABI 1.0: set it to TS_DEVICE_PROPERTIES_STRUCT_SIZE",
                  out->struct_size, static_cast<size_t>(TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE));
  size_t n = std::min(out->struct_size, sizeof(TsDeviceProperties));
  size_t caller = out->struct_size;
  TsExtension* ext = out->extension_start;
  std::memcpy(out, &args->device->ts, n);
  out->struct_size = caller;
  out->extension_start = ext;
  return nullptr;
}

TS_HIP_ENTRY(Device_GetDefaultStream, TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Device_GetDefaultStream", "device");
  args->stream = args->device->default_stream;
  return nullptr;
}

TsError* synchronize_device(TsDevice* dev) {
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  if (dev->capturing.load(std::memory_order_acquire) == 0) {
    TS_HIP_CALL(dev, dev->fn->hipDeviceSynchronize(), "hipDeviceSynchronize");
    flush_device_timestamps(dev, true);
    return nullptr;
  }
  // A stream of the device captures: HIP refuses to synchronize it (and
  // would invalidate the capture), so wait for every other stream.
  std::vector<TsStream*> streams;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    streams.assign(dev->streams.begin(), dev->streams.end());
  }
  for (TsStream* s : streams) {
    if (capture_of(s)) continue;
    TS_HIP_CALL(dev, dev->fn->hipStreamSynchronize(s->stream), "hipStreamSynchronize");
  }
  if (dev->capturing_blocking.load(std::memory_order_acquire) == 0)
    TS_HIP_CALL(dev, dev->fn->hipStreamSynchronize(nullptr),
                "hipStreamSynchronize(NULL stream)");
  flush_device_timestamps(dev, false);  // capturing streams were not waited for
  return nullptr;
}

TS_HIP_ENTRY(Device_Synchronize, TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Device_Synchronize", "device");
  return synchronize_device(args->device);
}

}  // namespace tessera::hip
