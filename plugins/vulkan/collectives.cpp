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

TS_VK_ENTRY(Communicator_Create, TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Communicator_Create", "client");
  if (args->num_devices == 0 || !args->devices)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Communicator_Create: no devices");
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
  args->communicator = c;
  return nullptr;
}

TS_VK_ENTRY(Communicator_Destroy, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->communicator, "Communicator_Destroy", "communicator");
  args->communicator->magic = kMagicDead;
  delete args->communicator;
  return nullptr;
}

TS_VK_ENTRY(Communicator_Collective, TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->communicator, "Communicator_Collective", "communicator");
  TsCommunicator* c = args->communicator;
  size_t n = c->devices.size();
  size_t es = dtype_size(args->dtype);
  if (es == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Communicator_Collective: dtype %d is not a TsDataType",
                  static_cast<int>(args->dtype));
  if (!args->send || !args->recv || !args->streams)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Communicator_Collective: send, recv and streams are required");
  uint64_t count = args->count;
  uint64_t send_elems = count, recv_elems = count;
  switch (args->op) {
    case TS_COLLECTIVE_ALL_REDUCE: case TS_COLLECTIVE_BROADCAST: break;
    case TS_COLLECTIVE_ALL_GATHER: recv_elems = count * n; break;
    case TS_COLLECTIVE_REDUCE_SCATTER: send_elems = count * n; break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: unknown collective %d",
                    static_cast<int>(args->op));
  }
  if (args->op == TS_COLLECTIVE_BROADCAST && args->root >= n)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: broadcast root %u, but %zu ranks",
                  args->root, n);
  for (size_t r = 0; r < n; ++r) {
    const TsMemoryRef* refs[2] = {&args->send[r], &args->recv[r]};
    uint64_t sizes[2] = {send_elems * es, recv_elems * es};
    for (int k = 0; k < 2; ++k) {
      TS_VK_CHECK_HANDLE(refs[k]->buffer, "Communicator_Collective", k ? "recv buffer" : "send buffer");
      TsBuffer* b = refs[k]->buffer;
      if (b->device != c->devices[r])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: collective: rank %zu's %s buffer is on another device", r,
                      k ? "recv" : "send");
      if (refs[k]->offset > b->size || sizes[k] > b->size - refs[k]->offset)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "vulkan: collective: rank %zu's %s buffer holds %llu bytes past offset "
                      "%llu; %llu are needed",
                      r, k ? "recv" : "send",
                      static_cast<unsigned long long>(b->size - std::min(b->size, refs[k]->offset)),
                      static_cast<unsigned long long>(refs[k]->offset),
                      static_cast<unsigned long long>(sizes[k]));
    }
    TS_VK_CHECK_HANDLE(args->streams[r], "Communicator_Collective", "stream");
    if (args->streams[r]->device != c->devices[r])
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: collective: rank %zu's stream is on another device", r);
  }
  // Each rank's part is ordered on its stream: wait for what came before.
  for (size_t r = 0; r < n; ++r)
    TS_VK_RETURN_IF_ERROR(synchronize_stream(args->streams[r]->state));
  std::vector<std::vector<uint8_t>> in(n);
  for (size_t r = 0; r < n; ++r) {
    if (args->op == TS_COLLECTIVE_BROADCAST && r != args->root) continue;
    in[r].resize(send_elems * es);
    TS_VK_RETURN_IF_ERROR(host_io(args->streams[r]->state, args->send[r].buffer,
                                  args->send[r].offset, in[r].data(), in[r].size(), false));
  }
  // Always the fixed tree (deterministic), whatever the caller asked.
  std::vector<uint8_t> out = plugin_support::host_collective(args->op, args->dtype, args->reduce_op,
                                                             args->root, in, send_elems);
  for (size_t r = 0; r < n; ++r) {
    uint64_t bytes = recv_elems * es;
    uint8_t* src = out.data();
    if (args->op == TS_COLLECTIVE_REDUCE_SCATTER) src += r * bytes;
    TS_VK_RETURN_IF_ERROR(host_io(args->streams[r]->state, args->recv[r].buffer,
                                  args->recv[r].offset, src, bytes, true));
  }
  return nullptr;
}

}  // namespace tessera::vk
