// The function table and Plugin_GetInfo.
#include "plugin_api.h"

#include "internal.hpp"

namespace tessera::cpu {

TS_CPU_ENTRY(Plugin_GetInfo, TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE) {
  args->name = "cpu";
  args->vendor = "Tessera";
  args->plugin_version = "0.1.0";
  if (TS_FIELD_PRESENT(args, TsPlugin_GetInfo_Args, num_client_options)) {
    args->client_options = kClientOptions;
    args->num_client_options = kNumClientOptions;
  }
  return nullptr;
}

namespace {
TsPluginApi make_api() {
  TsPluginApi api{};
  TS_PLUGIN_FILL_TABLE();
  api.Stream_WriteTimestamp = &Stream_WriteTimestamp;  // MINOR 3 (stream.cpp)
  api.Communicator_CreateUniqueId = &Communicator_CreateUniqueId;  // MINOR 4 (collectives.cpp)
  api.Buffer_GetDeviceAddress = &Buffer_GetDeviceAddress;  // MINOR 6 (memory.cpp)
  api.Buffer_Import = &Buffer_Import;                      // MINOR 6 (memory.cpp)
  return api;
}
const TsPluginApi g_api = make_api();
}  // namespace

}  // namespace tessera::cpu

extern "C" const TsPluginApi* tessera_cpu_plugin_get_api(void) { return &tessera::cpu::g_api; }
