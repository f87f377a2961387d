// Quoting bytes a message did not make (a file's header, a cache entry's
// first line): shown as text, with every byte that is not printable ASCII
// as \xNN, and cut at `max` bytes, so that binary garbage cannot reach the
// user's terminal as control sequences.
#ifndef TESSERA_PRINTABLE_HPP_
#define TESSERA_PRINTABLE_HPP_

#include <cstdio>
#include <string>
#include <string_view>

namespace tessera {

inline std::string Printable(std::string_view bytes, size_t max = 80) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (bytes.size() > max) out += "...";
  return out;
}

// Multi-line text that quotes a user's file (MLIR's diagnostics print the
// offending source line): kept as it is, UTF-8 included, but control
// characters other than newline and tab (ESC starts terminal sequences),
// DEL and the C1 controls (U+0080..U+009F) become \xNN.
inline std::string SafeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c1) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c1 ? static_cast<unsigned char>(text[++i]) : c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace tessera

#endif
