// The command-line form of a placement (program_compiler.hpp,
// ParseMeshText / ParseShardingText), shared by tessera-run and
// tessera-compile so both read the same spelling.
#include <cerrno>
#include <cstdlib>

#include "tessera/program_compiler.hpp"

namespace tessera {

namespace {
constexpr unsigned long long kMaxAxisSize = 1ull << 20;

bool ParseSize(const std::string& text, unsigned long long* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && *out >= 1 && *out <= kMaxAxisSize;
}
}  // namespace

std::string ParseMeshText(const std::string& text, std::vector<ProgramCompileOptions::MeshAxis>* mesh) {
  mesh->clear();
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const size_t eq = item.find('=');
    unsigned long long n = 0;
    if (eq == std::string::npos || eq == 0 || !ParseSize(item.substr(eq + 1), &n))
      return "each axis is NAME=SIZE with a size from 1 to 1048576 (\"dp=2,tp=2\")";
    mesh->push_back({item.substr(0, eq), static_cast<int64_t>(n)});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return "";
}

std::string ParseShardingText(const std::string& text, ProgramCompileOptions::DimAxes* spec) {
  spec->clear();
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    const std::string dim = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    std::vector<std::string> axes;
    if (dim != "-") {
      size_t from = 0;
      while (true) {
        const size_t star = dim.find('*', from);
        std::string a = dim.substr(from, star == std::string::npos ? std::string::npos : star - from);
        if (a.empty()) return "each dim is '-' (whole) or mesh axes joined by '*' (\"dp*tp,-\")";
        axes.push_back(std::move(a));
        if (star == std::string::npos) break;
        from = star + 1;
      }
    }
    spec->push_back(std::move(axes));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return "";
}

}  // namespace tessera
