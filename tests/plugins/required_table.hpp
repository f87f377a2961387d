// The table every hand-written test plugin starts from (tests/plugins/,
// tests/test_fuzz_regressions.cpp, fuzz/plugin_fuzzer.cpp): this ABI's size
// and version and the entries plugin.h requires of every plugin (the three
// Error_* entries, Plugin_GetInfo, the client and Device_GetProperties),
// every other entry NULL. Each plugin then sets or breaks what its test is
// about.
#ifndef TESSERA_TESTS_PLUGINS_REQUIRED_TABLE_HPP
#define TESSERA_TESTS_PLUGINS_REQUIRED_TABLE_HPP

#include "tessera/plugin.h"

namespace tessera_test {

// The required entries, in table order.
struct RequiredEntries {
  decltype(TsPluginApi::Error_Destroy) error_destroy;
  decltype(TsPluginApi::Error_Message) error_message;
  decltype(TsPluginApi::Error_GetCode) error_get_code;
  decltype(TsPluginApi::Plugin_GetInfo) plugin_get_info;
  decltype(TsPluginApi::Client_Create) client_create;
  decltype(TsPluginApi::Client_Destroy) client_destroy;
  decltype(TsPluginApi::Client_GetDevices) client_get_devices;
  decltype(TsPluginApi::Device_GetProperties) device_get_properties;
};

inline TsPluginApi RequiredTable(const RequiredEntries& e) {
  TsPluginApi api{};
  api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;
  api.abi_version.major = TESSERA_ABI_VERSION_MAJOR;
  api.abi_version.minor = TESSERA_ABI_VERSION_MINOR;
  api.Error_Destroy = e.error_destroy;
  api.Error_Message = e.error_message;
  api.Error_GetCode = e.error_get_code;
  api.Plugin_GetInfo = e.plugin_get_info;
  api.Client_Create = e.client_create;
  api.Client_Destroy = e.client_destroy;
  api.Client_GetDevices = e.client_get_devices;
  api.Device_GetProperties = e.device_get_properties;
  return api;
}

}  // namespace tessera_test

#endif
