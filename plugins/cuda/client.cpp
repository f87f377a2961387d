// Client_Create / Client_Destroy / Client_GetDevices: dlopen libcuda.so.1,
// cuInit, one TsDevice per CUDA device (its primary context retained), peer
// access enabled between every pair of devices that allows it.
#include <cstdio>
#include <cstring>
#include <fstream>

#include "internal.hpp"
#include "options.hpp"
#include "plugin_log.hpp"

namespace tessera::cuda {

namespace {

TsError* unavailable(const std::string& reason) {
  return make_error(TS_ERROR_UNAVAILABLE, "not available: " + reason);
}

// "NVIDIA 580.65.06" from /proc/driver/nvidia/version ("NVRM version: NVIDIA
// UNIX [Open ]Kernel Module [for x86_64]  580.65.06  Release Build ..."):
// the first word after "Kernel Module" that starts with a digit and has a
// dot.  "" when unreadable.  The driver API reports only the CUDA version
// it implements.
std::string kernel_module_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 4096) return "";
  const std::string key = "Kernel Module";
  size_t at = line.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  while (at < line.size()) {
    while (at < line.size() && line[at] == ' ') ++at;
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(at, end - at);
    if (!word.empty() && word.size() <= 32 && word[0] >= '0' && word[0] <= '9' &&
        word.find('.') != std::string::npos)
      return "NVIDIA " + word;
    at = end;
  }
  return "";
}

}  // namespace

const TsOptionInfo kClientOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "library", TS_VALUE_STRING, "libcuda.so.1",
     "the CUDA driver library to dlopen"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "nccl_library", TS_VALUE_STRING, "libnccl.so.2",
     "the NCCL library to dlopen for collectives (empty: stage them through the host)"},
};
const size_t kNumClientOptions = sizeof(kClientOptions) / sizeof(kClientOptions[0]);

TS_CU_ENTRY(Client_Create, TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE) {
  plugin_support::OptionValues options;
  if (TS_FIELD_PRESENT(args, TsClient_Create_Args, num_options))
    if (TsError* e = plugin_support::ParseOptions("cuda", "Client_Create", kClientOptions,
                                                  kNumClientOptions, args->options,
                                                  args->num_options, &options))
      return e;
  auto c = std::make_unique<TsClient>();
  const std::string library = options.String("library", "libcuda.so.1");
  c->nccl.Configure(options.String("nccl_library", "libnccl.so.2"), "NCCL");
  std::string reason;
  if (!c->fn.Open(library.c_str(), &reason)) return unavailable(reason);
  CudaFns& fn = c->fn;
  // cuDriverGetVersion works before cuInit.
  if (fn.cuDriverGetVersion(&c->driver_version) != CUDA_SUCCESS) c->driver_version = 0;
  if (c->driver_version < kMinDriverVersion)
    return unavailable("the NVIDIA driver implements CUDA " +
                       driver_version_text(c->driver_version) +
                       "; the cuda plugin needs CUDA " +
                       driver_version_text(kMinDriverVersion) + " or later");
  CUresult r = fn.cuInit(0);
  if (r != CUDA_SUCCESS) {
    TsError* e = cu_error(&fn, r, "cuInit", c->driver_version, 0, 0);
    std::string m = e->message;
    destroy_error(e);
    return unavailable(m.substr(m.rfind("cuda: ", 0) == 0 ? 6 : 0));
  }
  int count = 0;
  r = fn.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    TsError* e = cu_error(&fn, r, "cuDeviceGetCount", c->driver_version, 0, 0);
    std::string m = e->message;
    destroy_error(e);
    return unavailable(m);
  }
  if (count <= 0) return unavailable("the NVIDIA driver found no CUDA device");
  if (count > 1024) count = 1024;  // bound what the driver says
  c->driver_text = kernel_module_version();
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<TsDevice> d;
    TS_CU_RETURN_IF_ERROR(create_device(c.get(), i, &d));
    c->device_list.push_back(d.get());
    c->devices.push_back(std::move(d));
  }
  // Peer access, both directions, where the hardware allows it; copies
  // between other pairs go through the host (cuMemcpyPeerAsync stages them).
  for (auto& a : c->devices) a->peer_access.assign(c->devices.size(), 0);
  for (auto& a : c->devices) {
    TS_CU_RETURN_IF_ERROR(bind(a.get()));
    for (auto& b : c->devices) {
      if (a == b) continue;
      int can = 0;
      if (fn.cuDeviceCanAccessPeer(&can, a->cu, b->cu) != CUDA_SUCCESS || !can) continue;
      r = fn.cuCtxEnablePeerAccess(b->ctx, 0);
      if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        a->peer_access[b->ordinal] = 1;
    }
  }
  // NCCL now (not at the first communicator): whether it loads decides
  // TS_COLLECTIVE_CAP_MULTI_PROCESS, which the properties report.
  {
    std::string no_nccl;
    if (!c->nccl.Get(&no_nccl))
      plugin_support::LogDebug("cuda: collectives staged through host memory: " + no_nccl);
  }
  for (auto& d : c->devices) fill_properties(d.get());
  args->client = c.release();
  return nullptr;
}

}  // namespace tessera::cuda

TsClient::~TsClient() {
  devices.clear();  // each releases its primary context
  device_list.clear();
  fn.Close();
}

namespace tessera::cuda {

TS_CU_ENTRY(Client_Destroy, TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->client, "Client_Destroy", "client");
  TsClient* c = args->client;
  // What the caller left behind, through the entry points it would have
  // called (each waits for the work it needs to), streams last: graphs and
  // events may refer to them, buffers and executables to nothing else.
  using plugin_support::destroy_leftovers;
  for (auto& d : c->devices)
    plugin_support::destroy_device_leftovers(*d, destroy_error, GraphExec_Destroy, Graph_Destroy, Event_Destroy, Executable_Destroy,
                                             Buffer_Free);
  destroy_leftovers(c->live_communicators, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE,
                    &TsCommunicator_Destroy_Args::communicator, Communicator_Destroy, destroy_error);
  for (auto& d : c->devices) {
    if (TsError* e = synchronize_device(d.get())) destroy_error(e);
    // Streams the caller left behind.
    std::lock_guard<std::mutex> lk(d->mu);
    for (TsStream* s : d->streams) {
      if (bind(d.get()) == nullptr) c->fn.cuStreamDestroy(s->stream);
      s->magic = kMagicDead;
      delete s;
    }
    d->streams.clear();
  }
  // Pinned host memory still allocated or registered (the primary contexts
  // are released next, which would drop it anyway).
  if (!c->devices.empty() && bind(c->devices.front().get()) == nullptr) {
    for (auto& [p, n] : c->host_allocated) c->fn.cuMemFreeHost(reinterpret_cast<void*>(p));
    for (auto& [p, n] : c->host_registered)
      c->fn.cuMemHostUnregister(reinterpret_cast<void*>(p));
  }
  c->host_allocated.clear();
  c->host_registered.clear();
  c->magic = kMagicDead;
  delete c;
  return nullptr;
}

TS_CU_ENTRY(Client_GetDevices, TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->client, "Client_GetDevices", "client");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

}  // namespace tessera::cuda
