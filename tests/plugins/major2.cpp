// Test plugin (c): exports the entry point, but its table claims ABI 2.0.
// A 1.x core must reject it after reading only struct_size and abi_version,
// so every entry is left NULL: calling any of them would crash the test.
#include "tessera/plugin.h"

namespace {
TsPluginApi MakeTable() {
  TsPluginApi api{};
  api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;
  api.abi_version.major = 2;
  api.abi_version.minor = 0;
  return api;
}
const TsPluginApi kApi = MakeTable();
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  return &kApi;
}
