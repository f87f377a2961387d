// The runner's output: the console summary and the report files
// (report.json, junit.xml, report.md) described in docs/conformance.md.
#ifndef TESSERA_CONFORMANCE_RUNNER_REPORT_HPP_
#define TESSERA_CONFORMANCE_RUNNER_REPORT_HPP_

#include <ostream>
#include <string>

#include "runner/model.hpp"

namespace tessera::cts {

// One area's block on the console: the verdict line, then one line per test
// that did not simply pass.
void PrintArea(std::ostream& out, const AreaResult& area);
// The summary: "N passed, N failed, N skipped" alone on a line, then the
// certification level.
void PrintSummary(std::ostream& out, const RunReport& report);

nlohmann::json ReportJson(const RunReport& report);
std::string JUnitXml(const RunReport& report);
std::string MarkdownReport(const RunReport& report);

// Writes the three files into `dir`; false with *error on failure.
bool WriteReports(const RunReport& report, const std::string& dir,
                  std::string* error);

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_RUNNER_REPORT_HPP_
