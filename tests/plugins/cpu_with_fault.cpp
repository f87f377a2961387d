// Test plugins for the conformance runner (tests/conformance_runner.sh): the
// CPU plugin with one thing wrong, built once per fault with
// -DFAULT_<MODE>:
//   EXIT0_IN_TEST   Event_ElapsedTime calls _exit(0) in the middle of a
//                   test: a process that ends "successfully" in a test must
//                   not pass (it was certified Full, the area's remaining
//                   tests silently dropped)
//   NULL_OPTIONALS  optional entry points left NULL (Device_Synchronize,
//                   Event_Create, Device_GetDefaultStream), as docs/abi.md
//                   allows: the abi area called them and crashed
//   BAD_CREATE      Client_Create fails with INVALID_ARGUMENT: not
//                   "unavailable" (--unavailable-exit-code skipped it)
#include <unistd.h>

#include <cstring>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

const TsPluginApi& Cpu() { return *tessera_cpu_plugin_get_api(); }

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  TsError* e = Cpu().Plugin_GetInfo(args);
  if (e) return e;
  args->name = "cpu_with_fault";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-fault";
  return nullptr;
}

[[maybe_unused]] TsError* ExitInElapsedTime(TsEvent_ElapsedTime_Args*) { ::_exit(0); }

[[maybe_unused]] TsError* RefuseCreate(TsClient_Create_Args*) {
  // An INVALID_ARGUMENT error object of the cpu plugin's own making.
  TsClient_GetDevices_Args bad{};
  bad.struct_size = sizeof bad;
  return Cpu().Client_GetDevices(&bad);
}

TsPluginApi MakeTable() {
  TsPluginApi api;
  std::memcpy(&api, &Cpu(), sizeof api);
  api.Plugin_GetInfo = PluginGetInfo;
#if defined(FAULT_EXIT0_IN_TEST)
  api.Event_ElapsedTime = ExitInElapsedTime;
#elif defined(FAULT_NULL_OPTIONALS)
  api.Device_Synchronize = nullptr;
  api.Event_Create = nullptr;
  api.Device_GetDefaultStream = nullptr;
#elif defined(FAULT_BAD_CREATE)
  api.Client_Create = RefuseCreate;
#else
#error "build with -DFAULT_<MODE>"
#endif
  return api;
}

}  // namespace

// Built on first use: the cpu plugin's table (another translation unit's
// static) is initialized by then.
extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  static const TsPluginApi api = MakeTable();
  return &api;
}
