/*
 * The CPU plugin's table, for the core that embeds the plugin statically.
 * C-compatible.  The loadable libtessera_plugin_cpu.so returns the same table
 * from tessera_plugin_get_api (entry.cpp).
 */
#ifndef TESSERA_PLUGINS_CPU_PLUGIN_API_H_
#define TESSERA_PLUGINS_CPU_PLUGIN_API_H_

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static lifetime; never NULL. */
const TsPluginApi* tessera_cpu_plugin_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGINS_CPU_PLUGIN_API_H_ */
