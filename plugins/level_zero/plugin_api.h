/* The Level Zero plugin's table (entry.cpp exports it as tessera_plugin_get_api). */
#ifndef TESSERA_PLUGINS_LEVEL_ZERO_PLUGIN_API_H_
#define TESSERA_PLUGINS_LEVEL_ZERO_PLUGIN_API_H_

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static lifetime; never NULL. */
const TsPluginApi* tessera_level_zero_plugin_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGINS_LEVEL_ZERO_PLUGIN_API_H_ */
