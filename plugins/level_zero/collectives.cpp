// Collectives across the Level Zero devices of one client, staged through
// the host, as on the vulkan and cuda plugins: each rank's send part is
// copied to the host after the earlier work of the rank's stream, the
// result is computed with a fixed binary tree over the ranks (deterministic,
// bitwise identical run to run; every TsDataType, by
// plugins/common/host_reduce) and copied back.  The call blocks the host
// until the collective is complete.
//
// NOT DONE: oneCCL.  ccl::allreduce / broadcast / allgatherv /
// reduce_scatter on a communicator over the devices (libccl.so, dlopened
// like the loader) would keep the data on the devices and the call
// asynchronous; this plugin does not load oneCCL.
#include <algorithm>
#include <cstring>
#include <vector>

#include "host_reduce.hpp"
#include "internal.hpp"
#include "staged_collective.hpp"

namespace tessera::level_zero {

namespace {

using plugin_support::dtype_size;

// A blocking copy between a buffer and host memory, ordered on `s`.
TsError* host_io(TsStream* s, const TsBuffer* b, uint64_t off, void* host, uint64_t size,
                 bool to_device) {
  return blocking_host_copy(s, static_cast<uint8_t*>(b->ptr) + off, host, size, to_device,
                            to_device ? "collective result" : "collective input");
}

}  // namespace

TS_ZE_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || !args->devices)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Communicator_Create: no devices");
  bool across_processes = false;
  if (TsError* e = plugin_support::check_process_spanning_create("level_zero", args, false, &across_processes))
    return e;
  if (args->num_devices > args->client->devices.size())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Communicator_Create: %zu devices, but the client has %zu",
                  args->num_devices, args->client->devices.size());
  auto c = std::make_unique<TsCommunicator>();
  c->client = args->client;
  for (size_t i = 0; i < args->num_devices; ++i) {
    TsDevice* d = args->devices[i];
    TS_ZE_CHECK_HANDLE(d, "Communicator_Create", "device");
    if (d->client != args->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Communicator_Create: device %zu belongs to another client", i);
    if (std::find(c->devices.begin(), c->devices.end(), d) != c->devices.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Communicator_Create: device %u appears twice", d->ordinal);
    c->devices.push_back(d);
  }
  args->client->live_communicators.add(c.get());
  args->communicator = c.release();
  return nullptr;
}

TS_ZE_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  args->communicator->client->live_communicators.remove(args->communicator);
  args->communicator->magic = kMagicDead;
  delete args->communicator;
  return nullptr;
}

TS_ZE_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->communicator, "Communicator_Collective", "communicator");
  TsCommunicator* c = args->communicator;
  plugin_support::StagedCollectiveHooks hooks;
  hooks.plugin = "level_zero";
  hooks.buffer = [&](size_t r, const TsMemoryRef& ref, bool recv, uint64_t* bytes) -> TsError* {
    TS_ZE_CHECK_HANDLE(ref.buffer, "Communicator_Collective", recv ? "recv buffer" : "send buffer");
    if (ref.buffer->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: collective: rank %zu's %s buffer is on another device",
                    r, recv ? "recv" : "send");
    *bytes = ref.buffer->size;
    return nullptr;
  };
  hooks.stream = [&](size_t r) -> TsError* {
    TS_ZE_CHECK_HANDLE(args->streams[r], "Communicator_Collective", "stream");
    if (args->streams[r]->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: collective: rank %zu's stream is on another device", r);
    return nullptr;
  };
  hooks.host_io = [&](size_t r, const TsMemoryRef& ref, void* host, uint64_t bytes, bool to_device) {
    return host_io(args->streams[r], ref.buffer, ref.offset, host, bytes, to_device);
  };
  return plugin_support::RunStagedCollective(args, c->devices.size(), hooks);
}

}  // namespace tessera::level_zero
