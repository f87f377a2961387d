// The function table and Plugin_GetInfo.
#include "internal.hpp"
#include "plugin_api.h"

namespace tessera::vk {

TS_VK_ENTRY(Plugin_GetInfo, TS_PLUGIN_GETINFO_ARGS_STRUCT_SIZE) {
  args->name = "vulkan";
  args->vendor = "Tessera (Vulkan 1.2+ compute; Mesa lavapipe and GPU drivers)";
  args->plugin_version = "0.1.0";
  return nullptr;
}

namespace {
TsPluginApi make_api() {
  TsPluginApi api{};
  api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;
  api.extension_start = nullptr;
  api.abi_version = {TESSERA_ABI_VERSION_MAJOR, TESSERA_ABI_VERSION_MINOR};
#define TS_VK_SET(Name) api.Name = &Name;
  TS_VK_FOR_EACH_ENTRY(TS_VK_SET)
#undef TS_VK_SET
  return api;
}
const TsPluginApi g_api = make_api();
}  // namespace

}  // namespace tessera::vk

extern "C" const TsPluginApi* tessera_vulkan_plugin_get_api(void) {
  return &tessera::vk::g_api;
}
