// Devices: creation (primary context, limits), properties, the default
// stream, Device_Synchronize.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "compile_targets.hpp"
#include "cuda_ext.h"
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::cuda {

namespace {

int attr(const TsDevice* d, CUdevice_attribute a, int fallback = 0) {
  int v = 0;
  return d->fn->cuDeviceGetAttribute(&v, a, d->cu) == CUDA_SUCCESS ? v : fallback;
}

}  // namespace

TsError* create_device(TsClient* client, int ordinal, std::unique_ptr<TsDevice>* out) {
  const CudaFns& fn = client->fn;
  auto d = std::make_unique<TsDevice>();
  d->client = client;
  d->fn = &client->fn;
  d->ordinal = static_cast<uint32_t>(ordinal);
  TS_CU_CALL(d.get(), fn.cuDeviceGet(&d->cu, ordinal), strprintf("cuDeviceGet(%d)", ordinal));
  TS_CU_CALL(d.get(), fn.cuDevicePrimaryCtxRetain(&d->ctx, d->cu),
             strprintf("cuDevicePrimaryCtxRetain(device %d)", ordinal));
  TS_CU_RETURN_IF_ERROR(bind(d.get()));
  d->cc_major = attr(d.get(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d->cc_minor = attr(d.get(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d->max_threads_per_block = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
  d->max_block[0] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024);
  d->max_block[1] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024);
  d->max_block[2] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64);
  d->max_grid[0] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 65535);
  d->max_grid[1] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535);
  d->max_grid[2] = attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535);
  d->shared_per_block =
      static_cast<uint64_t>(std::max(0, attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)));
  d->shared_per_block_optin = static_cast<uint64_t>(
      std::max(0, attr(d.get(), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)));
  d->shared_per_block_optin = std::max(d->shared_per_block_optin, d->shared_per_block);
  d->managed = attr(d.get(), CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 0;
  d->concurrent_managed = attr(d.get(), CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
  d->host_native_atomics = attr(d.get(), CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED) != 0;
  if (fn.cuCtxGetStreamPriorityRange(&d->priority_least, &d->priority_greatest) != CUDA_SUCCESS)
    d->priority_least = d->priority_greatest = 0;
  d->stamps = std::make_unique<Timestamps>(ClockDriver{d.get()});
  auto* s = new TsStream;
  s->device = d.get();
  s->stream = CU_STREAM_LEGACY;
  s->is_default = true;
  s->cuda_priority = d->priority_least;
  d->default_stream = s;
  *out = std::move(d);
  return nullptr;
}

}  // namespace tessera::cuda

TsDevice::~TsDevice() {
  if (ctx && fn) tessera::cuda::release_device_timestamps(this);
  if (default_stream) {
    default_stream->magic = tessera::cuda::kMagicDead;
    delete default_stream;
  }
  if (ctx && fn) fn->cuDevicePrimaryCtxRelease(cu);
}

namespace tessera::cuda {

void fill_properties(TsDevice* d) {
  TsDeviceProperties& p = d->ts;
  p = TsDeviceProperties{};
  p.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  char name[TS_NAME_MAX] = {0};
  if (d->fn->cuDeviceGetName(name, sizeof name - 1, d->cu) != CUDA_SUCCESS)
    std::snprintf(name, sizeof name, "CUDA device %u", d->ordinal);
  name[sizeof name - 1] = '\0';
  std::snprintf(p.name, sizeof p.name, "%s", name);
  std::snprintf(p.vendor, sizeof p.vendor, "NVIDIA");
  const TsClient* c = d->client;
  if (!c->driver_text.empty())
    std::snprintf(p.driver_version, sizeof p.driver_version, "%s", c->driver_text.c_str());
  else
    std::snprintf(p.driver_version, sizeof p.driver_version, "NVIDIA libcuda.so.1");
  // The CUDA version the driver implements, and the device's architecture.
  std::snprintf(p.api_version, sizeof p.api_version, "CUDA %s, compute capability %d.%d",
                driver_version_text(c->driver_version).c_str(), d->cc_major, d->cc_minor);
  p.type = attr(d, CU_DEVICE_ATTRIBUTE_INTEGRATED) ? TS_DEVICE_TYPE_INTEGRATED_GPU
                                                   : TS_DEVICE_TYPE_DISCRETE_GPU;
  p.ordinal = d->ordinal;
  size_t total = 0;
  if (d->fn->cuDeviceTotalMem(&total, d->cu) == CUDA_SUCCESS) p.total_memory = total;
  p.buffer_kinds = (1u << TS_BUFFER_DEVICE) | (1u << TS_BUFFER_HOST_PINNED);
  if (d->managed) p.buffer_kinds |= 1u << TS_BUFFER_MANAGED;
  p.managed_memory = d->managed ? 1 : 0;
  // cuMemPrefetchAsync needs concurrent managed access (it fails without);
  // cuMemAdvise works on any managed memory.
  p.prefetch_hint = d->managed && d->concurrent_managed ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  p.advise_hint = d->managed ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  // Direct when every other device of the client is a peer (vacuously with
  // one device); otherwise cuMemcpyPeerAsync stages some pairs through the
  // host.
  bool all_peers = true;
  for (size_t i = 0; i < d->peer_access.size(); ++i)
    if (i != d->ordinal && !d->peer_access[i]) all_peers = false;
  p.peer_copy = all_peers ? TS_PEER_COPY_DIRECT : TS_PEER_COPY_HOST_STAGED;
  p.graphs = 1;
  p.collectives = TS_COLLECTIVE_CAP_ALL_REDUCE | TS_COLLECTIVE_CAP_BROADCAST |
                  TS_COLLECTIVE_CAP_ALL_GATHER | TS_COLLECTIVE_CAP_REDUCE_SCATTER |
                  TS_COLLECTIVE_CAP_DETERMINISTIC;
  // Across processes through NCCL (loaded by Client_Create when it can be).
  if (d->client->nccl.library()) p.collectives |= TS_COLLECTIVE_CAP_MULTI_PROCESS;
  // PTX scopes .cta/.gpu/.sys.  Mesh scope (atomic with the host and peer
  // devices) needs .sys (sm_60+) AND a link that carries atomics to host
  // memory: without CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED (an
  // H200 on PCIe here) the conformance suite saw increments lost between
  // the host and the device, so mesh is not claimed there.
  const bool mesh = d->cc_major >= 6 && d->host_native_atomics;
  p.atomic_scopes = TS_ATOMIC_SCOPE_TILE | TS_ATOMIC_SCOPE_GROUP | TS_ATOMIC_SCOPE_DEVICE |
                    (mesh ? static_cast<uint32_t>(TS_ATOMIC_SCOPE_MESH) : 0u);
  p.subgroup_size = static_cast<uint32_t>(attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32));
  // What a launch may ask for: the opt-in maximum (Kernel_Launch raises the
  // function's limit above the 48 KiB default when asked).
  p.shared_memory_per_group = d->shared_per_block_optin;
  p.max_group_size = static_cast<uint32_t>(d->max_threads_per_block);
  p.compute_units = static_cast<uint32_t>(attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  // CUDA has stream priorities only, no proportional share: weights are
  // accepted and not honoured (stream.cpp).
  p.stream_weights = 0;
  std::snprintf(p.executable_formats, sizeof p.executable_formats, "archive:cubin,cubin,ptx");
  // Kernel parameters: 4 KiB, or 32764 bytes from CUDA 12.1 on Volta+.
  p.max_scalar_arg_bytes =
      c->driver_version >= 12010 && d->cc_major >= 7 ? 32764u : 4096u;
  p.num_memory_heaps = 1;
  p.memory_heaps[0].size = p.total_memory;
  p.memory_heaps[0].flags = TS_MEMORY_DEVICE_LOCAL;
  p.num_memory_types = 1;
  p.memory_types[0].heap_index = 0;
  p.memory_types[0].flags = TS_MEMORY_DEVICE_LOCAL;
  p.max_buffer_arg_bytes = 0;  // a pointer: no binding limit
  p.kernel_features_known = 1;
  p.shader_types = TS_SHADER_TYPE_INT8 | TS_SHADER_TYPE_INT16 | TS_SHADER_TYPE_INT64 |
                   TS_SHADER_TYPE_FLOAT64 |
                   ((d->cc_major > 5 || (d->cc_major == 5 && d->cc_minor >= 3))
                        ? static_cast<uint32_t>(TS_SHADER_TYPE_FLOAT16)
                        : 0u);
  // Warp-level PTX covers every group: vote, ballot, shfl (idx/up/down/
  // bfly), reductions over shuffles (redux.sync natively from sm_80),
  // clustered and quad forms as shuffles within a mask.
  p.subgroup_ops = TS_SUBGROUP_OP_BASIC | TS_SUBGROUP_OP_VOTE | TS_SUBGROUP_OP_ARITHMETIC |
                   TS_SUBGROUP_OP_BALLOT | TS_SUBGROUP_OP_SHUFFLE |
                   TS_SUBGROUP_OP_SHUFFLE_RELATIVE | TS_SUBGROUP_OP_CLUSTERED |
                   TS_SUBGROUP_OP_QUAD;
  // atom.add.f32 on global and shared memory; f32 min/max atomics are not
  // claimed (compilers use compare-exchange loops).
  p.float_atomics = TS_FLOAT_ATOMIC_ADD_GLOBAL | TS_FLOAT_ATOMIC_ADD_SHARED;
  p.subgroup_size_min = p.subgroup_size;
  p.subgroup_size_max = p.subgroup_size;
  p.subgroup_size_control = 0;
  // A kernel cannot require full warps: the launch's group size decides.
  p.full_subgroups = 0;
  p.host_memory_import = 1;  // pinned memory is mapped for the device (UVA)
  p.concurrent_streams = attr(d, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS) ? 1 : 0;
  // What Compiler_Compile takes for "cuda" on this device (compiler.cpp),
  // when the target lists it: the caller schedules for it (sm_90a: wgmma).
  plugin_support::set_compile_arch(p.compile_arch, cuda_arch_for(d->cc_major, d->cc_minor), kArchs);
}

TS_CU_ENTRY(Device_GetProperties, TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Device_GetProperties", "device");
  TsDeviceProperties* out = args->properties;
  if (!out)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Device_GetProperties: properties is NULL");
  if (out->struct_size < TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Device_GetProperties: TsDeviceProperties.struct_size is %zu, smaller "
                  "than the %zu bytes of ABI 1.0: set it to TS_DEVICE_PROPERTIES_STRUCT_SIZE",
                  out->struct_size, static_cast<size_t>(TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE));
  size_t n = std::min(out->struct_size, sizeof(TsDeviceProperties));
  size_t caller = out->struct_size;
  TsExtension* ext = out->extension_start;
  std::memcpy(out, &args->device->ts, n);
  out->struct_size = caller;
  out->extension_start = ext;
  // Vendor extension (cuda_ext.h): what the ABI's fields do not carry.
  const TsDevice* d = args->device;
  using S = TsCudaDeviceInfo;
  for (TsExtension* e = args->extension_start; e; e = e->next) {
    if (e->type != TS_EXTENSION_CUDA_DEVICE_INFO) continue;
    auto* st = reinterpret_cast<S*>(e);
    if (TS_FIELD_PRESENT(e, S, compute_capability_minor)) {
      st->compute_capability_major = static_cast<uint32_t>(d->cc_major);
      st->compute_capability_minor = static_cast<uint32_t>(d->cc_minor);
    }
    if (TS_FIELD_PRESENT(e, S, driver_version))
      st->driver_version = static_cast<uint32_t>(d->client->driver_version);
    if (TS_FIELD_PRESENT(e, S, shared_memory_per_block))
      st->shared_memory_per_block = d->shared_per_block;
    if (TS_FIELD_PRESENT(e, S, shared_memory_per_block_optin))
      st->shared_memory_per_block_optin = d->shared_per_block_optin;
    if (TS_FIELD_PRESENT(e, S, tma)) st->tma = d->cc_major >= 9 ? 1 : 0;
    if (TS_FIELD_PRESENT(e, S, wgmma)) st->wgmma = d->cc_major == 9 && d->cc_minor == 0 ? 1 : 0;
    if (TS_FIELD_PRESENT(e, S, stream_priority_greatest)) {
      st->stream_priority_least = d->priority_least;
      st->stream_priority_greatest = d->priority_greatest;
    }
  }
  return nullptr;
}

TS_CU_ENTRY(Device_GetDefaultStream, TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Device_GetDefaultStream", "device");
  args->stream = args->device->default_stream;
  return nullptr;
}

TsError* synchronize_device(TsDevice* dev) {
  TS_CU_RETURN_IF_ERROR(bind(dev));
  if (dev->capturing.load(std::memory_order_acquire) == 0) {
    TS_CU_CALL(dev, dev->fn->cuCtxSynchronize(), "cuCtxSynchronize");
    flush_device_timestamps(dev, true);
    return nullptr;
  }
  // A stream of the device captures: CUDA refuses to synchronize it (and
  // would invalidate the capture), so wait for every other stream.
  std::vector<TsStream*> streams;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    streams.assign(dev->streams.begin(), dev->streams.end());
  }
  for (TsStream* s : streams) {
    if (capture_of(s)) continue;
    TS_CU_CALL(dev, dev->fn->cuStreamSynchronize(s->stream), "cuStreamSynchronize");
  }
  if (dev->capturing_blocking.load(std::memory_order_acquire) == 0)
    TS_CU_CALL(dev, dev->fn->cuStreamSynchronize(CU_STREAM_LEGACY),
               "cuStreamSynchronize(default stream)");
  flush_device_timestamps(dev, false);  // capturing streams were not waited for
  return nullptr;
}

TS_CU_ENTRY(Device_Synchronize, TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Device_Synchronize", "device");
  return synchronize_device(args->device);
}

}  // namespace tessera::cuda
