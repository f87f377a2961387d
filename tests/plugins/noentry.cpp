// Test plugin (b): a valid shared object named like a plugin that does not
// export tessera_plugin_get_api.  The loader must say which symbol is missing.
#include "tessera/plugin.h"

extern "C" TESSERA_PLUGIN_EXPORT int tessera_plugin_something_else(void) {
  return 42;
}
