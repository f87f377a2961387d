#include "schedule_check.hpp"

#include <map>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera::program {

namespace {

enum class Kind { kBool, kInteger, kText };

// The pass's options and, from their defaults, their kinds: the pass prints
// itself as "name{key=default ...}".
const std::map<std::string, Kind>& ScheduleOptions() {
  static const std::map<std::string, Kind> options = [] {
    std::map<std::string, Kind> out;
    std::unique_ptr<mlir::Pass> pass = graph::createGraphToSchedule(graph::GraphToScheduleOptions());
    std::string text;
    llvm::raw_string_ostream os(text);
    pass->printAsTextualPipeline(os);
    os.flush();
    llvm::StringRef body(text);
    const size_t open = body.find('{');
    if (open == llvm::StringRef::npos) return out;
    body = body.drop_front(open + 1);
    body = body.take_until([](char c) { return c == '}'; });
    llvm::SmallVector<llvm::StringRef, 32> tokens;
    body.split(tokens, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef t : tokens) {
      auto [key, value] = t.split('=');
      long long n;
      const Kind kind = (value == "true" || value == "false") ? Kind::kBool
                        : !value.empty() && !value.getAsInteger(10, n) ? Kind::kInteger
                                                                        : Kind::kText;
      out[key.str()] = kind;
    }
    return out;
  }();
  return options;
}

std::string OptionList() {
  std::string list;
  for (const auto& [key, kind] : ScheduleOptions()) list += (list.empty() ? "" : ", ") + key;
  return list;
}

}  // namespace

std::string CheckSchedule(const std::string& schedule) {
  const auto& options = ScheduleOptions();
  if (options.empty()) return "";  // nothing known to check against: the pass decides
  // Quoted or braced values may hold spaces: MLIR's own parser reads those.
  if (schedule.find_first_of("\"'{}") != std::string::npos) return "";
  llvm::SmallVector<llvm::StringRef, 16> tokens;
  llvm::StringRef(schedule).split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef t : tokens) {
    auto [key, value] = t.split('=');
    const bool has_value = t.contains('=');
    auto it = options.find(key.str());
    if (it == options.end())
      return "schedule '" + schedule + "': --tessera-graph-to-schedule has no option '" + key.str() +
             "'; its options are " + OptionList() + " (e.g. \"tile-m=64 micro-m=4\")";
    long long n;
    switch (it->second) {
      case Kind::kBool:
        if (has_value && !value.equals_insensitive("true") && !value.equals_insensitive("false") &&
            value != "1" && value != "0")
          return "schedule '" + schedule + "': " + key.str() + " is true or false, not '" + value.str() + "'";
        break;
      case Kind::kInteger:
        if (!has_value || value.getAsInteger(0, n))
          return "schedule '" + schedule + "': " + key.str() + " takes a whole number (" + key.str() +
                 "=64), not '" + value.str() + "'";
        break;
      case Kind::kText:
        if (!has_value || value.empty())
          return "schedule '" + schedule + "': " + key.str() + " takes a value (" + key.str() + "=...)";
        break;
    }
  }
  return "";
}

}  // namespace tessera::program
