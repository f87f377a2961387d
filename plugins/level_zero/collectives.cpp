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

TS_ZE_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || !args->devices)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Communicator_Create: no devices");
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
  args->communicator = c.release();
  return nullptr;
}

TS_ZE_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  args->communicator->magic = kMagicDead;
  delete args->communicator;
  return nullptr;
}

TS_ZE_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->communicator, "Communicator_Collective", "communicator");
  TsCommunicator* c = args->communicator;
  const size_t n = c->devices.size();
  const size_t es = dtype_size(args->dtype);
  if (es == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Communicator_Collective: dtype %d is not a TsDataType",
                  static_cast<int>(args->dtype));
  if (!args->send || !args->recv || !args->streams)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Communicator_Collective: send, recv and streams are required");
  const uint64_t count = args->count;
  if (count > (uint64_t{1} << 40) / es / n)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Communicator_Collective: %llu elements per rank is too many",
                  static_cast<unsigned long long>(count));
  uint64_t send_elems = count, recv_elems = count;
  switch (args->op) {
    case TS_COLLECTIVE_ALL_REDUCE: case TS_COLLECTIVE_BROADCAST: break;
    case TS_COLLECTIVE_ALL_GATHER: recv_elems = count * n; break;
    case TS_COLLECTIVE_REDUCE_SCATTER: send_elems = count * n; break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: unknown collective %d",
                    static_cast<int>(args->op));
  }
  if (args->op == TS_COLLECTIVE_BROADCAST && args->root >= n)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: broadcast root %u, but %zu ranks",
                  args->root, n);
  for (size_t r = 0; r < n; ++r) {
    const TsMemoryRef* refs[2] = {&args->send[r], &args->recv[r]};
    const uint64_t sizes[2] = {send_elems * es, recv_elems * es};
    for (int k = 0; k < 2; ++k) {
      // Broadcast reads send[root] only.
      if (k == 0 && args->op == TS_COLLECTIVE_BROADCAST && r != args->root) continue;
      TS_ZE_CHECK_HANDLE(refs[k]->buffer, "Communicator_Collective",
                         k ? "recv buffer" : "send buffer");
      const TsBuffer* b = refs[k]->buffer;
      if (b->device != c->devices[r])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: collective: rank %zu's %s buffer is on another device", r,
                      k ? "recv" : "send");
      if (refs[k]->offset > b->size || sizes[k] > b->size - refs[k]->offset)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "level_zero: collective: rank %zu's %s buffer holds %llu bytes past "
                      "offset %llu; %llu are needed",
                      r, k ? "recv" : "send",
                      static_cast<unsigned long long>(b->size - std::min(b->size, refs[k]->offset)),
                      static_cast<unsigned long long>(refs[k]->offset),
                      static_cast<unsigned long long>(sizes[k]));
    }
    TS_ZE_CHECK_HANDLE(args->streams[r], "Communicator_Collective", "stream");
    if (args->streams[r]->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: collective: rank %zu's stream is on another device", r);
  }
  std::vector<std::vector<uint8_t>> in(n);
  for (size_t r = 0; r < n; ++r) {
    if (args->op == TS_COLLECTIVE_BROADCAST && r != args->root) continue;
    in[r].resize(send_elems * es);
    // Ordered on the rank's stream: the copy waits for what came before.
    TS_ZE_RETURN_IF_ERROR(host_io(args->streams[r], args->send[r].buffer, args->send[r].offset,
                                  in[r].data(), in[r].size(), false));
  }
  // Always the fixed tree (deterministic), whatever the caller asked.
  std::vector<uint8_t> out = plugin_support::host_collective(args->op, args->dtype,
                                                             args->reduce_op, args->root, in,
                                                             send_elems);
  for (size_t r = 0; r < n; ++r) {
    const uint64_t bytes = recv_elems * es;
    uint8_t* src = out.data();
    if (args->op == TS_COLLECTIVE_REDUCE_SCATTER) src += r * bytes;
    TS_ZE_RETURN_IF_ERROR(host_io(args->streams[r], args->recv[r].buffer, args->recv[r].offset,
                                  src, bytes, true));
  }
  return nullptr;
}

}  // namespace tessera::level_zero
