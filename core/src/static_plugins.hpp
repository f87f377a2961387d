#ifndef TESSERA_CORE_STATIC_PLUGINS_HPP_
#define TESSERA_CORE_STATIC_PLUGINS_HPP_

#include <string>

#include "tessera/plugin.h"
#include "tessera/runtime.hpp"

namespace tessera::detail {
// The entry point registered under `name`, or nullptr.
TsPluginGetApiFn FindStaticPlugin(const std::string& name);
}  // namespace tessera::detail

#endif  // TESSERA_CORE_STATIC_PLUGINS_HPP_
