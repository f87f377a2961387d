// tessera-plugin-probe: opens one plugin file the way the runtime does
// (load, entry point, Plugin_GetInfo, Client_Create with the same options,
// devices, Client_Destroy, unload) and reports each step on descriptor 3,
// then "done".  The runtime runs it before it loads a plugin file into its
// own process (core/src/plugin_probe.hpp); a crash, an abort, an exit() or
// a hang here is the plugin's, and costs the caller nothing but the report.
//
// usage: tessera-plugin-probe --name NAME --file PATH [--no-environment]
//            [--option NAME=TYPE:VALUE]... [--default NAME=TYPE:VALUE]...
// Not meant to be run by hand; its exit status is 0 when it got through and
// 2 on bad arguments.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend_selection.hpp"
#include "plugin_probe.hpp"

namespace {

using tessera::OptionValue;
using tessera::detail::ProbeStep;

// One write(2) per line: nothing buffered is lost when the plugin crashes.
void Report(const std::string& line) {
  std::string text = line + "\n";
  (void)!::write(3, text.data(), text.size());
}

void ReportStep(ProbeStep step) { Report("step " + std::to_string(static_cast<int>(step))); }

bool ParseOption(const std::string& spec, OptionValue* out) {
  size_t eq = spec.find('='), colon = spec.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos) return false;
  std::string name = spec.substr(0, eq), type = spec.substr(eq + 1, colon - eq - 1);
  std::string value = spec.substr(colon + 1);
  if (type == "string") *out = OptionValue::String(name, value);
  else if (type == "int64") *out = OptionValue::Int(name, std::strtoll(value.c_str(), nullptr, 10));
  else if (type == "float64") *out = OptionValue::Float(name, std::strtod(value.c_str(), nullptr));
  else if (type == "bool") *out = OptionValue::Bool(name, value == "true");
  else return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::RuntimeOptions options;
  options.isolate_plugins = false;  // this is the isolated process
  tessera::PluginCandidate candidate;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    OptionValue value;
    if (arg == "--name" && has_value) {
      candidate.name = argv[++i];
    } else if (arg == "--file" && has_value) {
      candidate.path = argv[++i];
    } else if (arg == "--no-environment") {
      options.read_environment = false;
    } else if ((arg == "--option" || arg == "--default") && has_value && ParseOption(argv[i + 1], &value)) {
      ++i;
      auto& map = arg == "--option" ? options.plugin_options : options.plugin_option_defaults;
      map[candidate.name].push_back(value);
    } else {
      std::fprintf(stderr, "tessera-plugin-probe: bad argument '%s' (run by the Tessera runtime only)\n",
                   arg.c_str());
      return 2;
    }
  }
  if (candidate.name.empty() || candidate.path.empty()) {
    std::fprintf(stderr, "tessera-plugin-probe: --name and --file are required\n");
    return 2;
  }
  // --option/--default name the plugin before --name may have come: move them.
  for (auto* map : {&options.plugin_options, &options.plugin_option_defaults}) {
    auto it = map->find("");
    if (it == map->end()) continue;
    auto values = std::move(it->second);
    map->erase(it);
    auto& target = (*map)[candidate.name];
    target.insert(target.end(), values.begin(), values.end());
  }
  tessera::detail::SetProbeStepObserver(ReportStep);
  {
    auto opened = tessera::detail::OpenBackend(&candidate, options);
    if (opened.ok()) {
      tessera::detail::CloseBackend(&*opened);  // destroys, then unloads
    } else {
      // A clean failure: the parent reuses it instead of creating a client
      // of its own (one line each; newlines would end a line early).
      auto line = [](std::string text) {
        for (char& c : text)
          if (c == '\n' || c == '\r') c = ' ';
        return text;
      };
      Report("open-failed " + std::to_string(static_cast<int>(candidate.state)) + " " +
             std::to_string(static_cast<int>(opened.status().code())));
      Report("open-reason " + line(candidate.reason));
      Report("open-message " + line(opened.status().message()));
    }
  }
  Report("done");
  // _exit: the plugin was unloaded above, and nothing at exit may change the
  // verdict: under LeakSanitizer a leak of the plugin's would otherwise turn
  // the exit status into a failure, and every plugin would be rejected in
  // sanitizer runs.
  std::fflush(nullptr);
  ::_exit(0);
}
