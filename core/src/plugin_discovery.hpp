// Finds plugin candidates: files named libtessera_plugin_<name>.so.
//
// Search order (first occurrence of a name wins, later ones are "shadowed"):
//   1. every entry of TESSERA_PLUGIN_PATH and RuntimeOptions::plugin_path
//      (':'-separated; directories are scanned, files taken as they are);
//   2. the plugins registered in the program (RegisterStaticPlugin:
//      libtessera.so registers the cpu plugin);
//   3. the plugin directory next to libtessera_core.so, then the installed
//      one, or, for the build tree's library, the build tree's.
// RuntimeOptions::plugin_file replaces all of this with that one file.
#ifndef TESSERA_CORE_PLUGIN_DISCOVERY_HPP_
#define TESSERA_CORE_PLUGIN_DISCOVERY_HPP_

#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera::detail {

// The plugin name of a file: "libtessera_plugin_vulkan.so" -> "vulkan";
// a file named otherwise keeps its stem.
std::string PluginNameFromPath(const std::string& path);

// The directories and files searched, in order; the embedded plugin is
// represented by kEmbeddedPath.
std::vector<std::string> PluginSearchPath(const RuntimeOptions& options);

std::vector<PluginCandidate> DiscoverPlugins(const RuntimeOptions& options);

// The names users may always write in TESSERA_BACKEND.
const std::vector<std::string>& WellKnownBackendNames();

// Every plugin name this process has seen: the well-known ones and those
// DiscoverPlugins found.  TESSERA_<PLUGIN>_<OPTION> variables are matched
// against the longest of them (TESSERA_CPU_FAST_DEVICES is plugin cpu_fast's
// option devices, not plugin cpu's fast_devices).  Thread-safe.
std::vector<std::string> KnownPluginNames();

}  // namespace tessera::detail

#endif  // TESSERA_CORE_PLUGIN_DISCOVERY_HPP_
