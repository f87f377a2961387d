// The registry of plugins linked into the program (RegisterStaticPlugin).
// The core embeds no plugin itself: libtessera.so registers the cpu plugin
// when it is loaded (program/src/embedded_plugins.cpp).
#include "static_plugins.hpp"

#include <mutex>

namespace tessera {

namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, TsPluginGetApiFn>> plugins;  // registration order
};
Registry& Get() {
  static Registry* registry = new Registry();  // never destroyed: used at exit
  return *registry;
}
}  // namespace

void RegisterStaticPlugin(const std::string& name, TsPluginGetApiFn get_api) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& entry : r.plugins)
    if (entry.first == name) {
      entry.second = get_api;
      return;
    }
  r.plugins.emplace_back(name, get_api);
}

std::vector<std::string> StaticPluginNames() {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (auto& entry : r.plugins) names.push_back(entry.first);
  return names;
}

namespace detail {
TsPluginGetApiFn FindStaticPlugin(const std::string& name) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& entry : r.plugins)
    if (entry.first == name) return entry.second;
  return nullptr;
}
}  // namespace detail

}  // namespace tessera
