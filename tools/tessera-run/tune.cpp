#include "tune.hpp"

#include <algorithm>
#include <cstdio>

#include "tessera/autotune.hpp"

namespace tessera::run {

int Autotune(const RunArgs& a, const ProgramSource& source, const std::vector<Device>& devices,
             ProgramCompileOptions* co) {
  AutotuneOptions o;
  if (!a.autotune_space.empty()) {
    auto space = ParseAutotuneSpace(a.autotune_space);
    if (!space.ok()) {
      std::fprintf(stderr, "tessera-run: %s\n", space.status().message().c_str());
      return kExitBadInput;
    }
    o.space = std::move(*space);
    // A space given is a search asked for: it runs (and replaces the
    // cached choice) even when the cache has one.
    o.use_cache = false;
  }
  o.max_trials = a.autotune_trials;
  o.max_seconds = a.autotune_seconds;
  o.repeats = a.autotune_repeats;
  auto r = tessera::Autotune(devices, source, *co, o);
  if (!r.ok()) {
    std::fprintf(stderr, "tessera-run: autotune: %s\n", r.status().message().c_str());
    return r.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitRuntime;
  }
  const std::string chosen = r->schedule.empty() ? "(the target's default)" : "\"" + r->schedule + "\"";
  if (r->from_cache) {
    std::printf("autotune: cached choice %s (%.3f ms per run when tuned; looked up in %.3f ms, %s)\n",
                chosen.c_str(), r->time_ms, r->lookup_ms, r->cache_file.c_str());
  } else {
    int failed = 0;
    for (const AutotuneTrial& t : r->trials) {
      if (t.time_ms < 0) ++failed;
      if (t.duplicate)
        std::printf("autotune:      same  %s: the kernels of %s\n", t.schedule.c_str(),
                    t.same_as.empty() ? "(default)" : t.same_as.c_str());
      else if (t.time_ms >= 0)
        std::printf("autotune: %9.3f ms  %s\n", t.time_ms, t.schedule.empty() ? "(default)" : t.schedule.c_str());
      else {
        std::string why = t.error;
        std::replace(why.begin(), why.end(), '\n', ' ');
        std::printf("autotune:    failed  %s: %s\n", t.schedule.c_str(), why.substr(0, 300).c_str());
      }
    }
    std::printf("autotune: best %s: %.3f ms per run, default %.3f ms (%.2fx), %zu trials (%d failed) in %.1f s%s%s\n",
                chosen.c_str(), r->time_ms, r->default_ms, r->time_ms > 0 ? r->default_ms / r->time_ms : 0.0,
                r->trials.size(), failed, r->search_seconds, r->cache_file.empty() ? "" : ", cached in ",
                r->cache_file.c_str());
  }
  co->schedule = r->schedule.empty() ? " " : r->schedule;  // " ": the target's default
  return kExitOk;
}

}  // namespace tessera::run
