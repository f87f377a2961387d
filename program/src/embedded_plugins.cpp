// Registers the plugins linked into libtessera.so with the core when the
// library is loaded: today the cpu plugin, the embedded default backend
// that is there even when no plugin folder is found.
//
// The core (libtessera_core.so) stays hardware-neutral: it knows plugins
// only through the registry and the loader.
#include "plugins/cpu/plugin_api.h"
#include "tessera/runtime.hpp"

namespace {
struct RegisterEmbeddedPlugins {
  RegisterEmbeddedPlugins() { tessera::RegisterStaticPlugin("cpu", &tessera_cpu_plugin_get_api); }
};
const RegisterEmbeddedPlugins kRegister;
}  // namespace
