// Devices: creation (the limits read once, the compute queue group, the
// event pools, the default stream), properties, Device_Synchronize.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "internal.hpp"

namespace tessera::level_zero {

TsError* create_device(TsClient* client, ze_device_handle_t ze, uint32_t ordinal,
                       std::unique_ptr<TsDevice>* out) {
  const ZeFns& fn = client->fn;
  auto d = std::make_unique<TsDevice>();
  d->client = client;
  d->fn = &client->fn;
  d->ordinal = ordinal;
  d->ze = ze;
  // From API 1.2 on, timerResolution is in cycles per second; before, in
  // nanoseconds per cycle.
  const bool v12 = client->api_version >= ZE_MAKE_VERSION(1, 2);
  d->props.stype = v12 ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  TS_ZE_CALL(d.get(), fn.zeDeviceGetProperties(ze, &d->props),
             strprintf("zeDeviceGetProperties(device %u)", ordinal));
  d->props.name[sizeof d->props.name - 1] = '\0';
  const uint64_t res = d->props.timerResolution;
  d->ticks_per_second = res == 0 ? 0.0 : v12 ? static_cast<double>(res) : 1e9 / static_cast<double>(res);
  d->timestamp_bits = d->props.kernelTimestampValidBits ? d->props.kernelTimestampValidBits : 64;
  d->global_timestamp_bits = d->props.timestampValidBits ? d->props.timestampValidBits : 64;
  d->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  TS_ZE_CALL(d.get(), fn.zeDeviceGetComputeProperties(ze, &d->compute),
             strprintf("zeDeviceGetComputeProperties(device %u)", ordinal));
  d->compute.numSubGroupSizes = std::min<uint32_t>(d->compute.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT);
  // Module properties, with the float-atomics extension when the driver
  // takes it (retried without on drivers that refuse the chain).
  ze_float_atomic_ext_properties_t fa{};
  fa.stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES;
  d->module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  d->module.pNext = &fa;
  if (fn.zeDeviceGetModuleProperties(ze, &d->module) == ZE_RESULT_SUCCESS) {
    d->fp32_atomics = fa.fp32Flags;
  } else {
    d->module = ze_device_module_properties_t{};
    d->module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    TS_ZE_CALL(d.get(), fn.zeDeviceGetModuleProperties(ze, &d->module),
               strprintf("zeDeviceGetModuleProperties(device %u)", ordinal));
  }
  d->module.pNext = nullptr;
  d->access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  TS_ZE_CALL(d.get(), fn.zeDeviceGetMemoryAccessProperties(ze, &d->access),
             strprintf("zeDeviceGetMemoryAccessProperties(device %u)", ordinal));
  // The compute queue group (the first that has COMPUTE; usually ordinal 0,
  // the CCS engines).
  uint32_t ngroups = 0;
  TS_ZE_CALL(d.get(), fn.zeDeviceGetCommandQueueGroupProperties(ze, &ngroups, nullptr),
             "zeDeviceGetCommandQueueGroupProperties");
  ngroups = std::min(ngroups, kMaxQueueGroups);
  std::vector<ze_command_queue_group_properties_t> groups(ngroups);
  for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  TS_ZE_CALL(d.get(), fn.zeDeviceGetCommandQueueGroupProperties(ze, &ngroups, groups.data()),
             "zeDeviceGetCommandQueueGroupProperties");
  bool found = false;
  for (uint32_t i = 0; i < std::min<size_t>(ngroups, groups.size()); ++i) {
    if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
      d->queue_group = i;
      d->queue_count = std::max<uint32_t>(1, std::min<uint32_t>(groups[i].numQueues, 64));
      found = true;
      break;
    }
  }
  if (!found)
    return errorf(TS_ERROR_UNAVAILABLE,
                  "level_zero: device %u (%s) has no compute queue group", ordinal,
                  d->props.name);
  d->events_timed = std::make_shared<EventAllocator>(&client->fn, client->driver,
                                                     client->context, true);
  d->events_plain = std::make_shared<EventAllocator>(&client->fn, client->driver,
                                                     client->context, false);
  TS_ZE_RETURN_IF_ERROR(create_stream(d.get(), true, false, 0, &d->default_stream));
  *out = std::move(d);
  return nullptr;
}

}  // namespace tessera::level_zero

TsDevice::~TsDevice() {
  if (default_stream) {
    if (fn && default_stream->list) fn->zeCommandListDestroy(default_stream->list);
    default_stream->magic = tessera::level_zero::kMagicDead;
    delete default_stream;
  }
  if (staging && fn) fn->zeMemFree(client->context, staging);
  if (fn) tessera::level_zero::release_timestamp_slots(this);
  if (events_timed) events_timed->Close();
  if (events_plain) events_plain->Close();
}

namespace tessera::level_zero {

void fill_properties(TsDevice* d) {
  TsDeviceProperties& p = d->ts;
  p = TsDeviceProperties{};
  p.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  const TsClient* c = d->client;
  std::snprintf(p.name, sizeof p.name, "%s", d->props.name);
  if (d->props.vendorId == 0x8086)
    std::snprintf(p.vendor, sizeof p.vendor, "Intel");
  else
    std::snprintf(p.vendor, sizeof p.vendor, "PCI vendor 0x%04x", d->props.vendorId);
  std::snprintf(p.driver_version, sizeof p.driver_version, "Level Zero driver %s",
                driver_version_text(c->driver_version).c_str());
  std::snprintf(p.api_version, sizeof p.api_version, "Level Zero %s",
                api_version_text(c->api_version).c_str());
  p.type = (d->props.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) ? TS_DEVICE_TYPE_INTEGRATED_GPU
                                                                 : TS_DEVICE_TYPE_DISCRETE_GPU;
  p.ordinal = d->ordinal;
  // Memory: one heap per zeDeviceGetMemoryProperties entry (HBM, ...).
  uint32_t nmem = 0;
  std::vector<ze_device_memory_properties_t> mem;
  if (d->fn->zeDeviceGetMemoryProperties(d->ze, &nmem, nullptr) == ZE_RESULT_SUCCESS) {
    nmem = std::min(nmem, kMaxMemoryProperties);
    mem.resize(nmem);
    for (auto& m : mem) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    if (nmem == 0 ||
        d->fn->zeDeviceGetMemoryProperties(d->ze, &nmem, mem.data()) != ZE_RESULT_SUCCESS)
      nmem = 0;
    mem.resize(std::min<size_t>(nmem, mem.size()));
  }
  for (const auto& m : mem) {
    p.total_memory += m.totalSize;
    p.memory_heaps[p.num_memory_heaps] = TsMemoryHeap{m.totalSize, TS_MEMORY_DEVICE_LOCAL};
    p.memory_types[p.num_memory_types] = TsMemoryType{p.num_memory_heaps, TS_MEMORY_DEVICE_LOCAL};
    ++p.num_memory_heaps;
    ++p.num_memory_types;
  }
  const bool host_usm = (d->access.hostAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) != 0;
  const bool shared_usm =
      (d->access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) != 0;
  p.buffer_kinds = 1u << TS_BUFFER_DEVICE;
  if (host_usm) p.buffer_kinds |= 1u << TS_BUFFER_HOST_PINNED;
  if (shared_usm) p.buffer_kinds |= 1u << TS_BUFFER_MANAGED;
  p.managed_memory = shared_usm ? 1 : 0;
  // zeCommandListAppendMemoryPrefetch / zeCommandListAppendMemAdvise on
  // shared allocations (hints.cpp).
  p.prefetch_hint = shared_usm ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  p.advise_hint = shared_usm ? TS_HINT_APPLIED : TS_HINT_IGNORED;
  bool all_peers = true;
  for (size_t i = 0; i < d->peer_access.size(); ++i)
    if (!d->peer_access[i]) all_peers = false;
  p.peer_copy = all_peers ? TS_PEER_COPY_DIRECT : TS_PEER_COPY_HOST_STAGED;
  p.graphs = 1;  // graph.cpp: captured command lists
  p.collectives = TS_COLLECTIVE_CAP_ALL_REDUCE | TS_COLLECTIVE_CAP_BROADCAST |
                  TS_COLLECTIVE_CAP_ALL_GATHER | TS_COLLECTIVE_CAP_REDUCE_SCATTER |
                  TS_COLLECTIVE_CAP_DETERMINISTIC;
  // OpenCL scopes work-group and device; mesh scope (all_svm_devices with
  // host atomics) is not claimed: nothing here compiles for it yet.
  p.atomic_scopes = TS_ATOMIC_SCOPE_TILE | TS_ATOMIC_SCOPE_GROUP | TS_ATOMIC_SCOPE_DEVICE;
  // Subgroup sizes: the device lists them ({8,16,32} on Arc, {16,32} on
  // Ponte Vecchio); a kernel picks one (IntelReqdSubGroupSizeINTEL), the
  // driver's compiler otherwise.  16 is the default where offered.
  uint32_t smin = 0, smax = 0, sdefault = 0;
  for (uint32_t i = 0; i < d->compute.numSubGroupSizes; ++i) {
    const uint32_t s = d->compute.subGroupSizes[i];
    if (s == 0) continue;
    smin = smin ? std::min(smin, s) : s;
    smax = std::max(smax, s);
    if (s == 16) sdefault = 16;
  }
  if (!sdefault) sdefault = smin ? smin : d->props.physicalEUSimdWidth;
  p.subgroup_size = sdefault;
  p.shared_memory_per_group = d->compute.maxSharedLocalMemory;
  p.max_group_size = d->compute.maxTotalGroupSize;
  const uint64_t eus = uint64_t{d->props.numSlices} * d->props.numSubslicesPerSlice *
                       d->props.numEUsPerSubslice;
  p.compute_units = static_cast<uint32_t>(std::min<uint64_t>(eus, UINT32_MAX));
  // Level Zero has queue priorities only: weights are not honoured.
  p.stream_weights = 0;
  std::snprintf(p.executable_formats, sizeof p.executable_formats, "archive:spirv-kernel,spirv-kernel");
  p.max_scalar_arg_bytes = d->module.maxArgumentsSize;
  p.max_buffer_arg_bytes = 0;  // a pointer: no binding limit
  p.kernel_features_known = 1;
  p.shader_types = TS_SHADER_TYPE_INT8 | TS_SHADER_TYPE_INT16 | TS_SHADER_TYPE_INT64;
  if (d->module.flags & ZE_DEVICE_MODULE_FLAG_FP16) p.shader_types |= TS_SHADER_TYPE_FLOAT16;
  if (d->module.flags & ZE_DEVICE_MODULE_FLAG_FP64) p.shader_types |= TS_SHADER_TYPE_FLOAT64;
  // The cl_khr_subgroup_* set Intel's compute runtime exposes.
  p.subgroup_ops = TS_SUBGROUP_OP_BASIC | TS_SUBGROUP_OP_VOTE | TS_SUBGROUP_OP_ARITHMETIC |
                   TS_SUBGROUP_OP_BALLOT | TS_SUBGROUP_OP_SHUFFLE |
                   TS_SUBGROUP_OP_SHUFFLE_RELATIVE | TS_SUBGROUP_OP_CLUSTERED;
  if (d->fp32_atomics & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD)
    p.float_atomics |= TS_FLOAT_ATOMIC_ADD_GLOBAL;
  if (d->fp32_atomics & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD)
    p.float_atomics |= TS_FLOAT_ATOMIC_ADD_SHARED;
  if (d->fp32_atomics & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX)
    p.float_atomics |= TS_FLOAT_ATOMIC_MIN_MAX_GLOBAL;
  if (d->fp32_atomics & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX)
    p.float_atomics |= TS_FLOAT_ATOMIC_MIN_MAX_SHARED;
  p.subgroup_size_min = smin ? smin : sdefault;
  p.subgroup_size_max = smax ? smax : sdefault;
  p.subgroup_size_control = smin != smax ? 1 : 0;
  p.full_subgroups = 0;
  // Host_Allocate is host USM and Host_Register imports: used in place.
  p.host_memory_import = 1;
  // Streams take the compute group's queues in turn.
  p.concurrent_streams = d->queue_count > 1 ? 1 : 0;
}

TS_ZE_ENTRY(Device_GetProperties, TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Device_GetProperties", "device");
  TsDeviceProperties* out = args->properties;
  if (!out)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Device_GetProperties: properties is NULL");
  if (out->struct_size < TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Device_GetProperties: TsDeviceProperties.struct_size is %zu, "
                  "smaller than the %zu bytes of ABI 1.0: set it to "
                  "TS_DEVICE_PROPERTIES_STRUCT_SIZE",
                  out->struct_size, static_cast<size_t>(TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE));
  const size_t n = std::min(out->struct_size, sizeof(TsDeviceProperties));
  const size_t caller = out->struct_size;
  TsExtension* ext = out->extension_start;
  std::memcpy(out, &args->device->ts, n);
  out->struct_size = caller;
  out->extension_start = ext;
  return nullptr;
}

TS_ZE_ENTRY(Device_GetDefaultStream, TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Device_GetDefaultStream", "device");
  args->stream = args->device->default_stream;
  return nullptr;
}

TsError* synchronize_device(TsDevice* dev) {
  std::vector<MarkerRef> markers;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    std::vector<TsStream*> all(dev->streams.begin(), dev->streams.end());
    all.push_back(dev->default_stream);
    for (TsStream* s : all) {
      poll_locked(s);
      if (s->done_upto >= s->last_op) continue;
      MarkerRef m;
      TS_ZE_RETURN_IF_ERROR(marker_locked(s, false, &m));
      markers.push_back(std::move(m));
    }
    for (RetiredStream& r : dev->retired) markers.push_back(r.done);
  }
  TsError* first = nullptr;
  for (const MarkerRef& m : markers)
    if (TsError* e = wait_marker(m, "Device_Synchronize")) {
      if (!first) first = e;
      else destroy_error(e);
    }
  std::lock_guard<std::mutex> lk(dev->mu);
  for (TsStream* s : dev->streams) poll_locked(s);
  poll_locked(dev->default_stream);
  reap_retired_locked(dev);
  return first;
}

TS_ZE_ENTRY(Device_Synchronize, TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Device_Synchronize", "device");
  return synchronize_device(args->device);
}

}  // namespace tessera::level_zero
