#include "runner/results_log.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class ResultsLogListener : public ::testing::EmptyTestEventListener {
 public:
  explicit ResultsLogListener(const std::string& path)
      : file_(std::fopen(path.c_str(), "w")) {}
  ~ResultsLogListener() override {
    if (file_) std::fclose(file_);
  }

  void OnTestStart(const ::testing::TestInfo& test) override {
    messages_.clear();
    start_ = std::chrono::steady_clock::now();
    Write({{"e", "start"}, {"test", Name(test)}});
  }

  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    std::string text = part.message() ? part.message() : "";
    // FAIL() << msg yields "Failed\nmsg": keep the message.
    if (text.rfind("Failed\n", 0) == 0) text = text.substr(7);
    // ASSERT_TRUE(x) << msg yields "Value of: x\n  Actual: false\nExpected:
    // true\nmsg": the message first (the report's summary is the first
    // line), then what was checked.
    if (text.rfind("Value of: ", 0) == 0) {
      size_t at = 0;
      for (int line = 0; line < 3 && at != std::string::npos; ++line) at = text.find('\n', at + 1);
      if (at != std::string::npos && at + 1 < text.size())
        text = text.substr(at + 1) + " (" + text.substr(0, text.find('\n')) + ")";
    }
    if (part.failed() && part.file_name())
      text = std::string(part.file_name()) + ":" +
             std::to_string(part.line_number()) + ": " + text;
    if (!messages_.empty()) messages_ += "\n";
    messages_ += text;
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    const ::testing::TestResult* r = test.result();
    const char* status =
        r->Skipped() ? "skipped" : r->Failed() ? "failed" : "passed";
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start_)
                    .count();
    nlohmann::json line = {{"e", "end"},     {"test", Name(test)},
                           {"status", status}, {"message", messages_},
                           {"ms", ms}};
    // Whether the test is in the known-failures table for this plugin.
    const StatusOr<Runtime>& rt = SharedRuntime();
    if (rt.ok())
      if (const char* reason = KnownFailureReason(rt->backend(), Name(test)))
        line["known"] = reason;
    Write(line);
  }

 private:
  static std::string Name(const ::testing::TestInfo& t) {
    return std::string(t.test_suite_name()) + "." + t.name();
  }
  void Write(const nlohmann::json& j) {
    if (!file_) return;
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fputs(s.c_str(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);  // survive a crash in the next test
  }

  std::FILE* file_;
  std::string messages_;
  std::chrono::steady_clock::time_point start_;
};

bool StartsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// The text after `prefix` in a skip message ("unsupported: graphs").
bool AfterPrefix(const std::string& message, const std::string& prefix,
                 std::string* rest) {
  size_t at = message.find(prefix);
  if (at == std::string::npos) return false;
  *rest = message.substr(at + prefix.size());
  while (!rest->empty() && (rest->back() == '\n' || rest->back() == ' '))
    rest->pop_back();
  return true;
}

}  // namespace

void InstallResultsLog(const std::string& path) {
  ::testing::UnitTest::GetInstance()->listeners().Append(
      new ResultsLogListener(path));
}

ResultsLog ReadResultsLog(const std::string& path, bool run_known_failures) {
  ResultsLog log;
  std::ifstream in(path);
  std::string line;
  std::map<std::string, bool> open;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;  // torn last line
    std::string test = j.value("test", "");
    if (j.value("e", "") == "start") {
      log.in_flight = test;
      continue;
    }
    log.in_flight.clear();
    TestResult r;
    r.name = test;
    r.ms = j.value("ms", 0.0);
    std::string status = j.value("status", "failed");
    std::string message = j.value("message", "");
    std::string known = j.value("known", "");
    std::string rest;
    if (status == "passed") {
      r.outcome = (!known.empty() && run_known_failures) ? Outcome::kXPass
                                                          : Outcome::kPassed;
      if (r.outcome == Outcome::kXPass)
        r.detail = "known failure passed (" + known +
                   "): remove it from conformance/cts/known_failures.cpp";
    } else if (status == "failed") {
      if (!known.empty() && run_known_failures) {
        r.outcome = Outcome::kExpectedFailure;
        r.detail = known + " (ran and failed as expected)";
      } else {
        r.outcome = Outcome::kFailed;
        r.detail = message;
      }
    } else if (AfterPrefix(message, "expected failure: ", &rest)) {
      r.outcome = Outcome::kExpectedFailure;
      r.detail = rest;
    } else if (AfterPrefix(message, "unsupported: ", &rest)) {
      r.outcome = Outcome::kUnsupported;
      r.detail = rest;
    } else {
      // A skip that names no capability is a bug in the test: report it as
      // a failure so that it gets fixed rather than hidden.
      r.outcome = Outcome::kFailed;
      r.detail = "skipped without naming a capability: " + message;
    }
    log.finished.push_back(std::move(r));
  }
  (void)StartsWith;
  return log;
}

}  // namespace tessera::cts
