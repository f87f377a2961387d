// TESSERA_LOG=debug|info|warning|error: the runtime says what it decided and
// why on stderr ("[tessera:debug] backend vulkan skipped: ...").
#ifndef TESSERA_CORE_LOG_HPP_
#define TESSERA_CORE_LOG_HPP_

#include <string>

namespace tessera::detail {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// The level from TESSERA_LOG, read once (default: warning).
LogLevel CurrentLogLevel();
inline bool LogEnabled(LogLevel level) { return level >= CurrentLogLevel(); }
void LogMessage(LogLevel level, const std::string& message);

}  // namespace tessera::detail

#define TESSERA_LOG(level, message)                                    \
  do {                                                                 \
    if (::tessera::detail::LogEnabled(::tessera::detail::LogLevel::level)) \
      ::tessera::detail::LogMessage(::tessera::detail::LogLevel::level, (message)); \
  } while (0)

#endif  // TESSERA_CORE_LOG_HPP_
