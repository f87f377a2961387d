// The function table and Plugin_GetInfo.
#include "internal.hpp"
#include "plugin_api.h"

namespace tessera::level_zero {

TS_ZE_ENTRY(Plugin_GetInfo, TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE) {
  args->name = "level_zero";
  args->vendor = "Tessera (oneAPI Level Zero, libze_loader.so.1 loaded at run time)";
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
  api.Stream_WriteTimestamp = &Stream_WriteTimestamp;  // MINOR 3 (timestamp.cpp)
  api.Buffer_GetDeviceAddress = &Buffer_GetDeviceAddress;  // MINOR 6 (memory.cpp)
  api.Buffer_Import = &Buffer_Import;                      // MINOR 6 (memory.cpp)
  return api;
}
const TsPluginApi g_api = make_api();
}  // namespace

}  // namespace tessera::level_zero

extern "C" const TsPluginApi* tessera_level_zero_plugin_get_api(void) {
  return &tessera::level_zero::g_api;
}
