// Test plugin (f): a plugin "built against an older MINOR" of the header.
//
// It is the real CPU plugin, but its table's struct_size ends at
// Stream_EndCapture, and its Device_GetProperties writes only the MINOR-0
// fields of TsDeviceProperties, as if the header it was compiled against
// stopped there:
// the later graph entries (Graph_*, GraphExec_*), executables and collectives
// do not exist for the core.  The entries past struct_size are deliberately
// filled with a function that aborts, so a core that reads past struct_size
// crashes the test instead of silently working.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  args->name = "oldminor";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-oldminor";
  return nullptr;
}

// A MINOR-0 plugin knows TsDeviceProperties only up to memory_types: it
// writes nothing after them, whatever struct_size the core passes.
TsError* DevicePropertiesMinorZero(TsDevice_GetProperties_Args* args) {
  TsDeviceProperties* p = args->properties;
  if (!p) return tessera_cpu_plugin_get_api()->Device_GetProperties(args);
  const size_t caller = p->struct_size;
  p->struct_size = TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE;
  TsError* e = tessera_cpu_plugin_get_api()->Device_GetProperties(args);
  p->struct_size = caller;
  return e;
}

template <typename Args>
TsError* PastTheEnd(Args*) {
  std::fprintf(stderr,
               "oldminor: the core called an entry point past the table's "
               "struct_size\n");
  std::abort();
}

TsPluginApi MakeTable() {
  TsPluginApi api;
  std::memcpy(&api, tessera_cpu_plugin_get_api(), sizeof api);
  api.Plugin_GetInfo = PluginGetInfo;
  api.Device_GetProperties = DevicePropertiesMinorZero;
  api.struct_size = TS_STRUCT_SIZE(TsPluginApi, Stream_EndCapture);
  api.Graph_Destroy = PastTheEnd<TsGraph_Destroy_Args>;
  api.Graph_GetInfo = PastTheEnd<TsGraph_GetInfo_Args>;
  api.Graph_Instantiate = PastTheEnd<TsGraph_Instantiate_Args>;
  api.GraphExec_Destroy = PastTheEnd<TsGraphExec_Destroy_Args>;
  api.GraphExec_Launch = PastTheEnd<TsGraphExec_Launch_Args>;
  api.Executable_Load = PastTheEnd<TsExecutable_Load_Args>;
  api.Executable_Destroy = PastTheEnd<TsExecutable_Destroy_Args>;
  api.Executable_GetKernel = PastTheEnd<TsExecutable_GetKernel_Args>;
  api.Kernel_Launch = PastTheEnd<TsKernel_Launch_Args>;
  api.Communicator_Create = PastTheEnd<TsCommunicator_Create_Args>;
  api.Communicator_Destroy = PastTheEnd<TsCommunicator_Destroy_Args>;
  api.Communicator_Collective = PastTheEnd<TsCommunicator_Collective_Args>;
  return api;
}
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  // Built on first use: the CPU plugin's own table may be initialised
  // dynamically, and static-initialisation order across files is unspecified.
  static const TsPluginApi kApi = MakeTable();
  return &kApi;
}
