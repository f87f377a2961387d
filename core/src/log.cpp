#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tessera::detail {

static LogLevel ParseLevel(const char* text) {
  if (!text || !*text) return LogLevel::kWarning;
  if (!std::strcmp(text, "debug") || !std::strcmp(text, "trace"))
    return LogLevel::kDebug;
  if (!std::strcmp(text, "info")) return LogLevel::kInfo;
  if (!std::strcmp(text, "warning") || !std::strcmp(text, "warn"))
    return LogLevel::kWarning;
  if (!std::strcmp(text, "error")) return LogLevel::kError;
  if (!std::strcmp(text, "off") || !std::strcmp(text, "none"))
    return LogLevel::kOff;
  std::fprintf(stderr,
               "[tessera:warning] TESSERA_LOG=%s is not a level; use debug, "
               "info, warning, error or off\n",
               text);
  return LogLevel::kWarning;
}

LogLevel CurrentLogLevel() {
  // Read once: the environment is not expected to change the log level while
  // the process runs, and the check sits on hot paths.
  static const LogLevel level = ParseLevel(std::getenv("TESSERA_LOG"));
  return level;
}

void LogMessage(LogLevel level, const std::string& message) {
  static const char* kNames[] = {"debug", "info", "warning", "error", "off"};
  static std::mutex mutex;  // keeps lines from interleaving
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[tessera:%s] %s\n", kNames[static_cast<int>(level)],
               message.c_str());
}

}  // namespace tessera::detail
