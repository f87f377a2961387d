#include "runner/report.hpp"

#include <cctype>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "cts/areas.hpp"

namespace tessera::cts {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailed: return "failed";
    case Outcome::kUnsupported: return "unsupported";
    case Outcome::kExpectedFailure: return "expected failure";
    case Outcome::kXPass: return "xpass";
  }
  return "?";
}

std::string AreaResult::verdict() const {
  if (failed() > 0 || !incidents.empty()) return "failed";
  if (tests.empty()) return "empty";
  if (count(Outcome::kExpectedFailure) > 0) return "expected failure";
  if (passed() > 0) return "passed";
  return "unsupported";
}

int RunReport::passed() const {
  int n = 0;
  for (const AreaResult& a : areas) n += a.passed();
  return n;
}
int RunReport::failed() const {
  int n = 0;
  for (const AreaResult& a : areas) n += a.failed();
  return n;
}
int RunReport::skipped() const {
  int n = 0;
  for (const AreaResult& a : areas) n += a.skipped();
  return n;
}

std::string CertificationLevel(const std::vector<AreaResult>& results) {
  auto qualifies = [&](const std::string& name) {
    for (const AreaResult& r : results)
      if (r.name == name) return r.qualifies();
    return false;  // not run: not certified
  };
  bool core = true, full = true;
  for (const Area& a : AllAreas()) {
    bool q = qualifies(a.name);
    full &= q;
    if (a.core) core &= q;
  }
  if (full) return "Full";
  if (!core) return "None";
  std::string level = "Core";
  // Each optional level needs every area that unlocks it.
  for (const char* option : {"Graphs", "Hints", "Kernels", "Collectives"}) {
    bool all = true;
    for (const Area& a : AllAreas())
      if (a.level && std::string(a.level) == option) all &= qualifies(a.name);
    if (all) level += std::string("+") + option;
  }
  return level;
}

namespace {

std::string FirstLine(const std::string& s, size_t max = 160) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > max) line = line.substr(0, max - 3) + "...";
  return line;
}

// "file.cpp:12: message" -> "message" (the report keeps the location).
std::string StripLocation(const std::string& s) {
  size_t colon = s.find(": ");
  if (colon == std::string::npos) return s;
  size_t line_colon = s.rfind(':', colon - 1);
  if (line_colon == std::string::npos || s.find('\n') < colon) return s;
  for (size_t i = line_colon + 1; i < colon; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return s;
  return s.substr(colon + 2);
}

std::string Upper(std::string s) {
  for (char& c : s) c = c == ' ' ? '_' : static_cast<char>(std::toupper(c));
  return s;
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string MdEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += " ";
    else out += c;
  }
  return out;
}

std::string Counts(const AreaResult& a) {
  std::ostringstream s;
  s << a.passed() << " passed, " << a.failed() << " failed, " << a.skipped()
    << " skipped";
  return s.str();
}

}  // namespace

void PrintArea(std::ostream& out, const AreaResult& area) {
  out << "[" << std::left << std::setw(11) << area.name << "] " << std::setw(16)
      << Upper(area.verdict()) << " " << Counts(area) << "  (" << std::fixed
      << std::setprecision(2) << area.seconds << " s)\n";
  for (const std::string& incident : area.incidents)
    out << "    INCIDENT     " << incident << "\n";
  // Tests that did not simply pass, one line each; identical outcomes with
  // the same message (a plugin without a device fails every test the same
  // way) are folded into one line with a count.
  std::vector<std::pair<const TestResult*, int>> lines;
  for (const TestResult& t : area.tests) {
    if (t.outcome == Outcome::kPassed) continue;
    std::string key = FirstLine(StripLocation(t.detail));
    bool folded = false;
    for (auto& [first, count] : lines)
      if (first->outcome == t.outcome && FirstLine(StripLocation(first->detail)) == key) {
        ++count;
        folded = true;
      }
    if (!folded) lines.push_back({&t, 1});
  }
  for (const auto& [t, count] : lines) {
    std::string what;
    switch (t->outcome) {
      case Outcome::kFailed: what = "FAILED"; break;
      case Outcome::kUnsupported: what = "unsupported"; break;
      case Outcome::kExpectedFailure: what = "expected fail"; break;
      case Outcome::kXPass: what = "XPASS"; break;
      default: break;
    }
    out << "    " << std::setw(13) << what << " ";
    if (count > 1)
      out << t->name << " and " << (count - 1) << " more: ";
    else
      out << t->name << ": ";
    out << FirstLine(StripLocation(t->detail)) << "\n";
  }
}

void PrintSummary(std::ostream& out, const RunReport& report) {
  int xpass = 0, unsupported = 0, xfail = 0;
  for (const AreaResult& a : report.areas) {
    xpass += a.count(Outcome::kXPass);
    unsupported += a.count(Outcome::kUnsupported);
    xfail += a.count(Outcome::kExpectedFailure);
  }
  out << report.passed() << " passed, " << report.failed() << " failed, "
      << report.skipped() << " skipped\n";
  out << "(skipped: " << unsupported << " unsupported, " << xfail
      << " expected failures; " << xpass << " xpass)\n";
  out << "Certification level: " << report.level;
  if (report.areas.size() < AllAreas().size())
    out << " (only " << report.areas.size() << " of " << AllAreas().size()
        << " areas ran; certification needs a full run)";
  out << "\n";
}

nlohmann::json ReportJson(const RunReport& report) {
  nlohmann::json areas = nlohmann::json::array();
  for (const AreaResult& a : report.areas) {
    nlohmann::json tests = nlohmann::json::array();
    for (const TestResult& t : a.tests) {
      nlohmann::json jt = {{"name", t.name},
                           {"result", OutcomeName(t.outcome)},
                           {"ms", t.ms}};
      if (t.outcome == Outcome::kUnsupported) jt["capability"] = t.detail;
      else if (t.outcome == Outcome::kExpectedFailure) jt["reason"] = t.detail;
      else if (!t.detail.empty()) jt["message"] = t.detail;
      tests.push_back(jt);
    }
    const Area* def = FindArea(a.name);
    areas.push_back({{"name", a.name},
                     {"suite", a.suite},
                     {"summary", def ? def->summary : ""},
                     {"result", a.verdict()},
                     {"passed", a.passed()},
                     {"failed", a.failed()},
                     {"skipped", a.skipped()},
                     {"unsupported", a.count(Outcome::kUnsupported)},
                     {"expected_failures", a.count(Outcome::kExpectedFailure)},
                     {"xpass", a.count(Outcome::kXPass)},
                     {"incidents", a.incidents},
                     {"seconds", a.seconds},
                     {"log", a.log_file},
                     {"tests", tests}});
  }
  return {{"format", "tessera-conformance-report/1"},
          {"command", report.command},
          {"started", report.started},
          {"seconds", report.seconds},
          {"run_known_failures", report.run_known_failures},
          {"plugin", report.plugin},
          {"devices", report.devices},
          {"areas", areas},
          {"summary",
           {{"passed", report.passed()},
            {"failed", report.failed()},
            {"skipped", report.skipped()}}},
          {"certification_level", report.level}};
}

std::string JUnitXml(const RunReport& report) {
  std::ostringstream x;
  int total = 0;
  for (const AreaResult& a : report.areas) total += a.tests.size();
  std::string plugin = report.plugin.value("name", "unknown");
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites name=\"tessera-conformance." << XmlEscape(plugin)
    << "\" tests=\"" << total << "\" failures=\"" << report.failed()
    << "\" skipped=\"" << report.skipped() << "\" time=\"" << report.seconds
    << "\">\n";
  for (const AreaResult& a : report.areas) {
    x << "  <testsuite name=\"" << XmlEscape(a.name) << "\" tests=\""
      << a.tests.size() << "\" failures=\"" << a.failed() << "\" skipped=\""
      << a.skipped() << "\" time=\"" << a.seconds << "\">\n";
    for (const TestResult& t : a.tests) {
      std::string test = t.name.substr(t.name.find('.') + 1);
      x << "    <testcase classname=\"tessera.conformance." << XmlEscape(plugin)
        << "." << XmlEscape(a.name) << "\" name=\"" << XmlEscape(test)
        << "\" time=\"" << t.ms / 1000.0 << "\"";
      switch (t.outcome) {
        case Outcome::kPassed:
          x << "/>\n";
          break;
        case Outcome::kXPass:
          x << ">\n      <system-out>XPASS: " << XmlEscape(t.detail)
            << "</system-out>\n    </testcase>\n";
          break;
        case Outcome::kFailed:
          x << ">\n      <failure message=\"" << XmlEscape(FirstLine(t.detail))
            << "\">" << XmlEscape(t.detail) << "</failure>\n    </testcase>\n";
          break;
        case Outcome::kUnsupported:
          x << ">\n      <skipped message=\"unsupported: "
            << XmlEscape(t.detail) << "\"/>\n    </testcase>\n";
          break;
        case Outcome::kExpectedFailure:
          x << ">\n      <skipped message=\"expected failure: "
            << XmlEscape(t.detail) << "\"/>\n    </testcase>\n";
          break;
      }
    }
    x << "  </testsuite>\n";
  }
  x << "</testsuites>\n";
  return x.str();
}

std::string MarkdownReport(const RunReport& report) {
  std::ostringstream md;
  const nlohmann::json& p = report.plugin;
  md << "# Tessera conformance report: " << p.value("name", "unknown") << "\n\n";
  md << "| | |\n|---|---|\n";
  md << "| Plugin | `" << MdEscape(p.value("name", "?")) << "` "
     << MdEscape(p.value("plugin_version", "")) << " ("
     << MdEscape(p.value("vendor", "")) << ") |\n";
  md << "| File | `" << MdEscape(p.value("path", "?")) << "` |\n";
  md << "| Plugin ABI | " << MdEscape(p.value("abi_version", "?")) << " |\n";
  if (p.contains("error"))
    md << "| Error | " << MdEscape(p.value("error", "")) << " |\n";
  md << "| Command | `" << MdEscape(report.command) << "` |\n";
  md << "| Started | " << report.started << " |\n";
  md << "| Duration | " << std::fixed << std::setprecision(1) << report.seconds
     << " s |\n";
  md << "| Result | " << report.passed() << " passed, " << report.failed()
     << " failed, " << report.skipped() << " skipped |\n";
  md << "| **Certification level** | **" << report.level << "** |\n\n";

  md << "## Areas\n\n";
  md << "| Area | Result | Passed | Failed | Unsupported | Expected failures "
        "| Notes |\n|---|---|---:|---:|---:|---:|---|\n";
  for (const AreaResult& a : report.areas) {
    std::string notes;
    for (const std::string& i : a.incidents) notes += i + "; ";
    std::vector<std::string> caps;
    for (const TestResult& t : a.tests)
      if (t.outcome == Outcome::kUnsupported) {
        bool seen = false;
        for (const std::string& c : caps) seen |= c == t.detail;
        if (!seen) caps.push_back(t.detail);
      }
    if (!caps.empty()) {
      notes += "missing: ";
      for (size_t i = 0; i < caps.size(); ++i)
        notes += (i ? ", " : "") + FirstLine(caps[i], 80);
    }
    md << "| " << a.name << " | " << a.verdict() << " | " << a.passed()
       << " | " << a.failed() << " | " << a.count(Outcome::kUnsupported)
       << " | " << a.count(Outcome::kExpectedFailure) << " | "
       << MdEscape(notes) << " |\n";
  }

  md << "\n## Devices and capabilities\n\n";
  if (report.devices.is_array() && !report.devices.empty()) {
    md << "| Capability |";
    for (const auto& d : report.devices)
      md << " " << d.value("ordinal", 0) << ": " << MdEscape(d.value("name", "")) << " |";
    md << "\n|---|";
    for (size_t i = 0; i < report.devices.size(); ++i) md << "---|";
    md << "\n";
    for (const char* key :
         {"type", "total_memory", "buffer_kinds", "managed_memory",
          "prefetch_hint", "advise_hint", "peer_copy", "graphs", "collectives",
          "atomic_scopes", "subgroup_size", "shared_memory_per_group",
          "max_group_size", "compute_units", "stream_weights", "concurrent_streams",
          "executable_formats"}) {
      md << "| " << key << " |";
      for (const auto& d : report.devices) {
        std::string v = d.contains(key) ? (d[key].is_string()
                                               ? d[key].get<std::string>()
                                               : d[key].dump())
                                        : "";
        md << " " << MdEscape(v) << " |";
      }
      md << "\n";
    }
  } else {
    md << "No device could be queried.\n";
  }

  md << "\n## Tests that did not pass\n\n";
  bool any = false;
  for (const AreaResult& a : report.areas)
    for (const TestResult& t : a.tests) {
      if (t.outcome == Outcome::kPassed) continue;
      if (!any) md << "| Test | Result | Detail |\n|---|---|---|\n";
      any = true;
      md << "| " << t.name << " | " << OutcomeName(t.outcome) << " | "
         << MdEscape(FirstLine(t.detail, 300)) << " |\n";
    }
  if (!any) md << "None.\n";
  return md.str();
}

bool WriteReports(const RunReport& report, const std::string& dir,
                  std::string* error) {
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream f(dir + "/" + name);
    f << text;
    if (!f) {
      *error = "cannot write " + dir + "/" + name;
      return false;
    }
    return true;
  };
  return write("report.json", ReportJson(report).dump(2) + "\n") &&
         write("junit.xml", JUnitXml(report)) &&
         write("report.md", MarkdownReport(report));
}

}  // namespace tessera::cts
