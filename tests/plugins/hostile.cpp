// Test plugins for isolation and the defensive core (test_isolation.cpp,
// tools/tessera-info/check_hostile.py): one source, built once per
// misbehaviour with -DHOSTILE_<MODE>.  Each is a minimal plugin that works
// except for the one thing it does wrong:
//   CRASH_CREATE   Client_Create dies of SIGSEGV
//   ABORT_CTOR     a library constructor calls abort() (dlopen never returns)
//   EXIT_CREATE    Client_Create calls exit(0), which looks like success
//   HANG_CREATE    Client_Create never returns
//   CRASH_ENTRY    the entry point itself dies of SIGSEGV
//   LYING_TABLE    its table claims SIZE_MAX bytes and Client_Create points
//                  at address 0x10
//   LYING_DEVICES  Client_GetDevices claims 2^40 devices in a 1-entry array
//   NULL_DEVICES   Client_GetDevices claims 2 devices and returns no array
//   CODE0_ERROR    Client_Create fails with an error object whose code is 0
//   HUGE_MESSAGE   its error messages claim SIZE_MAX bytes
//   NULL_CLIENT    Client_Create succeeds without returning a client
// Each says what it is about to do on stderr first: the reports must carry
// a plugin's last words.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tessera/plugin.h"
#include "required_table.hpp"

struct TsError {
  TsErrorCode code;
  std::string message;
};
struct TsClient {
  int unused;
};
struct TsDevice {
  int unused;
};

namespace {

TsClient g_client;
TsDevice g_device;
TsDevice* g_devices[1] = {&g_device};

[[maybe_unused]] void Say(const char* what) {
  std::fprintf(stderr, "hostile plugin: %s\n", what);
  std::fflush(stderr);
}

#ifdef HOSTILE_ABORT_CTOR
__attribute__((constructor)) void AbortWhileLoading() {
  Say("aborting in a library constructor");
  std::abort();
}
#endif

TsError* ErrorDestroy(TsError_Destroy_Args* args) {
  delete args->error;
  return nullptr;
}
TsError* ErrorMessage(TsError_Message_Args* args) {
  args->message = args->error->message.c_str();
#ifdef HOSTILE_HUGE_MESSAGE
  args->message_size = SIZE_MAX;
#else
  args->message_size = args->error->message.size();
#endif
  return nullptr;
}
TsError* ErrorGetCode(TsError_GetCode_Args* args) {
  args->code = args->error->code;
  return nullptr;
}
TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
#ifdef HOSTILE_LYING_TABLE
  Say("my table lies");
#endif
  args->name = "hostile";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-hostile";
  return nullptr;
}

TsError* ClientCreate(TsClient_Create_Args* args) {
#if defined(HOSTILE_CRASH_CREATE)
  Say("crashing in Client_Create");
  ::raise(SIGSEGV);
#elif defined(HOSTILE_EXIT_CREATE)
  Say("calling exit(0) in Client_Create");
  std::exit(0);
#elif defined(HOSTILE_HANG_CREATE)
  Say("hanging in Client_Create");
  for (;;) ::pause();
#elif defined(HOSTILE_CODE0_ERROR)
  return new (std::nothrow) TsError{static_cast<TsErrorCode>(0), "an error whose code is 0"};
#elif defined(HOSTILE_HUGE_MESSAGE)
  return new (std::nothrow) TsError{TS_ERROR_UNAVAILABLE, "a message that claims SIZE_MAX bytes"};
#elif defined(HOSTILE_NULL_CLIENT)
  args->client = nullptr;
  return nullptr;
#endif
  args->client = &g_client;
  return nullptr;
}
TsError* ClientDestroy(TsClient_Destroy_Args*) { return nullptr; }
TsError* ClientGetDevices(TsClient_GetDevices_Args* args) {
  args->devices = g_devices;
  args->num_devices = 1;
#if defined(HOSTILE_LYING_DEVICES)
  args->num_devices = size_t{1} << 40;
#elif defined(HOSTILE_NULL_DEVICES)
  args->devices = nullptr;
  args->num_devices = 2;
#endif
  return nullptr;
}
TsError* DeviceGetProperties(TsDevice_GetProperties_Args* args) {
  if (args->device != &g_device)
    return new (std::nothrow) TsError{TS_ERROR_INVALID_HANDLE, "hostile: not my device"};
  TsDeviceProperties* p = args->properties;
  std::strcpy(p->name, "hostile device");
  std::strcpy(p->vendor, "Tessera test suite");
  p->type = TS_DEVICE_TYPE_CPU;
  p->buffer_kinds = 1u << TS_BUFFER_DEVICE;
  return nullptr;
}

TsPluginApi MakeTable() {
  TsPluginApi api = tessera_test::RequiredTable({ErrorDestroy, ErrorMessage, ErrorGetCode, PluginGetInfo, ClientCreate,
                                                  ClientDestroy, ClientGetDevices, DeviceGetProperties});
#ifdef HOSTILE_LYING_TABLE
  api.struct_size = SIZE_MAX;
  api.Client_Create = reinterpret_cast<TsError* (*)(TsClient_Create_Args*)>(uintptr_t{0x10});
#endif
  return api;
}
const TsPluginApi kApi = MakeTable();

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
#ifdef HOSTILE_CRASH_ENTRY
  Say("crashing in the entry point");
  ::raise(SIGSEGV);
#endif
  return &kApi;
}
