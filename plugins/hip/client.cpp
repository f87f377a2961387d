// Client_Create / Client_Destroy / Client_GetDevices: dlopen
// libamdhip64.so.5, hipGetDeviceCount (which initializes the runtime),
// hipInit, one TsDevice per HIP device, peer access enabled
// (hipDeviceEnablePeerAccess) between every pair that allows it.
#include <cstdio>
#include <cstring>
#include <fstream>

#include "internal.hpp"
#include "options.hpp"
#include "plugin_log.hpp"

namespace tessera::hip {

namespace {

TsError* unavailable(const std::string& reason) {
  return make_error(TS_ERROR_UNAVAILABLE, "not available: " + reason);
}

// The message of a failed call without the "hip: " prefix, for
// "not available: hipGetDeviceCount failed: hipErrorNoDevice: ...".
std::string call_failure(const HipFns& fn, hipError_t r, const char* call) {
  TsError* e = hip_error(&fn, r, call);
  std::string m = e->message;
  destroy_error(e);
  return m.rfind("hip: ", 0) == 0 ? m.substr(5) : m;
}

// "amdgpu 6.3.6" from /sys/module/amdgpu/version (the DKMS driver writes
// it; the in-tree driver does not): "" when unreadable.
std::string kernel_driver_version() {
  std::ifstream in("/sys/module/amdgpu/version");
  std::string line;
  if (!in || !std::getline(in, line) || line.empty() || line.size() > 64) return "";
  for (char ch : line)
    if (ch < 0x20 || ch > 0x7e) return "";
  return "amdgpu " + line;
}

}  // namespace

const TsOptionInfo kClientOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "library", TS_VALUE_STRING, kDefaultLibrary,
     "the HIP runtime library to dlopen"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "rccl_library", TS_VALUE_STRING, "librccl.so.1",
     "the RCCL library to dlopen for collectives (empty: stage them through the host)"},
};
const size_t kNumClientOptions = sizeof(kClientOptions) / sizeof(kClientOptions[0]);

TS_HIP_ENTRY(Client_Create, TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE) {
  plugin_support::OptionValues options;
  if (TS_FIELD_PRESENT(args, TsClient_Create_Args, num_options))
    if (TsError* e = plugin_support::ParseOptions("hip", "Client_Create", kClientOptions,
                                                  kNumClientOptions, args->options,
                                                  args->num_options, &options))
      return e;
  auto c = std::make_unique<TsClient>();
  const std::string library = options.String("library", kDefaultLibrary);
  c->nccl.Configure(options.String("rccl_library", "librccl.so.1"), "RCCL");
  std::string reason;
  if (!c->fn.Open(library.c_str(), &reason)) return unavailable(reason);
  HipFns& fn = c->fn;
  if (fn.hipRuntimeGetVersion(&c->runtime_version) != hipSuccess) c->runtime_version = 0;
  // hipGetDeviceCount initializes the runtime; without a GPU (or without
  // access to /dev/kfd) it fails with hipErrorNoDevice.
  int count = 0;
  hipError_t r = fn.hipGetDeviceCount(&count);
  if (r != hipSuccess) return unavailable(call_failure(fn, r, "hipGetDeviceCount"));
  if (count <= 0) return unavailable("the HIP runtime found no AMD GPU");
  r = fn.hipInit(0);
  if (r != hipSuccess) return unavailable(call_failure(fn, r, "hipInit"));
  if (count > kMaxDevices) count = kMaxDevices;  // bound what the runtime says
  c->driver_text = kernel_driver_version();
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<TsDevice> d;
    TS_HIP_RETURN_IF_ERROR(create_device(c.get(), i, &d));
    c->device_list.push_back(d.get());
    c->devices.push_back(std::move(d));
  }
  // Peer access where the hardware allows it (hipDeviceEnablePeerAccess
  // works in one direction: from the current device to the peer).  Copies
  // between other pairs are staged through the host by the plugin
  // (copy.cpp).
  for (auto& a : c->devices) a->peer_access.assign(c->devices.size(), 0);
  for (auto& a : c->devices) {
    TS_HIP_RETURN_IF_ERROR(bind(a.get()));
    for (auto& b : c->devices) {
      if (a == b) continue;
      int can = 0;
      if (fn.hipDeviceCanAccessPeer(&can, a->ordinal, b->ordinal) != hipSuccess || !can)
        continue;
      r = fn.hipDeviceEnablePeerAccess(b->ordinal, 0);
      if (r == hipSuccess || r == hipErrorPeerAccessAlreadyEnabled)
        a->peer_access[static_cast<size_t>(b->ordinal)] = 1;
    }
  }
  // RCCL now (not at the first communicator): whether it loads decides
  // TS_COLLECTIVE_CAP_MULTI_PROCESS, which the properties report.
  {
    std::string no_rccl;
    if (!c->nccl.Get(&no_rccl))
      plugin_support::LogDebug("hip: collectives staged through host memory: " + no_rccl);
  }
  for (auto& d : c->devices) fill_properties(d.get());
  args->client = c.release();
  return nullptr;
}

}  // namespace tessera::hip

TsClient::~TsClient() {
  devices.clear();
  device_list.clear();
  fn.Close();
}

namespace tessera::hip {

TS_HIP_ENTRY(Client_Destroy, TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Client_Destroy", "client");
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
      if (bind(d.get()) == nullptr) (void)c->fn.hipStreamDestroy(s->stream);
      s->magic = kMagicDead;
      delete s;
    }
    d->streams.clear();
  }
  // Pinned host memory still allocated or registered.  No hipDeviceReset:
  // it would tear the device down for every other user in the process.
  if (!c->devices.empty() && bind(c->devices.front().get()) == nullptr) {
    for (auto& [p, n] : c->host_allocated) (void)c->fn.hipHostFree(reinterpret_cast<void*>(p));
    for (auto& [p, n] : c->host_registered)
      (void)c->fn.hipHostUnregister(reinterpret_cast<void*>(p));
  }
  c->host_allocated.clear();
  c->host_registered.clear();
  c->magic = kMagicDead;
  delete c;
  return nullptr;
}

TS_HIP_ENTRY(Client_GetDevices, TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->client, "Client_GetDevices", "client");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

}  // namespace tessera::hip
