// TESSERA_FAULT: fault injection around the core's plugin calls (fault.hpp).
#include "fault.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace tessera::detail {

namespace {

const char* const kKindNames[] = {"alloc", "copy", "launch", "compile"};

bool ParseCount(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  *out = std::strtoull(text.c_str(), nullptr, 10);
  return *out > 0;
}

}  // namespace

StatusOr<std::unique_ptr<FaultInjector>> FaultInjector::Parse(
    const std::string& spec, const std::string& source) {
  if (spec.empty()) return std::unique_ptr<FaultInjector>();
  auto injector = std::make_unique<FaultInjector>();
  injector->spec_ = spec;
  injector->source_ = source;
  auto bad = [&](const std::string& item, const std::string& why) {
    return Status(StatusCode::kInvalidArgument,
                  source + "=" + spec + ": '" + item + "' " + why +
                      "; write a comma-separated list of alloc:N, copy:N, "
                      "launch:N, compile:N (fail the Nth such call, N >= 1) "
                      "and device_lost or device_lost:N");
  };
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    std::string kind = item.substr(0, colon);
    std::string count = colon == std::string::npos ? "" : item.substr(colon + 1);
    uint64_t n = 0;
    if (kind == "device_lost") {
      if (colon == std::string::npos) {
        n = 1;
      } else if (!ParseCount(count, &n)) {
        return bad(item, "has no count >= 1 after the colon");
      }
      // The earliest of several device_lost entries.
      injector->lost_at_ = injector->lost_at_ ? std::min(injector->lost_at_, n) : n;
      continue;
    }
    int index = -1;
    for (int i = 0; i < 4; ++i)
      if (kind == kKindNames[i]) index = i;
    if (index < 0) return bad(item, "is not a fault");
    if (!ParseCount(count, &n)) return bad(item, "needs a count N >= 1 (" + kind + ":N)");
    injector->fail_at_[index].push_back(n);
  }
  return StatusOr<std::unique_ptr<FaultInjector>>(std::move(injector));
}

FaultInjector* FaultInjector::FromEnvironment() {
  static std::mutex mu;
  static std::string seen;
  static std::unique_ptr<FaultInjector>* current =
      new std::unique_ptr<FaultInjector>();  // leaked: used until exit
  static std::vector<std::unique_ptr<FaultInjector>>* retired =
      new std::vector<std::unique_ptr<FaultInjector>>();  // still referenced
  std::lock_guard<std::mutex> lock(mu);
  const char* env = std::getenv("TESSERA_FAULT");
  std::string text = env ? env : "";
  if (text != seen || (!*current && !text.empty())) {
    seen = text;
    auto parsed = Parse(text, "TESSERA_FAULT");
    if (*current) retired->push_back(std::move(*current));
    *current = parsed.ok() ? std::move(parsed).value() : nullptr;
  }
  return current->get();
}

Status FaultInjector::Check(FaultKind kind, const char* what) {
  if (lost_at_) {
    uint64_t call = device_calls_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (call >= lost_at_)
      return Status(StatusCode::kAborted,
                    std::string(what) + ": the device was lost (injected by " +
                        source_ + "=" + spec_ + " at call " +
                        std::to_string(lost_at_) +
                        "); release the objects and create a new Runtime");
  }
  if (kind == FaultKind::kOther) return Status::Ok();
  int index = static_cast<int>(kind);
  if (fail_at_[index].empty()) return Status::Ok();
  uint64_t n = counts_[index].fetch_add(1, std::memory_order_relaxed) + 1;
  if (std::find(fail_at_[index].begin(), fail_at_[index].end(), n) == fail_at_[index].end()) return Status::Ok();
  return Status(kind == FaultKind::kAlloc ? StatusCode::kResourceExhausted
                                          : StatusCode::kInternal,
                std::string(what) + ": injected failure of " +
                    kKindNames[index] + " call " + std::to_string(n) + " (" +
                    source_ + "=" + spec_ + ")");
}

}  // namespace tessera::detail
