// Client_Create / Client_Destroy / Client_GetDevices: dlopen
// libze_loader.so.1, zeInit(GPU only), the first driver that has a GPU
// (zeDriverGet, zeDeviceGet), one zeContext for all its devices, one
// TsDevice per root device, peer access from zeDeviceCanAccessPeer.
#include <cstring>

#include "internal.hpp"
#include "options.hpp"

namespace tessera::level_zero {

namespace {

TsError* unavailable(const std::string& reason) {
  return make_error(TS_ERROR_UNAVAILABLE, "not available: " + reason);
}

// The message of a failed call without the "level_zero: " prefix (the core
// prefixes the plugin's name to "not available").
std::string call_failure(const ZeFns& fn, ze_driver_handle_t drv, ze_result_t r,
                         const std::string& call) {
  TsError* e = ze_error(&fn, drv, r, call);
  std::string m = e->message;
  destroy_error(e);
  const std::string prefix = "level_zero: ";
  return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
}

}  // namespace

const TsOptionInfo kClientOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "library", TS_VALUE_STRING, "libze_loader.so.1",
     "the Level Zero loader to dlopen"},
};
const size_t kNumClientOptions = sizeof(kClientOptions) / sizeof(kClientOptions[0]);

TS_ZE_ENTRY(Client_Create, TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE) {
  plugin_support::OptionValues options;
  if (TS_FIELD_PRESENT(args, TsClient_Create_Args, num_options))
    if (TsError* e = plugin_support::ParseOptions("level_zero", "Client_Create", kClientOptions,
                                                  kNumClientOptions, args->options,
                                                  args->num_options, &options))
      return e;
  auto c = std::make_unique<TsClient>();
  const std::string library = options.String("library", "libze_loader.so.1");
  std::string reason;
  if (!c->fn.Open(library.c_str(), &reason)) return unavailable(reason);
  const ZeFns& fn = c->fn;
  ze_result_t r = fn.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (r != ZE_RESULT_SUCCESS) return unavailable(call_failure(fn, nullptr, r, "zeInit"));
  uint32_t num_drivers = 0;
  r = fn.zeDriverGet(&num_drivers, nullptr);
  if (r != ZE_RESULT_SUCCESS) return unavailable(call_failure(fn, nullptr, r, "zeDriverGet"));
  if (num_drivers == 0)
    return unavailable("zeInit succeeded but the Level Zero loader found no driver");
  num_drivers = std::min(num_drivers, kMaxDrivers);
  std::vector<ze_driver_handle_t> drivers(num_drivers);
  r = fn.zeDriverGet(&num_drivers, drivers.data());
  if (r != ZE_RESULT_SUCCESS) return unavailable(call_failure(fn, nullptr, r, "zeDriverGet"));
  drivers.resize(std::min<size_t>(num_drivers, drivers.size()));
  // The first driver with a GPU; its devices share one context.
  std::vector<ze_device_handle_t> gpus;
  for (ze_driver_handle_t d : drivers) {
    uint32_t n = 0;
    if (fn.zeDeviceGet(d, &n, nullptr) != ZE_RESULT_SUCCESS || n == 0) continue;
    n = std::min(n, kMaxDevices);
    std::vector<ze_device_handle_t> devs(n);
    if (fn.zeDeviceGet(d, &n, devs.data()) != ZE_RESULT_SUCCESS) continue;
    devs.resize(std::min<size_t>(n, devs.size()));
    for (ze_device_handle_t dev : devs) {
      ze_device_properties_t p{};
      p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      if (fn.zeDeviceGetProperties(dev, &p) == ZE_RESULT_SUCCESS && p.type == ZE_DEVICE_TYPE_GPU)
        gpus.push_back(dev);
    }
    if (!gpus.empty()) {
      c->driver = d;
      break;
    }
  }
  if (!c->driver)
    return unavailable("the Level Zero drivers (" + std::to_string(drivers.size()) +
                       ") report no GPU device");
  if (fn.zeDriverGetApiVersion(c->driver, reinterpret_cast<ze_api_version_t*>(&c->api_version)) !=
      ZE_RESULT_SUCCESS)
    c->api_version = ZE_API_VERSION_1_0;
  ze_driver_properties_t dp{};
  dp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  if (fn.zeDriverGetProperties(c->driver, &dp) == ZE_RESULT_SUCCESS)
    c->driver_version = dp.driverVersion;
  // Intel's host-pointer import (Host_Register); absent elsewhere.
  void* f = nullptr;
  if (fn.zeDriverGetExtensionFunctionAddress(c->driver, "zexDriverImportExternalPointer", &f) ==
          ZE_RESULT_SUCCESS &&
      f) {
    void* g = nullptr;
    if (fn.zeDriverGetExtensionFunctionAddress(c->driver, "zexDriverReleaseImportedPointer",
                                               &g) == ZE_RESULT_SUCCESS &&
        g) {
      c->import_pointer = reinterpret_cast<ZexDriverImportExternalPointerFn>(f);
      c->release_pointer = reinterpret_cast<ZexDriverReleaseImportedPointerFn>(g);
    }
  }
  ze_context_desc_t cd{};
  cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  r = fn.zeContextCreate(c->driver, &cd, &c->context);
  if (r != ZE_RESULT_SUCCESS) return ze_error(&fn, c->driver, r, "zeContextCreate");
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::unique_ptr<TsDevice> d;
    TS_ZE_RETURN_IF_ERROR(create_device(c.get(), gpus[i], static_cast<uint32_t>(i), &d));
    c->device_list.push_back(d.get());
    c->devices.push_back(std::move(d));
  }
  for (auto& a : c->devices) {
    a->peer_access.assign(c->devices.size(), 0);
    for (auto& b : c->devices) {
      ze_bool_t can = 0;
      if (a == b) {
        a->peer_access[b->ordinal] = 1;
        continue;
      }
      if (fn.zeDeviceCanAccessPeer(a->ze, b->ze, &can) == ZE_RESULT_SUCCESS && can)
        a->peer_access[b->ordinal] = 1;
    }
  }
  for (auto& d : c->devices) fill_properties(d.get());
  args->client = c.release();
  return nullptr;
}

}  // namespace tessera::level_zero

TsClient::~TsClient() {
  devices.clear();  // streams, event pools, staging buffers
  device_list.clear();
  if (context && fn.zeContextDestroy) fn.zeContextDestroy(context);
  fn.Close();
}

namespace tessera::level_zero {

TS_ZE_ENTRY(Client_Destroy, TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Client_Destroy", "client");
  TsClient* c = args->client;
  // Captures still open produce no graph (their streams go below).
  for (auto& d : c->devices) {
    std::lock_guard<std::mutex> lk(d->mu);
    for (TsStream* s : d->streams) abandon_capture_locked(s);
  }
  // What the caller left behind, through the entry points it would have
  // called (each waits for the work it needs to), streams last: graphs and
  // events may refer to them, buffers and executables to nothing else.
  using plugin_support::destroy_leftovers;
  for (auto& d : c->devices)
    plugin_support::destroy_device_leftovers(*d, destroy_error, GraphExec_Destroy, Graph_Destroy,
                                             Event_Destroy, Executable_Destroy, Buffer_Free);
  destroy_leftovers(c->live_communicators, TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE,
                    &TsCommunicator_Destroy_Args::communicator, Communicator_Destroy, destroy_error);
  for (auto& d : c->devices) {
    if (TsError* e = synchronize_device(d.get())) destroy_error(e);
    // Streams the caller left behind.
    std::lock_guard<std::mutex> lk(d->mu);
    for (TsStream* s : d->streams) {
      c->fn.zeCommandListDestroy(s->list);
      s->magic = kMagicDead;
      delete s;
    }
    d->streams.clear();
    for (RetiredStream& rs : d->retired) c->fn.zeCommandListDestroy(rs.list);
    d->retired.clear();
  }
  // Pinned host memory still allocated or imported.
  for (auto& [p, n] : c->host_allocated) c->fn.zeMemFree(c->context, reinterpret_cast<void*>(p));
  if (c->release_pointer)
    for (auto& [p, n] : c->host_registered) c->release_pointer(c->driver, reinterpret_cast<void*>(p));
  c->host_allocated.clear();
  c->host_registered.clear();
  c->magic = kMagicDead;
  delete c;
  return nullptr;
}

TS_ZE_ENTRY(Client_GetDevices, TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->client, "Client_GetDevices", "client");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

}  // namespace tessera::level_zero
