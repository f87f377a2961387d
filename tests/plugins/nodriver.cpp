// Test plugin (e): behaves like a vendor plugin on a machine without the
// vendor's driver.  It loads and reports its identity, but Client_Create
// fails with TS_ERROR_UNAVAILABLE and the dlerror-style reason.
#include <cstring>
#include <new>
#include <string>

#include "tessera/plugin.h"
#include "required_table.hpp"

struct TsError {
  TsErrorCode code;
  std::string message;
};

namespace {

constexpr const char* kReason =
    "not available: libfoo.so.1: cannot open shared object file: No such file "
    "or directory";

TsError* ErrorDestroy(TsError_Destroy_Args* args) {
  delete args->error;
  return nullptr;
}
TsError* ErrorMessage(TsError_Message_Args* args) {
  args->message = args->error->message.c_str();
  args->message_size = args->error->message.size();
  return nullptr;
}
TsError* ErrorGetCode(TsError_GetCode_Args* args) {
  args->code = args->error->code;
  return nullptr;
}
TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  args->name = "nodriver";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-test";
  return nullptr;
}
TsError* ClientCreate(TsClient_Create_Args* args) {
  args->client = nullptr;
  return new (std::nothrow) TsError{TS_ERROR_UNAVAILABLE, kReason};
}
TsError* NotReached(const char* what) {
  return new (std::nothrow)
      TsError{TS_ERROR_INTERNAL, std::string("nodriver: ") + what +
                                     " called without a client"};
}
TsError* ClientDestroy(TsClient_Destroy_Args*) { return NotReached("Client_Destroy"); }
TsError* ClientGetDevices(TsClient_GetDevices_Args*) {
  return NotReached("Client_GetDevices");
}
TsError* DeviceGetProperties(TsDevice_GetProperties_Args*) {
  return NotReached("Device_GetProperties");
}

TsPluginApi MakeTable() {
  TsPluginApi api = tessera_test::RequiredTable({ErrorDestroy, ErrorMessage, ErrorGetCode, PluginGetInfo, ClientCreate,
                                                  ClientDestroy, ClientGetDevices, DeviceGetProperties});
  return api;
}
const TsPluginApi kApi = MakeTable();

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  return &kApi;
}
