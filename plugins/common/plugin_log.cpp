#include "plugin_log.hpp"

#include "log.hpp"  // core/src: a private include folder of this library only

namespace tessera::plugin_support {

void LogWarning(const std::string& message) { TESSERA_LOG(kWarning, message); }
void LogDebug(const std::string& message) { TESSERA_LOG(kDebug, message); }

}  // namespace tessera::plugin_support
