/* The HIP plugin's table (entry.cpp exports it as tessera_plugin_get_api). */
#ifndef TESSERA_PLUGINS_HIP_PLUGIN_API_H_
#define TESSERA_PLUGINS_HIP_PLUGIN_API_H_

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static lifetime; never NULL. */
const TsPluginApi* tessera_hip_plugin_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGINS_HIP_PLUGIN_API_H_ */
