#include "plugin_discovery.hpp"

#include <algorithm>
#include <mutex>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include "log.hpp"
#include "plugin_library.hpp"

namespace fs = std::filesystem;

namespace tessera::detail {

namespace {
constexpr const char* kPrefix = "libtessera_plugin_";
constexpr const char* kSuffix = ".so";

void SplitInto(const std::string& text, char separator,
               std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    if (!item.empty()) out->push_back(item);
    start = end + 1;
  }
}

bool IsPluginFileName(const std::string& file) {
  return file.size() > std::char_traits<char>::length(kPrefix) + 3 &&
         file.rfind(kPrefix, 0) == 0 &&
         file.compare(file.size() - 3, 3, kSuffix) == 0;
}
}  // namespace

const std::vector<std::string>& WellKnownBackendNames() {
  static const std::vector<std::string> names = {"cuda", "hip", "level_zero",
                                                 "vulkan", "cpu"};
  return names;
}

std::string PluginNameFromPath(const std::string& path) {
  std::string file = fs::path(path).filename().string();
  if (IsPluginFileName(file)) {
    size_t prefix = std::char_traits<char>::length(kPrefix);
    return file.substr(prefix, file.size() - prefix - 3);
  }
  return fs::path(path).stem().string();
}

std::vector<std::string> PluginSearchPath(const RuntimeOptions& options) {
  std::vector<std::string> path;
  if (!options.plugin_file.empty()) {
    path.push_back(options.plugin_file);
    return path;
  }
  if (options.read_environment) {
    if (const char* env = std::getenv("TESSERA_PLUGIN_PATH"))
      SplitInto(env, ':', &path);
  }
  for (const std::string& entry : options.plugin_path) path.push_back(entry);
  path.push_back(kEmbeddedPath);
  for (const std::string& dir : Runtime::DefaultPluginDirectories())
    path.push_back(dir);
  return path;
}

namespace {
std::mutex& KnownNamesMu() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& KnownNames() {
  static std::set<std::string> names(WellKnownBackendNames().begin(), WellKnownBackendNames().end());
  return names;
}
}  // namespace

std::vector<std::string> KnownPluginNames() {
  std::lock_guard<std::mutex> lock(KnownNamesMu());
  return {KnownNames().begin(), KnownNames().end()};
}

std::vector<PluginCandidate> DiscoverPlugins(const RuntimeOptions& options) {
  std::vector<PluginCandidate> found;
  // The folders a user named: one that does not exist is worth a word (a
  // typo in TESSERA_PLUGIN_PATH found nothing, silently).
  std::set<std::string> user_given(options.plugin_path.begin(), options.plugin_path.end());
  if (options.read_environment)
    if (const char* env = std::getenv("TESSERA_PLUGIN_PATH")) {
      std::vector<std::string> parts;
      SplitInto(env, ':', &parts);
      user_given.insert(parts.begin(), parts.end());
    }
  auto add = [&](const std::string& file) {
    PluginCandidate c;
    c.path = file;
    c.name = PluginNameFromPath(file);
    found.push_back(std::move(c));
  };
  for (const std::string& entry : PluginSearchPath(options)) {
    if (entry == kEmbeddedPath) {
      for (const std::string& name : StaticPluginNames()) {
        PluginCandidate c;
        c.path = kEmbeddedPath;
        c.name = name;
        found.push_back(std::move(c));
      }
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
      std::vector<std::string> files;
      for (const auto& item : fs::directory_iterator(entry, ec)) {
        std::string file = item.path().filename().string();
        if (IsPluginFileName(file)) files.push_back(item.path().string());
      }
      std::sort(files.begin(), files.end());  // stable order across runs
      for (const std::string& file : files) add(file);
    } else if (fs::exists(entry, ec)) {
      add(entry);
    } else if (user_given.count(entry)) {
      TESSERA_LOG(kWarning, "plugin path entry " + entry + " (TESSERA_PLUGIN_PATH or RuntimeOptions::plugin_path) "
                            "does not exist: no plugin is loaded from it");
    } else {
      TESSERA_LOG(kDebug, "plugin path entry " + entry + " does not exist");
    }
  }
  // The first candidate of each name wins.
  std::set<std::string> seen;
  std::vector<std::string> winner_path;
  for (PluginCandidate& c : found) {
    if (seen.count(c.name)) {
      auto first = std::find_if(found.begin(), found.end(),
                                [&](const PluginCandidate& o) {
                                  return o.name == c.name;
                                });
      c.state = PluginState::kShadowed;
      c.reason = "shadowed by " + first->path + " (earlier in the search path)";
      // A plugin of the user's replacing the built-in one is their choice,
      // but never a silent one.
      if (c.path == kEmbeddedPath)
        TESSERA_LOG(kInfo, first->path + " replaces the embedded " + c.name + " plugin (earlier in the search path)");
      continue;
    }
    seen.insert(c.name);
  }
  {
    std::lock_guard<std::mutex> lock(KnownNamesMu());
    for (const PluginCandidate& c : found) KnownNames().insert(c.name);
  }
  return found;
}

}  // namespace tessera::detail
