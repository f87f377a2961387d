#include "signature.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tessera/cpu_kernel.h"

namespace tessera::cpu {
namespace {

// A kernel with more arguments than this is malformed: it bounds the work a
// corrupt signature can cause.
constexpr size_t kMaxArgs = 4096;

bool ParseNumber(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  *out = std::strtoull(s.c_str(), nullptr, 10);
  return errno == 0;
}

}  // namespace

std::string ParseKernelSignature(const char* text, KernelSignature* out) {
  *out = KernelSignature{};
  // The text lives in the loaded object; it must end within the limit.
  const void* end = std::memchr(text, '\0', TESSERA_CPU_SIGNATURE_MAX_BYTES);
  if (end == nullptr) return "it has no NUL within " + std::to_string(TESSERA_CPU_SIGNATURE_MAX_BYTES) + " bytes";
  const std::string all(text, static_cast<const char*>(end));
  size_t pos = 0;
  while (pos < all.size()) {
    const size_t next = all.find(' ', pos);
    const std::string tok = all.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    pos = next == std::string::npos ? all.size() : next + 1;
    if (tok.empty()) continue;
    if (out->has_grid) return "'" + tok + "' after the grid";
    if (tok.rfind("grid=", 0) == 0) {
      const std::string g = tok.substr(5);
      size_t c1 = g.find(','), c2 = c1 == std::string::npos ? c1 : g.find(',', c1 + 1);
      uint64_t v[3];
      if (c2 == std::string::npos || !ParseNumber(g.substr(0, c1), &v[0]) ||
          !ParseNumber(g.substr(c1 + 1, c2 - c1 - 1), &v[1]) || !ParseNumber(g.substr(c2 + 1), &v[2]))
        return "malformed grid '" + tok + "'";
      for (int i = 0; i < 3; ++i) {
        if (v[i] == 0 || v[i] > 0xffffffffull) return "grid '" + tok + "' out of range";
        out->grid[i] = static_cast<uint32_t>(v[i]);
      }
      out->has_grid = true;
      continue;
    }
    KernelSignature::Arg a;
    if ((tok[0] != 's' && tok[0] != 'b') || !ParseNumber(tok.substr(1), &a.bytes))
      return "malformed argument '" + tok + "'";
    a.buffer = tok[0] == 'b';
    if (!a.buffer && a.bytes == 0) return "a scalar of 0 bytes";
    if (out->args.size() == kMaxArgs) return "more than " + std::to_string(kMaxArgs) + " arguments";
    out->args.push_back(a);
  }
  return "";
}

std::string DescribeSignature(const KernelSignature& sig) {
  std::string s = std::to_string(sig.args.size()) + (sig.args.size() == 1 ? " argument (" : " arguments (");
  for (size_t i = 0; i < sig.args.size(); ++i) {
    if (i) s += ", ";
    s += sig.args[i].buffer
             ? (sig.args[i].bytes ? "buffer of " + std::to_string(sig.args[i].bytes) + " bytes" : "buffer")
             : std::to_string(sig.args[i].bytes) + "-byte scalar";
  }
  return s + ")";
}

}  // namespace tessera::cpu
