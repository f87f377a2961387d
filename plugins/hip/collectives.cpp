// Collectives across the HIP devices of one client.
//
// With RCCL (librccl.so.1, dlopened by the first Communicator_Create; the
// rccl_library option): one RCCL communicator per rank (ncclCommInitAll),
// and each call one RCCL group over the ranks, queued on their streams: the
// data stays on the devices (xGMI on MI250/MI300, PCIe peer copies) and the
// host does not wait.
//
// Staged through the host, as on the vulkan plugin, where RCCL cannot be
// loaded or fails to create the communicator (the reason at
// TESSERA_LOG=debug, or as a warning), for types the library lacks, and for
// every deterministic call: every rank's stream is synchronized, the send
// buffers are copied into host memory, the result is computed with a fixed
// binary tree over the ranks (bitwise identical run to run, and the same
// bits as every other plugin's; plugins/common/host_reduce) and copied back.
// Such a call blocks the host until it is complete.
//
// Either way a capturing stream cannot take part (FAILED_PRECONDITION).
#include <algorithm>
#include <cstring>
#include <vector>

#include "host_reduce.hpp"
#include "internal.hpp"
#include "staged_collective.hpp"

namespace tessera::hip {

namespace {

using plugin_support::dtype_size;

// A blocking copy between device memory and the host, ordered on `s`
// (size 0: only waits for what `s` holds).
TsError* raw_io(TsStream* s, void* d, void* host, uint64_t size, bool to_device) {
  TsDevice* dev = s->device;
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  if (size > 0)
    TS_HIP_CALL(dev,
                dev->fn->hipMemcpyAsync(to_device ? d : host, to_device ? host : d,
                                        static_cast<size_t>(size),
                                        to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost,
                                        s->stream),
                strprintf("hipMemcpyAsync(%s, collective %s)", human_size(size).c_str(),
                          to_device ? "result" : "input"));
  TS_HIP_CALL(dev, dev->fn->hipStreamSynchronize(s->stream), "hipStreamSynchronize");
  return nullptr;
}

// A blocking copy between a buffer and host memory, ordered on `s`.
TsError* host_io(TsStream* s, const TsBuffer* b, uint64_t off, void* host, uint64_t size,
                 bool to_device) {
  if (size == 0) return nullptr;
  return raw_io(s, b->dptr + off, host, size, to_device);
}

}  // namespace

TS_HIP_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || !args->devices)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Communicator_Create: no devices");
  // Across processes (a unique_id): RCCL's ncclCommInitRank, so RCCL must load.
  std::string no_rccl;
  const plugin_support::NcclLibrary* rccl = args->client->nccl.Get(&no_rccl);
  bool across_processes = false;
  if (TS_FIELD_PRESENT(args, TsCommunicator_Create_Args, num_ranks) && args->unique_id && !rccl)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "hip: Communicator_Create: communicators across processes need RCCL, which is not "
                  "available: %s",
                  no_rccl.c_str());
  TS_HIP_RETURN_IF_ERROR(
      plugin_support::check_process_spanning_create("hip", args, rccl != nullptr, &across_processes));
  if (args->num_devices > args->client->devices.size())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Communicator_Create: %zu devices, but the client has %zu",
                  args->num_devices, args->client->devices.size());
  auto c = std::make_unique<TsCommunicator>();
  c->client = args->client;
  for (size_t i = 0; i < args->num_devices; ++i) {
    TsDevice* d = args->devices[i];
    TS_HIP_CHECK_HANDLE(d, "Communicator_Create", "device");
    if (d->client != args->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: Communicator_Create: device %zu belongs to another client", i);
    if (std::find(c->devices.begin(), c->devices.end(), d) != c->devices.end())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: Communicator_Create: device %d appears twice", d->ordinal);
    c->devices.push_back(d);
  }
  if (across_processes) {
    c->nccl.num_ranks = args->num_ranks;
    c->nccl.ranks.assign(args->ranks, args->ranks + args->num_devices);
    TS_HIP_RETURN_IF_ERROR(rccl->InitRanks("hip", args->unique_id, args->num_ranks, c->nccl.ranks,
                                            [&](size_t i) { return bind(c->devices[i]); }, &c->nccl.comms));
  } else {
    std::vector<int> ordinals;
    for (TsDevice* d : c->devices) ordinals.push_back(static_cast<int>(d->ordinal));
    c->nccl.comms = args->client->nccl.CommsFor("hip", ordinals);
  }
  args->client->live_communicators.add(c.get());
  args->communicator = c.release();
  return nullptr;
}

TS_HIP_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  TsCommunicator* c = args->communicator;
  c->client->live_communicators.remove(c);
  if (const plugin_support::NcclLibrary* lib = c->client->nccl.library()) lib->DestroyAll(&c->nccl.comms);
  args->communicator->magic = kMagicDead;
  delete args->communicator;
  return nullptr;
}

TS_HIP_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->communicator, "Communicator_Collective", "communicator");
  TsCommunicator* c = args->communicator;
  plugin_support::StagedCollectiveHooks hooks;
  hooks.plugin = "hip";
  hooks.buffer = [&](size_t r, const TsMemoryRef& ref, bool recv, uint64_t* bytes) -> TsError* {
    TS_HIP_CHECK_HANDLE(ref.buffer, "Communicator_Collective", recv ? "recv buffer" : "send buffer");
    if (ref.buffer->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: collective: rank %zu's %s buffer is on another device",
                    r, recv ? "recv" : "send");
    *bytes = ref.buffer->size;
    return nullptr;
  };
  hooks.stream = [&](size_t r) -> TsError* {
    TS_HIP_CHECK_HANDLE(args->streams[r], "Communicator_Collective", "stream");
    if (args->streams[r]->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: collective: rank %zu's stream is on another device", r);
    TS_HIP_RETURN_IF_ERROR(refuse_if_capturing(args->streams[r], "a collective"));
    if (args->streams[r]->is_default)
      TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(c->devices[r], "a collective on the default stream"));
    return nullptr;
  };
  hooks.host_io = [&](size_t r, const TsMemoryRef& ref, void* host, uint64_t bytes, bool to_device) {
    return host_io(args->streams[r], ref.buffer, ref.offset, host, bytes, to_device);
  };
  auto address = [&](const TsMemoryRef& ref) -> void* {
    return ref.buffer ? static_cast<void*>(ref.buffer->dptr + ref.offset) : nullptr;
  };
  auto stream = [&](size_t r) -> void* { return static_cast<void*>(args->streams[r]->stream); };
  // Scratch memory and blocking copies for a deterministic reduction
  // across processes (NcclLibrary::RunDeterministic).
  auto device_io = [&] {
    plugin_support::NcclLibrary::DeviceIo io;
    io.alloc = [&](size_t r, uint64_t bytes, void** out) -> TsError* {
      TsDevice* dev = c->devices[r];
      TS_HIP_RETURN_IF_ERROR(bind(dev));
      TS_HIP_CALL(dev, dev->fn->hipMalloc(out, static_cast<size_t>(bytes)),
                  strprintf("hipMalloc(%s, deterministic collective)", human_size(bytes).c_str()));
      return nullptr;
    };
    io.free = [&](size_t r, void* p) {
      if (TsError* e = bind(c->devices[r])) return destroy_error(e);  // the device is gone: nothing to free
      (void)c->devices[r]->fn->hipFree(p);
    };
    io.read = [&](size_t r, const void* d, void* host, uint64_t bytes) {
      return raw_io(args->streams[r], const_cast<void*>(d), host, bytes, false);
    };
    io.write = [&](size_t r, void* d, const void* host, uint64_t bytes) {
      return raw_io(args->streams[r], d, const_cast<void*>(host), bytes, true);
    };
    return io;
  };
  return plugin_support::RunNcclCollective("hip", c->client->nccl.library(), c->nccl, args, c->devices.size(),
                                           hooks, address, stream, device_io);
}

}  // namespace tessera::hip
