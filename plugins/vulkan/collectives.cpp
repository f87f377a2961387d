// Collectives across the Vulkan devices of one client, staged through the
// host: every rank's stream is synchronized, the send buffers are read into
// host memory, the result is computed with a fixed binary tree over the
// ranks (deterministic, bitwise identical run to run; every TsDataType, by
// plugins/common/host_reduce, as on the cpu plugin) and written back.
// The call therefore blocks the host until the collective is complete.
#include <cstring>
#include <vector>

#include "host_reduce.hpp"
#include "internal.hpp"
#include "staged_collective.hpp"

namespace tessera::vk {

namespace {

using plugin_support::dtype_size;

TsError* host_io(const std::shared_ptr<StreamState>& s, TsBuffer* b, uint64_t off, void* host,
                 uint64_t size, bool to_device) {
  if (b->alloc.mapped) {  // the stream has been synchronized
    if (to_device)
      std::memcpy(b->alloc.mapped + off, host, size);
    else
      std::memcpy(host, b->alloc.mapped + off, size);
    return nullptr;
  }
  return staged_copy(s, b, off, host, size, to_device);
}

}  // namespace

TS_VK_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || !args->devices)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Communicator_Create: no devices");
  bool across_processes = false;
  if (TsError* e = plugin_support::check_process_spanning_create("vulkan", args, false, &across_processes))
    return e;
  auto* c = new TsCommunicator;
  c->client = args->client;
  for (size_t i = 0; i < args->num_devices; ++i) {
    TsDevice* d = args->devices[i];
    TsError* e = check_handle(d, "Communicator_Create", "device");
    if (!e && d->client != args->client)
      e = errorf(TS_ERROR_INVALID_ARGUMENT,
                 "vulkan: Communicator_Create: device %zu belongs to another client", i);
    for (TsDevice* o : c->devices)
      if (!e && o == d)
        e = errorf(TS_ERROR_INVALID_ARGUMENT,
                   "vulkan: Communicator_Create: device %u appears twice", d->ordinal);
    if (e) {
      delete c;
      return e;
    }
    c->devices.push_back(d);
  }
  {
    std::lock_guard<std::mutex> lk(c->client->objects_mu);
    c->client->communicators.insert(c);
  }
  args->communicator = c;
  return nullptr;
}

void destroy_communicator(TsCommunicator* c) {
  {
    std::lock_guard<std::mutex> lk(c->client->objects_mu);
    c->client->communicators.erase(c);
  }
  c->magic = kMagicDead;
  delete c;
}

TS_VK_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  destroy_communicator(args->communicator);
  return nullptr;
}

TS_VK_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->communicator, "Communicator_Collective", "communicator");
  TsCommunicator* c = args->communicator;
  plugin_support::StagedCollectiveHooks hooks;
  hooks.plugin = "vulkan";
  hooks.buffer = [&](size_t r, const TsMemoryRef& ref, bool recv, uint64_t* bytes) -> TsError* {
    TS_VK_CHECK_HANDLE(ref.buffer, "Communicator_Collective", recv ? "recv buffer" : "send buffer");
    if (ref.buffer->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: collective: rank %zu's %s buffer is on another device",
                    r, recv ? "recv" : "send");
    *bytes = ref.buffer->size;
    return nullptr;
  };
  hooks.stream = [&](size_t r) -> TsError* {
    TS_VK_CHECK_HANDLE(args->streams[r], "Communicator_Collective", "stream");
    if (args->streams[r]->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: collective: rank %zu's stream is on another device", r);
    return nullptr;
  };
  hooks.host_io = [&](size_t r, const TsMemoryRef& ref, void* host, uint64_t bytes, bool to_device) -> TsError* {
    // Rank r's part is ordered on its stream: wait for what came before.
    TS_VK_RETURN_IF_ERROR(synchronize_stream(args->streams[r]->state));
    return host_io(args->streams[r]->state, ref.buffer, ref.offset, host, bytes, to_device);
  };
  return plugin_support::RunStagedCollective(args, c->devices.size(), hooks);
}

}  // namespace tessera::vk
