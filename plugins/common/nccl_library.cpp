#include "nccl_library.hpp"

#include <dlfcn.h>

#include <cstring>

#include "host_reduce.hpp"
#include "plugin_log.hpp"
#include "plugin_support.hpp"

namespace tessera::plugin_support {

namespace {

// nccl.h's values (ncclDataType_t, ncclRedOp_t, ncclResult_t).
enum : int {
  kNcclInt8 = 0, kNcclUint8 = 1, kNcclInt32 = 2, kNcclInt64 = 4,
  kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclFloat64 = 8, kNcclBfloat16 = 9
};
enum : int { kNcclSum = 0, kNcclProd = 1, kNcclMax = 2, kNcclMin = 3 };
enum : int {
  kNcclSuccess = 0, kNcclUnhandledCudaError = 1, kNcclSystemError = 2, kNcclInternalError = 3,
  kNcclInvalidArgument = 4, kNcclInvalidUsage = 5, kNcclRemoteError = 6, kNcclInProgress = 7
};

// NCCL_VERSION(2, 10, 0): the first with ncclBfloat16.
constexpr int kFirstBf16Version = 21000;

const char* CollectiveName(TsCollectiveOp op) {
  switch (op) {
    case TS_COLLECTIVE_ALL_REDUCE: return "ncclAllReduce";
    case TS_COLLECTIVE_BROADCAST: return "ncclBroadcast";
    case TS_COLLECTIVE_ALL_GATHER: return "ncclAllGather";
    case TS_COLLECTIVE_REDUCE_SCATTER: return "ncclReduceScatter";
  }
  return "nccl?";
}

}  // namespace

std::string NcclVersionText(int code) {
  if (code <= 0) return "(unknown version)";
  int major, minor, patch;
  if (code >= 20900) {
    major = code / 10000;
    minor = code % 10000 / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = code % 1000 / 100;
    patch = code % 100;
  }
  return strprintf("%d.%d.%d", major, minor, patch);
}

bool NcclDataType(TsDataType dtype, int code, int* out) {
  switch (dtype) {
    case TS_DTYPE_F32: *out = kNcclFloat32; return true;
    case TS_DTYPE_F64: *out = kNcclFloat64; return true;
    case TS_DTYPE_I32: *out = kNcclInt32; return true;
    case TS_DTYPE_I64: *out = kNcclInt64; return true;
    case TS_DTYPE_F16: *out = kNcclFloat16; return true;
    case TS_DTYPE_BF16:
      if (code < kFirstBf16Version) return false;
      *out = kNcclBfloat16;
      return true;
    case TS_DTYPE_I8: *out = kNcclInt8; return true;
    case TS_DTYPE_U8: *out = kNcclUint8; return true;
  }
  return false;
}

int NcclReduceOp(TsReduceOp op) {
  switch (op) {
    case TS_REDUCE_SUM: return kNcclSum;
    case TS_REDUCE_PROD: return kNcclProd;
    case TS_REDUCE_MAX: return kNcclMax;
    case TS_REDUCE_MIN: return kNcclMin;
  }
  return kNcclSum;  // unreachable: CheckCollective refused other values
}

TsErrorCode NcclErrorCode(NcclResult result) {
  switch (result) {
    case kNcclInvalidArgument: return TS_ERROR_INVALID_ARGUMENT;
    case kNcclInvalidUsage: return TS_ERROR_FAILED_PRECONDITION;
    case kNcclRemoteError: return TS_ERROR_UNAVAILABLE;  // a peer or the network failed
    case kNcclSystemError: return TS_ERROR_RESOURCE_EXHAUSTED;  // memory, sockets, shm
    case kNcclUnhandledCudaError:
    case kNcclInternalError:
    case kNcclInProgress:  // blocking communicators never answer it
    default: return TS_ERROR_INTERNAL;
  }
}

std::unique_ptr<NcclLibrary> NcclLibrary::Open(const std::string& path, const char* vendor,
                                               std::string* reason) {
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary());
  lib->vendor_ = vendor;
  lib->path_ = path;
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = dlerror();
    *reason = err ? err : path + ": dlopen failed";
    return nullptr;
  }
  NcclFns& f = lib->fn_;
  // Each required entry point, by name; the first one missing is the reason.
#define TS_NCCL_REQUIRED(name)                                                        \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(lib->handle_, #name));            \
  if (!f.name) {                                                                      \
    *reason = path + " does not provide " #name " (is it " + lib->vendor_ + "?)";     \
    return nullptr;                                                                   \
  }
  TS_NCCL_REQUIRED(ncclGetVersion)
  TS_NCCL_REQUIRED(ncclCommInitAll)
  TS_NCCL_REQUIRED(ncclGetUniqueId)
  TS_NCCL_REQUIRED(ncclCommInitRank)
  TS_NCCL_REQUIRED(ncclCommDestroy)
  TS_NCCL_REQUIRED(ncclCommGetAsyncError)
  TS_NCCL_REQUIRED(ncclGetErrorString)
  TS_NCCL_REQUIRED(ncclAllReduce)
  TS_NCCL_REQUIRED(ncclBroadcast)
  TS_NCCL_REQUIRED(ncclAllGather)
  TS_NCCL_REQUIRED(ncclReduceScatter)
  TS_NCCL_REQUIRED(ncclGroupStart)
  TS_NCCL_REQUIRED(ncclGroupEnd)
#undef TS_NCCL_REQUIRED
  f.ncclGetLastError = reinterpret_cast<decltype(f.ncclGetLastError)>(
      dlsym(lib->handle_, "ncclGetLastError"));
  int code = 0;
  NcclResult r = f.ncclGetVersion(&code);
  if (r != kNcclSuccess || code <= 0) {
    *reason = path + ": ncclGetVersion failed (" + std::to_string(r) + ")";
    return nullptr;
  }
  lib->version_ = code;
  return lib;
}

NcclLibrary::~NcclLibrary() {
  if (handle_) dlclose(handle_);
}

std::string NcclLibrary::description() const {
  return vendor_ + " " + NcclVersionText(version_) + " (" + path_ + ")";
}

bool NcclLibrary::Supports(TsDataType dtype) const {
  int t = 0;
  return NcclDataType(dtype, version_, &t);
}

TsError* NcclLibrary::Error(const char* plugin, const std::string& call, NcclResult result,
                            NcclComm comm) const {
  const char* text = fn_.ncclGetErrorString ? fn_.ncclGetErrorString(result) : nullptr;
  const char* last = fn_.ncclGetLastError ? fn_.ncclGetLastError(comm) : nullptr;
  std::string m = strprintf("%s: %s: %s error %d: %s", plugin, call.c_str(), vendor_.c_str(),
                            result, text ? text : "(no text)");
  // The last error is often the useful part ("Cuda failure 'out of memory'").
  if (last && *last) m += std::string(" (") + last + ")";
  return make_error(NcclErrorCode(result), m);
}

TsError* NcclLibrary::InitAll(const char* plugin, const std::vector<int>& ordinals,
                              std::vector<NcclComm>* comms) const noexcept {
  return guard(plugin, "Communicator_Create", [&]() -> TsError* {
    comms->assign(ordinals.size(), nullptr);
    NcclResult r = fn_.ncclCommInitAll(comms->data(), static_cast<int>(ordinals.size()),
                                       ordinals.data());
    if (r != kNcclSuccess) {
      comms->clear();
      return Error(plugin, strprintf("ncclCommInitAll(ndev=%zu)", ordinals.size()), r, nullptr);
    }
    for (NcclComm c : *comms)
      if (!c) {
        comms->clear();
        return errorf(TS_ERROR_INTERNAL, "%s: ncclCommInitAll succeeded but returned no communicator",
                      plugin);
      }
    return nullptr;
  });
}

TsError* NcclLibrary::UniqueId(const char* plugin, uint8_t out[128]) const noexcept {
  static_assert(sizeof(NcclUniqueId) == 128, "ncclUniqueId is 128 bytes");
  NcclUniqueId id{};
  NcclResult r = fn_.ncclGetUniqueId(&id);
  if (r != kNcclSuccess) return Error(plugin, "ncclGetUniqueId", r, nullptr);
  std::memcpy(out, id.internal, sizeof id.internal);
  return nullptr;
}

TsError* NcclLibrary::InitRanks(const char* plugin, const uint8_t* id_bytes, uint32_t num_ranks,
                                const std::vector<uint32_t>& ranks,
                                const std::function<TsError*(size_t)>& bind,
                                std::vector<NcclComm>* comms) const noexcept {
  return guard(plugin, "Communicator_Create", [&]() -> TsError* {
    NcclUniqueId id;
    std::memcpy(id.internal, id_bytes, sizeof id.internal);
    comms->assign(ranks.size(), nullptr);
    NcclResult r = fn_.ncclGroupStart();
    if (r != kNcclSuccess) {
      comms->clear();
      return Error(plugin, "ncclGroupStart", r, nullptr);
    }
    TsError* failed = nullptr;
    for (size_t i = 0; i < ranks.size() && !failed; ++i) {
      if ((failed = bind(i))) break;
      r = fn_.ncclCommInitRank(&(*comms)[i], static_cast<int>(num_ranks), id, static_cast<int>(ranks[i]));
      if (r != kNcclSuccess)
        failed = Error(plugin, strprintf("ncclCommInitRank(nranks=%u, rank=%u)", num_ranks, ranks[i]), r, nullptr);
    }
    r = fn_.ncclGroupEnd();
    if (!failed && r != kNcclSuccess)
      failed = Error(plugin, strprintf("ncclCommInitRank(nranks=%u): ncclGroupEnd", num_ranks), r, nullptr);
    if (!failed)
      for (NcclComm c : *comms)
        if (!c) failed = errorf(TS_ERROR_INTERNAL, "%s: ncclCommInitRank succeeded but returned no communicator", plugin);
    if (failed) DestroyAll(comms);
    return failed;
  });
}

void NcclLibrary::DestroyAll(std::vector<NcclComm>* comms) const noexcept {
  for (NcclComm c : *comms)
    if (c) fn_.ncclCommDestroy(c);  // nothing to do on failure: the comm is gone either way
  comms->clear();
}

TsError* NcclLibrary::Run(const char* plugin, const TsCommunicator_Collective_Args* args,
                          const CollectiveShape& shape, const std::vector<NcclComm>& comms,
                          const std::vector<RankPart>& parts) const noexcept {
  if (comms.size() != parts.size() || comms.empty())
    return errorf(TS_ERROR_INTERNAL, "%s: collective: %zu communicators for %zu ranks", plugin,
                  comms.size(), parts.size());
  int dtype = 0;
  if (!NcclDataType(args->dtype, version_, &dtype))
    return errorf(TS_ERROR_UNSUPPORTED, "%s: collective: %s %s has no type for TsDataType %d", plugin,
                  vendor_.c_str(), NcclVersionText(version_).c_str(), static_cast<int>(args->dtype));
  // A communicator whose earlier work failed stays failed: say so before
  // queueing more on it.
  for (size_t r = 0; r < comms.size(); ++r) {
    NcclResult async = kNcclSuccess;
    NcclResult q = fn_.ncclCommGetAsyncError(comms[r], &async);
    if (q != kNcclSuccess) return Error(plugin, "ncclCommGetAsyncError", q, comms[r]);
    if (async != kNcclSuccess && async != kNcclInProgress)
      return Error(plugin, strprintf("an earlier collective on rank %zu failed; destroy the communicator", r),
                   async, comms[r]);
  }
  const int op = NcclReduceOp(args->reduce_op);
  const char* call = CollectiveName(args->op);
  NcclResult r = fn_.ncclGroupStart();
  if (r != kNcclSuccess) return Error(plugin, "ncclGroupStart", r, nullptr);
  // After a rank's call fails the later ranks are not queued, but the group
  // is still ended (an open group must be closed; NCCL then drops it).
  NcclResult first = kNcclSuccess;
  size_t failed_rank = 0;
  for (size_t k = 0; k < comms.size() && first == kNcclSuccess; ++k) {
    const RankPart& p = parts[k];
    switch (args->op) {
      case TS_COLLECTIVE_ALL_REDUCE:
        r = fn_.ncclAllReduce(p.send, p.recv, shape.recv_elems, dtype, op, comms[k], p.stream);
        break;
      case TS_COLLECTIVE_BROADCAST:
        r = fn_.ncclBroadcast(p.send, p.recv, shape.recv_elems, dtype, static_cast<int>(args->root),
                              comms[k], p.stream);
        break;
      case TS_COLLECTIVE_ALL_GATHER:
        r = fn_.ncclAllGather(p.send, p.recv, shape.send_elems, dtype, comms[k], p.stream);
        break;
      case TS_COLLECTIVE_REDUCE_SCATTER:
        r = fn_.ncclReduceScatter(p.send, p.recv, shape.recv_elems, dtype, op, comms[k], p.stream);
        break;
    }
    if (r != kNcclSuccess) {
      first = r;
      failed_rank = k;
    }
  }
  NcclResult end = fn_.ncclGroupEnd();
  if (first != kNcclSuccess)
    return Error(plugin, strprintf("%s (rank %zu)", call, failed_rank), first, comms[failed_rank]);
  if (end != kNcclSuccess) return Error(plugin, strprintf("%s: ncclGroupEnd", call), end, nullptr);
  return nullptr;
}

TsError* NcclLibrary::RunDeterministic(const char* plugin, const TsCommunicator_Collective_Args* args,
                                        const CollectiveShape& shape, const std::vector<NcclComm>& comms,
                                        const std::vector<RankPart>& parts, size_t total,
                                        const uint32_t* rank_of, const DeviceIo& io) const noexcept {
  return guard(plugin, "Communicator_Collective", [&]() -> TsError* {
    if (args->op != TS_COLLECTIVE_ALL_REDUCE && args->op != TS_COLLECTIVE_REDUCE_SCATTER)
      return Run(plugin, args, shape, comms, parts);  // exact whatever the algorithm
    int dtype = 0;
    if (!NcclDataType(args->dtype, version_, &dtype))
      return errorf(TS_ERROR_UNSUPPORTED, "%s: collective: %s has no type for TsDataType %d", plugin,
                    vendor_.c_str(), static_cast<int>(args->dtype));
    const size_t L = comms.size();
    const uint64_t send_bytes = shape.send_elems * shape.elem_size;
    const uint64_t result_bytes = args->count * shape.elem_size;
    // Scratch: every rank's send, rank-major.
    std::vector<void*> gathered(L, nullptr);
    struct Release {
      const DeviceIo& io;
      std::vector<void*>& p;
      ~Release() {
        for (size_t r = 0; r < p.size(); ++r)
          if (p[r]) io.free(r, p[r]);
      }
    } release{io, gathered};
    for (size_t r = 0; r < L; ++r)
      if (TsError* e = io.alloc(r, send_bytes * total, &gathered[r])) return e;
    NcclResult res = fn_.ncclGroupStart();
    if (res != kNcclSuccess) return Error(plugin, "ncclGroupStart", res, nullptr);
    NcclResult first = kNcclSuccess;
    size_t failed_rank = 0;
    for (size_t r = 0; r < L && first == kNcclSuccess; ++r) {
      res = fn_.ncclAllGather(parts[r].send, gathered[r], shape.send_elems, dtype, comms[r], parts[r].stream);
      if (res != kNcclSuccess) {
        first = res;
        failed_rank = r;
      }
    }
    const NcclResult end = fn_.ncclGroupEnd();
    if (first != kNcclSuccess)
      return Error(plugin, strprintf("ncclAllGather (deterministic, rank %zu)", failed_rank), first,
                   comms[failed_rank]);
    if (end != kNcclSuccess) return Error(plugin, "ncclAllGather (deterministic): ncclGroupEnd", end, nullptr);
    // Every local rank gathered the same bytes; read one, wait for all.
    std::vector<uint8_t> all(send_bytes * total), out(result_bytes);
    if (TsError* e = io.read(0, gathered[0], all.data(), all.size())) return e;
    for (size_t r = 1; r < L; ++r)
      if (TsError* e = io.read(r, gathered[r], out.data(), 0)) return e;
    std::vector<uint32_t> order(total);
    for (size_t q = 0; q < total; ++q) order[q] = static_cast<uint32_t>(q);
    std::vector<const void*> in(total);
    for (size_t r = 0; r < L; ++r) {
      // reduce_scatter: rank g gets segment g of every rank's send.
      const uint64_t at = args->op == TS_COLLECTIVE_REDUCE_SCATTER ? rank_of[r] * result_bytes : 0;
      if (r == 0 || args->op == TS_COLLECTIVE_REDUCE_SCATTER) {
        for (size_t q = 0; q < total; ++q) in[q] = all.data() + q * send_bytes + at;
        host_reduce(args->dtype, args->reduce_op, in, order, true, args->count, out.data());
      }
      if (TsError* e = io.write(r, parts[r].recv, out.data(), result_bytes)) return e;
    }
    return nullptr;
  });
}

TsError* RunNcclCollective(const char* plugin, const NcclLibrary* lib, NcclCommunicator& comm,
                           const TsCommunicator_Collective_Args* args, size_t n,
                           const StagedCollectiveHooks& hooks,
                           const std::function<void*(const TsMemoryRef&)>& address,
                           const std::function<void*(size_t)>& stream,
                           const std::function<NcclLibrary::DeviceIo()>& device_io) noexcept {
  const bool across = comm.num_ranks != 0;
  // Deterministic calls take the fixed tree: NCCL's result depends on the
  // algorithm it picks (ring, tree) for the size and topology.
  if (!across && (comm.comms.empty() || !lib || args->deterministic || !lib->Supports(args->dtype)))
    return RunStagedCollective(args, n, hooks);
  CollectiveShape shape;
  if (TsError* e = CheckCollective(args, n, hooks, &shape, comm.num_ranks, across ? comm.ranks.data() : nullptr))
    return e;
  if (!lib)  // unreachable: a communicator across processes was made by the library
    return errorf(TS_ERROR_INTERNAL, "%s: collective across processes without a collective library", plugin);
  if (!lib->Supports(args->dtype))
    return errorf(TS_ERROR_UNSUPPORTED, "%s: collective across processes: %s has no type for TsDataType %d",
                  plugin, lib->description().c_str(), static_cast<int>(args->dtype));
  return guard(plugin, "Communicator_Collective", [&]() -> TsError* {
    std::vector<NcclLibrary::RankPart> parts(n);
    for (size_t r = 0; r < n; ++r) {
      // A broadcast reads send[root] only; the others' may be null.
      const uint32_t rank = across ? comm.ranks[r] : static_cast<uint32_t>(r);
      if (args->op != TS_COLLECTIVE_BROADCAST || rank == args->root) parts[r].send = address(args->send[r]);
      parts[r].recv = address(args->recv[r]);
      parts[r].stream = stream(r);
    }
    std::lock_guard<std::mutex> lock(comm.mu);
    if (across && args->deterministic)
      return lib->RunDeterministic(plugin, args, shape, comm.comms, parts, comm.num_ranks, comm.ranks.data(),
                                   device_io());
    return lib->Run(plugin, args, shape, comm.comms, parts);
  });
}

const NcclLibrary* NcclLoader::Get(std::string* why_not) {
  std::call_once(once_, [&] {
    if (path_.empty()) {
      why_not_ = std::string("the ") + vendor_ + " library option is empty";
      return;
    }
    lib_ = NcclLibrary::Open(path_, vendor_, &why_not_);
  });
  if (!lib_) *why_not = why_not_;
  return lib_.get();
}

std::vector<NcclComm> NcclLoader::CommsFor(const char* plugin, const std::vector<int>& ordinals) {
  std::string why_not;
  const NcclLibrary* lib = Get(&why_not);
  std::vector<NcclComm> comms;
  if (!lib) {
    LogDebug(strprintf("%s: collectives staged through host memory: %s", plugin, why_not.c_str()));
    return comms;
  }
  TsError* e = lib->InitAll(plugin, ordinals, &comms);
  if (!e) {
    LogDebug(strprintf("%s: a communicator of %zu devices over %s", plugin, ordinals.size(),
                       lib->description().c_str()));
    return comms;
  }
  std::string m = e->message;
  const std::string prefix = std::string(plugin) + ": ";
  if (m.rfind(prefix, 0) == 0) m.erase(0, prefix.size());
  TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  Error_Destroy(&a);
  if (!warned_.exchange(true))
    LogWarning(strprintf("%s: collectives staged through host memory, because %s failed: %s", plugin,
                         lib->description().c_str(), m.c_str()));
  return comms;
}

}  // namespace tessera::plugin_support
