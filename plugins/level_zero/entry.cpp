// The one exported symbol of libtessera_plugin_level_zero.so.
#include "plugin_api.h"

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  return tessera_level_zero_plugin_get_api();
}
