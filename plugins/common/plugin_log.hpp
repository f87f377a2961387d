// Warnings a plugin gives when it recovers on its own (a corrupt cache entry
// dropped, a cache folder it cannot write): printed to stderr as
// "[tessera:warning] <message>" under the same TESSERA_LOG level as the
// core's messages (core/src/log.cpp is compiled into this library, so the
// variable is read and printed the same way; each plugin has its own hidden
// copy).
//
// Thread-safety: safe from any thread (lines never interleave).
#pragma once

#include <string>

namespace tessera::plugin_support {

void LogWarning(const std::string& message);
// "[tessera:debug] <message>" under TESSERA_LOG=debug.
void LogDebug(const std::string& message);

}  // namespace tessera::plugin_support
