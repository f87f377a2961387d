// Device properties, default stream, synchronize.
#include <cstring>

#include "internal.hpp"

namespace tessera::cpu {
namespace {
void copy_name(char (&dst)[TS_NAME_MAX], const std::string& s) {
  std::strncpy(dst, s.c_str(), TS_NAME_MAX - 1);
  dst[TS_NAME_MAX - 1] = '\0';
}
}  // namespace

TS_CPU_ENTRY(Device_GetProperties, TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Device_GetProperties", "device");
  TsDeviceProperties* p = args->properties;
  if (p == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Device_GetProperties: properties is NULL");
  // A caller built against an older MINOR passes a shorter struct: accept
  // anything that holds the MINOR-0 fields and write only what it has room for.
  if (p->struct_size < TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Device_GetProperties: TsDeviceProperties.struct_size is %zu, smaller "
                  "than the %zu bytes of ABI 1.0: set it to TS_DEVICE_PROPERTIES_STRUCT_SIZE",
                  p->struct_size, static_cast<size_t>(TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE));
  const TsDevice* d = args->device;
  const TsClient* c = d->client;
  // Write the fields the caller's struct_size covers; a newer caller's extra
  // fields stay as they are.
  copy_name(p->name, strprintf("Tessera CPU device %u (%s)", d->ordinal, c->cpu_model.c_str()));
  copy_name(p->vendor, "Tessera");
  copy_name(p->driver_version, "tessera-cpu 0.1.0");
  p->type = TS_DEVICE_TYPE_CPU;
  p->ordinal = d->ordinal;
  p->total_memory = c->physical_memory;
  p->buffer_kinds = (1u << TS_BUFFER_DEVICE) | (1u << TS_BUFFER_HOST_PINNED) |
                    (1u << TS_BUFFER_MANAGED);
  p->managed_memory = 1;
  p->prefetch_hint = TS_HINT_EMULATED;
  p->advise_hint = TS_HINT_EMULATED;
  p->peer_copy = TS_PEER_COPY_DIRECT;
  p->graphs = 1;
  p->collectives = TS_COLLECTIVE_CAP_ALL_REDUCE | TS_COLLECTIVE_CAP_BROADCAST |
                   TS_COLLECTIVE_CAP_ALL_GATHER | TS_COLLECTIVE_CAP_REDUCE_SCATTER |
                   TS_COLLECTIVE_CAP_DETERMINISTIC |
                   TS_COLLECTIVE_CAP_MULTI_PROCESS;
  p->atomic_scopes = TS_ATOMIC_SCOPE_TILE | TS_ATOMIC_SCOPE_GROUP | TS_ATOMIC_SCOPE_DEVICE |
                     TS_ATOMIC_SCOPE_MESH;
  p->subgroup_size = 1;  // lanes are loop iterations, not SIMD lanes in lock step
  p->shared_memory_per_group = kSharedMemoryPerGroup;
  p->max_group_size = 1024;
  p->compute_units = c->scheduler->worker_count();
  p->stream_weights = 1;
  copy_name(p->executable_formats, "elf-native");
  copy_name(p->api_version, "native x86-64 (shared objects, worker pool)");
  p->max_scalar_arg_bytes = 0;  // scalars are copied into the task: no limit
  // One heap: the machine's memory, which device and host share.
  p->num_memory_heaps = 1;
  p->memory_heaps[0].size = c->physical_memory;
  p->memory_heaps[0].flags = TS_MEMORY_DEVICE_LOCAL;
  p->num_memory_types = 1;
  p->memory_types[0].heap_index = 0;
  p->memory_types[0].flags = TS_MEMORY_DEVICE_LOCAL | TS_MEMORY_HOST_VISIBLE |
                             TS_MEMORY_HOST_COHERENT | TS_MEMORY_HOST_CACHED;
  using P = TsDeviceProperties;
  if (TS_FIELD_PRESENT(p, P, max_buffer_arg_bytes))
    p->max_buffer_arg_bytes = 0;  // a kernel gets a pointer: no limit
  if (TS_FIELD_PRESENT(p, P, host_memory_import)) {
    // Kernels are native code: every C type, and LLVM's atomics (float ones
    // as compare-exchange loops, which is what x86 has).  One lane per
    // subgroup: the subgroup operations Tile IR lowers are trivial.
    p->kernel_features_known = 1;
    p->shader_types = TS_SHADER_TYPE_INT8 | TS_SHADER_TYPE_INT16 | TS_SHADER_TYPE_INT64 |
                      TS_SHADER_TYPE_FLOAT16 | TS_SHADER_TYPE_FLOAT64;
    p->subgroup_ops = TS_SUBGROUP_OP_BASIC | TS_SUBGROUP_OP_ARITHMETIC |
                      TS_SUBGROUP_OP_SHUFFLE | TS_SUBGROUP_OP_SHUFFLE_RELATIVE;
    p->float_atomics = 0;  // no native float atomics on x86: CAS loops
    p->subgroup_size_min = p->subgroup_size_max = 1;
    p->subgroup_size_control = 0;
    p->full_subgroups = 1;  // a subgroup of one lane is always full
    p->host_memory_import = 1;  // device memory is host memory
  }
  if (TS_FIELD_PRESENT(p, P, concurrent_streams))
    p->concurrent_streams = c->scheduler->worker_count() >= 2 ? 1 : 0;  // a worker pool
  if (TS_FIELD_PRESENT(p, P, compile_arch)) p->compile_arch[0] = '\0';  // the target's default: native
  return nullptr;
}

TS_CPU_ENTRY(Device_GetDefaultStream, TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Device_GetDefaultStream", "device");
  args->stream = args->device->default_stream;
  return nullptr;
}

TS_CPU_ENTRY(Device_Synchronize, TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Device_Synchronize", "device");
  device_synchronize(args->device);
  return nullptr;
}

}  // namespace tessera::cpu
