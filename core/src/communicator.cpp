// Collectives across the devices of one Runtime, or across processes
// through a CollectiveProvider (tessera/process_group.hpp).
#include "runtime_impl.hpp"
#include "tessera/process_group.hpp"

namespace tessera {

using detail::MakeArgs;

MemoryRefs::MemoryRefs(const std::vector<Buffer>& buffers) {
  refs_.reserve(buffers.size());
  for (const Buffer& b : buffers) refs_.emplace_back(b);
}

namespace detail {

Status CommunicatorImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  provider.reset();
  if (raw == nullptr) return Status::Ok();  // never fully created (or a provider's)
  auto args = MakeArgs<TsCommunicator_Destroy_Args>();
  args.communicator = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(*runtime->plugin, Communicator_Destroy, args);
}

CommunicatorImpl::~CommunicatorImpl() {
  Status st = Release();
  if (!st.ok())
    TESSERA_LOG(kWarning, "destroying a communicator: " + st.ToString());
}

namespace {

Status RunCollective(const CommunicatorImpl* comm, TsCollectiveOp op,
                     const MemoryRefs& send,
                     const MemoryRefs& recv, uint64_t count,
                     TsDataType dtype, TsReduceOp reduce, uint32_t root,
                     const std::vector<Stream>& streams, bool deterministic) {
  TESSERA_CHECK_HANDLE(comm, "Communicator");
  // n: the ranks this call passes (this process's); total: every rank.
  const size_t n = comm->devices.size();
  const size_t total = comm->provider ? comm->provider->size() : comm->num_ranks ? comm->num_ranks : n;
  const std::string name = CollectiveOpName(op);
  if (send.size() != n || recv.size() != n || streams.size() != n)
    return Status(StatusCode::kInvalidArgument,
                  name + ": the communicator has " + std::to_string(n) +
                      (total != n ? " ranks in this process (" + std::to_string(total) + " in all)"
                                  : std::string(" ranks")) +
                      "; pass one send buffer, one recv buffer and one "
                      "stream per rank (got " + std::to_string(send.size()) +
                      ", " + std::to_string(recv.size()) + ", " +
                      std::to_string(streams.size()) + ")");
  if (count == 0)
    return Status(StatusCode::kInvalidArgument, name + ": count must be > 0");
  size_t element = DataTypeSize(dtype);
  if (element == 0)
    return Status(StatusCode::kInvalidArgument,
                  name + ": unknown data type " + std::to_string(dtype));
  if (op == TS_COLLECTIVE_BROADCAST && root >= total)
    return Status(StatusCode::kInvalidArgument,
                  name + ": root " + std::to_string(root) +
                      " is not a rank of a communicator of " +
                      std::to_string(total));
  if (count > UINT64_MAX / element / total)
    return Status(StatusCode::kInvalidArgument, name + ": count " + std::to_string(count) + " overflows");
  uint64_t send_elems = count, recv_elems = count;
  if (op == TS_COLLECTIVE_ALL_GATHER) recv_elems = count * total;
  if (op == TS_COLLECTIVE_REDUCE_SCATTER) send_elems = count * total;

  std::vector<TsMemoryRef> send_refs(n), recv_refs(n);
  std::vector<TsStream*> raw_streams(n);
  // A part of a buffer: [offset, offset + bytes) inside it, or a message.
  auto checkRef = [&](const MemoryRef& ref, const char* side, const std::string& rank, uint64_t elems,
                      const Device& device) -> Status {
    if (ref.buffer == nullptr)
      return Status(StatusCode::kInvalidArgument,
                    rank + ": the " + side + " side is a host pointer; collectives move device buffers "
                    "(allocate one, or copy the host data into one first)");
    TESSERA_CHECK_HANDLE(ref.buffer->impl(), "Buffer");
    if (ref.buffer->device() != device)
      return Status(StatusCode::kInvalidArgument,
                    rank + ": its buffers and stream must be on " + device.impl()->Describe());
    const uint64_t size = ref.buffer->size(), need = elems * element;
    if (ref.offset > size || size - ref.offset < need)
      return Status(StatusCode::kOutOfRange,
                    rank + ": the " + side + " buffer holds " + std::to_string(size) + " bytes" +
                        (ref.offset ? " (" + std::to_string(ref.offset > size ? 0 : size - ref.offset) +
                                          " after offset " + std::to_string(ref.offset) + ")"
                                    : std::string()) +
                        "; " + std::to_string(elems) + " " + DataTypeName(dtype) + " elements need " +
                        std::to_string(need));
    return Status::Ok();
  };
  for (size_t r = 0; r < n; ++r) {
    const std::string rank = name + " rank " + std::to_string(r);
    TESSERA_CHECK_HANDLE(streams[r].impl(), "Stream");
    const Device& device = comm->devices[r];
    if (streams[r].device() != device)
      return Status(StatusCode::kInvalidArgument,
                    rank + ": its buffers and stream must be on " +
                        device.impl()->Describe());
    TESSERA_RETURN_IF_ERROR(checkRef(send[r], "send", rank, send_elems, device));
    TESSERA_RETURN_IF_ERROR(checkRef(recv[r], "recv", rank, recv_elems, device));
    send_refs[r].buffer = send[r].buffer->raw();
    send_refs[r].offset = send[r].offset;
    recv_refs[r].buffer = recv[r].buffer->raw();
    recv_refs[r].offset = recv[r].offset;
    raw_streams[r] = streams[r].raw();
  }
  if (comm->provider) {
    CollectiveRequest q;
    q.op = op;
    q.reduce = reduce;
    q.dtype = dtype;
    q.count = count;
    q.root = root;
    q.deterministic = deterministic;
    q.send = &send;
    q.recv = &recv;
    q.streams = &streams;
    Status st = comm->provider->Run(q);
    return st.ok() ? st : st.Annotate(name + " across processes (" + comm->provider->name() + ")");
  }
  auto args = MakeArgs<TsCommunicator_Collective_Args>();
  args.communicator = comm->raw;
  args.op = op;
  args.reduce_op = reduce;
  args.dtype = dtype;
  args.count = count;
  args.root = root;
  args.deterministic = deterministic ? 1 : 0;
  args.send = send_refs.data();
  args.recv = recv_refs.data();
  args.streams = raw_streams.data();
  return TESSERA_PLUGIN_CALL(*comm->runtime->plugin, Communicator_Collective,
                             args);
}

}  // namespace
}  // namespace detail

bool PluginSpansProcesses(const Runtime& runtime) {
  if (!runtime.impl() || !runtime.impl()->lib().table().Communicator_CreateUniqueId) return false;
  if (runtime.devices().empty()) return false;
  for (const Device& d : runtime.devices())
    if (!(d.info().collectives & TS_COLLECTIVE_CAP_MULTI_PROCESS)) return false;
  return true;
}

StatusOr<Communicator> Runtime::create_communicator(
    const std::vector<Device>& devices) const {
  return CreateCommunicator(devices, nullptr);
}

StatusOr<Communicator> Runtime::CreateCommunicator(const std::vector<Device>& devices,
                                                   const AcrossProcesses* across) const {
  if (!impl_)
    return Status(StatusCode::kFailedPrecondition,
                  "create_communicator: the Runtime was not created (a default-constructed Runtime is empty): "
                  "use Runtime::Create()");
  if (devices.empty())
    return Status(StatusCode::kInvalidArgument,
                  "create_communicator: pass at least one device");
  std::vector<TsDevice*> raw;
  for (const Device& d : devices) {
    if (!d.valid() || d.impl()->runtime != impl_.get())
      return Status(StatusCode::kInvalidArgument,
                    "create_communicator: every device must come from this "
                    "Runtime's devices()");
    for (TsDevice* seen : raw)
      if (seen == d.raw())
        return Status(StatusCode::kInvalidArgument,
                      "create_communicator: device " +
                          d.impl()->Describe() + " is listed twice");
    raw.push_back(d.raw());
  }
  auto args = MakeArgs<TsCommunicator_Create_Args>();
  args.client = impl_->client;
  args.devices = raw.data();
  args.num_devices = raw.size();
  if (across) {
    args.unique_id = across->id->data();
    args.ranks = across->ranks->data();
    args.num_ranks = across->num_ranks;
  }
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Communicator_Create, args, communicator);
  if (!st.ok()) return st.Annotate("create_communicator");
  auto comm = std::make_shared<detail::CommunicatorImpl>();
  comm->runtime = impl_;
  comm->raw = args.communicator;
  comm->devices = devices;
  if (across) comm->num_ranks = across->num_ranks;
  return Communicator(std::move(comm));
}

StatusOr<Runtime::CollectiveId> Runtime::create_collective_id() const {
  if (!impl_) return Status(StatusCode::kFailedPrecondition, "create_collective_id: the Runtime is not created");
  if (!PluginSpansProcesses(*this))
    return Status(StatusCode::kUnsupported,
                  "create_collective_id: the " + backend() +
                      " plugin's communicators cannot span processes (its devices do not report "
                      "TS_COLLECTIVE_CAP_MULTI_PROCESS); use a process group's provider (tessera/mpi.hpp)");
  auto args = MakeArgs<TsCommunicator_CreateUniqueId_Args>();
  args.client = impl_->client;
  Status st = TESSERA_PLUGIN_CALL(impl_->lib(), Communicator_CreateUniqueId, args);
  if (!st.ok()) return st.Annotate("create_collective_id");
  return CollectiveId(args.unique_id, args.unique_id + TS_UNIQUE_ID_BYTES);
}

StatusOr<Communicator> Runtime::create_communicator(const std::vector<Device>& devices, uint32_t num_ranks,
                                                    const std::vector<uint32_t>& ranks,
                                                    const CollectiveId& id) const {
  if (id.size() != TS_UNIQUE_ID_BYTES)
    return Status(StatusCode::kInvalidArgument,
                  "create_communicator: the id has " + std::to_string(id.size()) + " bytes; pass the " +
                      std::to_string(TS_UNIQUE_ID_BYTES) + " of create_collective_id");
  if (ranks.size() != devices.size())
    return Status(StatusCode::kInvalidArgument,
                  "create_communicator: " + std::to_string(devices.size()) + " devices but " +
                      std::to_string(ranks.size()) + " ranks: give each device its rank");
  if (!PluginSpansProcesses(*this))
    return Status(StatusCode::kUnsupported,
                  "create_communicator: the " + backend() +
                      " plugin's communicators cannot span processes (its devices do not report "
                      "TS_COLLECTIVE_CAP_MULTI_PROCESS)");
  AcrossProcesses across{num_ranks, &ranks, &id};
  return CreateCommunicator(devices, &across);
}

Communicator Communicator::FromProvider(std::vector<Device> local_devices,
                                       std::shared_ptr<CollectiveProvider> provider) {
  auto comm = std::make_shared<detail::CommunicatorImpl>();
  if (!local_devices.empty() && local_devices[0].valid()) comm->runtime = local_devices[0].runtime().impl();
  comm->devices = std::move(local_devices);
  comm->provider = std::move(provider);
  return Communicator(std::move(comm));
}

bool Communicator::valid() const { return impl_ && impl_->Alive(); }
size_t Communicator::size() const {
  if (!impl_) return 0;
  if (impl_->provider) return impl_->provider->size();
  return impl_->num_ranks ? impl_->num_ranks : impl_->devices.size();
}
std::string Communicator::provider() const {
  return impl_ && impl_->provider ? impl_->provider->name() : std::string();
}
const std::vector<Device>& Communicator::devices() const {
  static const std::vector<Device> kNone;
  return impl_ ? impl_->devices : kNone;
}

Status Communicator::all_reduce(const MemoryRefs& send,
                                const MemoryRefs& recv,
                                uint64_t count, TsDataType dtype,
                                TsReduceOp op,
                                const std::vector<Stream>& streams,
                                bool deterministic) const {
  return detail::RunCollective(impl_.get(), TS_COLLECTIVE_ALL_REDUCE, send,
                               recv, count, dtype, op, 0, streams,
                               deterministic);
}

Status Communicator::broadcast(const MemoryRefs& send,
                               const MemoryRefs& recv, uint64_t count,
                               TsDataType dtype, uint32_t root,
                               const std::vector<Stream>& streams) const {
  return detail::RunCollective(impl_.get(), TS_COLLECTIVE_BROADCAST, send,
                               recv, count, dtype, TS_REDUCE_SUM, root,
                               streams, true);
}

Status Communicator::all_gather(const MemoryRefs& send,
                                const MemoryRefs& recv,
                                uint64_t count, TsDataType dtype,
                                const std::vector<Stream>& streams) const {
  return detail::RunCollective(impl_.get(), TS_COLLECTIVE_ALL_GATHER, send,
                               recv, count, dtype, TS_REDUCE_SUM, 0, streams,
                               true);
}

Status Communicator::reduce_scatter(const MemoryRefs& send,
                                    const MemoryRefs& recv,
                                    uint64_t count, TsDataType dtype,
                                    TsReduceOp op,
                                    const std::vector<Stream>& streams,
                                    bool deterministic) const {
  return detail::RunCollective(impl_.get(), TS_COLLECTIVE_REDUCE_SCATTER, send,
                               recv, count, dtype, op, 0, streams,
                               deterministic);
}

Status Communicator::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Communicator");
  return impl_->Release();
}

}  // namespace tessera
