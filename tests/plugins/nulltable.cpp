// Test plugin (d): the entry point exists and returns NULL.
#include "tessera/plugin.h"

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  return nullptr;
}
