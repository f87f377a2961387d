#include "npy.hpp"

#include <sys/stat.h>

#include "tessera/element_types.hpp"
#include "tessera/output_file.hpp"
#include "tessera/printable.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera::run {
using elements::DtypeSize;
namespace {

// NumPy has no bf16 or fp8: those travel as their raw bit patterns, bf16 as
// '<u2' and both fp8 types as '|u1' (written so; read also as the void types
// '<V2' / '|V2' and '|V1' / '<V1' that raw-byte dtypes give; a byte file
// reads as f8E4M3FN, which tessera-run accepts for an f8E5M2 argument too).
// i1 is numpy's bool '|b1' (bytes 0 and 1).  The first spelling of a dtype
// is the one written; the last match is the one read.
const char* kDescr[][2] = {{"<f4", "f32"}, {"<f8", "f64"}, {"<f2", "f16"},
                           {"|i1", "i8"},  {"<i2", "i16"}, {"<i4", "i32"}, {"<i8", "i64"},
                           {"<u4", "ui32"}, {"<u8", "ui64"},
                           {"<u2", "bf16"}, {"<V2", "bf16"}, {"|V2", "bf16"},
                           {"|u1", "f8E5M2"},
                           {"|u1", "f8E4M3FN"}, {"|V1", "f8E4M3FN"}, {"<V1", "f8E4M3FN"},
                           {"|b1", "i1"}};

// Headers are a Python dict literal; NumPy keeps them under 64 KiB (format
// 1.0) and writes small ones in practice. A larger one is a corrupt file.
constexpr uint32_t kMaxHeader = 1u << 20;

/// The header dict of a .npy file: NumPy writes it with `repr()` and reads
/// it with a literal evaluator that keeps the last of repeated keys and
/// refuses any key but these three.  This parser accepts exactly that dict
/// and refuses the rest: a repeated key would read differently here and in
/// NumPy, so it is an error rather than a guess.
struct Header {
  std::string descr, shape;  // descr without quotes; shape as its "(...)" text
  bool fortran_order = false;
};

class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  /// "" on success, else what is wrong with the dict.
  std::string Parse(Header* out) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip();
    if (!eat('{')) return "the header is not a dict (it must start with '{')";
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!quoted(&key)) return "expected a quoted key at byte " + std::to_string(i_);
      skip();
      if (!eat(':')) return "expected ':' after '" + key + "'";
      skip();
      bool* seen = key == "descr" ? &seen_descr : key == "fortran_order" ? &seen_order
                   : key == "shape" ? &seen_shape : nullptr;
      if (!seen) return "unknown key '" + key + "' (a .npy header has 'descr', 'fortran_order' and 'shape')";
      if (*seen) return "key '" + key + "' appears twice";
      *seen = true;
      if (key == "descr") {
        if (!quoted(&out->descr))
          return "'descr' must be a dtype string such as '<f4' (structured dtypes are not supported)";
      } else if (key == "fortran_order") {
        if (word("True")) out->fortran_order = true;
        else if (word("False")) out->fortran_order = false;
        else return "'fortran_order' must be True or False";
      } else if (!tuple(&out->shape)) {
        return "'shape' must be a tuple of integers";
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return "expected ',' or '}' after the value of '" + key + "'";
    }
    skip();
    if (i_ != s_.size()) return "text after the closing '}'";
    if (!seen_descr || !seen_order || !seen_shape)
      return "the header needs 'descr', 'fortran_order' and 'shape'";
    return "";
  }

 private:
  void skip() { while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_; }
  bool eat(char c) { return i_ < s_.size() && s_[i_] == c ? (++i_, true) : false; }
  bool word(const char* w) {
    size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  // A Python string literal without escapes (dtype strings and keys have none).
  bool quoted(std::string* out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char q = s_[i_];
    size_t close = s_.find(q, i_ + 1);
    if (close == std::string::npos) return false;
    *out = s_.substr(i_ + 1, close - i_ - 1);
    if (out->find('\\') != std::string::npos) return false;
    i_ = close + 1;
    return true;
  }
  bool tuple(std::string* out) {
    size_t begin = i_;
    if (!eat('(')) return false;
    size_t close = s_.find(')', i_);
    if (close == std::string::npos) return false;
    i_ = close + 1;
    *out = s_.substr(begin, i_ - begin);
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};

/// Parses a Python tuple of non-negative integers, "()", "(4,)" or "(a, b)",
/// into dims; false on anything else (negative, not a number, an empty
/// element, "(4)" which Python reads as an int, an element count above
/// 2^62).
bool parseShape(const std::string& tuple, std::vector<int64_t>* shape, uint64_t* count) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') return false;
  shape->clear();
  *count = 1;
  std::vector<std::string> tokens;
  std::stringstream ss(tuple.substr(1, tuple.size() - 2));
  for (std::string tok; std::getline(ss, tok, ',');) tokens.push_back(tok);
  if (tuple[tuple.size() - 2] == ',') tokens.push_back("");  // getline drops it
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string tok = tokens[i];
    size_t b = tok.find_first_not_of(" ");
    if (b == std::string::npos) {
      // Only "()" and the trailing comma of "(4,)" / "(4, 5,)" may be empty.
      if (tokens.size() == 1 || (i + 1 == tokens.size() && i > 0)) continue;
      return false;
    }
    size_t e = tok.find_last_not_of(" ");
    tok = tok.substr(b, e - b + 1);
    if (tok.size() > 1 && tok.back() == 'L') tok.pop_back();  // Python 2 wrote "4L"
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos || tok.size() > 18)
      return false;
    int64_t d = std::stoll(tok);
    if (d != 0 && *count > (uint64_t(1) << 62) / static_cast<uint64_t>(d)) return false;
    shape->push_back(d);
    *count *= static_cast<uint64_t>(d);
  }
  // "(4)" is the int 4 to Python, not a tuple: NumPy refuses it too.
  if (shape->size() == 1 && tuple.find(',') == std::string::npos) return false;
  return true;
}

}  // namespace


std::string ReadNpy(const std::string& path, NpyArray* out) {
  // Regular files only: a FIFO would block the open below, and a folder
  // makes the stream's read throw.  (The data is bounded by the header,
  // checked against the file's size before anything is allocated.)
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return path + ": not a regular file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open";
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return path + ": not a .npy file (bad magic)";
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char h[2];
    if (!in.read(reinterpret_cast<char*>(h), 2)) return path + ": truncated header";
    hlen = h[0] | (h[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char h[4];
    if (!in.read(reinterpret_cast<char*>(h), 4)) return path + ": truncated header";
    hlen = h[0] | (h[1] << 8) | (h[2] << 16) | (uint32_t(h[3]) << 24);
  } else {
    return path + ": unsupported .npy format version " + std::to_string(int(magic[6]));
  }
  if (hlen > kMaxHeader) return path + ": header of " + std::to_string(hlen) + " bytes (corrupt file?)";
  std::string header(hlen, '\0');
  if (!in.read(header.data(), hlen)) return path + ": truncated header";
  Header h;
  if (std::string why = HeaderParser(header).Parse(&h); !why.empty())
    return path + ": malformed header (" + Printable(why, 200) + "): " +
           Printable(header.substr(0, header.find_last_not_of(" \n") + 1), 200);
  if (h.fortran_order)
    return path + ": Fortran-order arrays are not supported (use np.ascontiguousarray)";
  out->dtype.clear();
  for (auto& d : kDescr)
    if (h.descr == d[0]) out->dtype = d[1];
  if (out->dtype.empty())
    return path + ": unsupported dtype '" + Printable(h.descr, 40) +
           "' (little-endian f16, f32, f64, i8, i16, i32, i64, u4, u8, bool '|b1' for i1; bf16 as '<u2' and fp8 "
           "as '|u1' bit patterns; use arr.astype('<f4'))";
  out->descr = h.descr;
  uint64_t count = 0;
  const std::string& shape = h.shape;
  if (!parseShape(shape, &out->shape, &count) || count > (uint64_t(1) << 62) / DtypeSize(out->dtype))
    return path + ": malformed or too large shape " + Printable(shape, 80);
  // Check the size against the file before allocating: a corrupt header must
  // not turn into a multi-gigabyte allocation.
  const uint64_t bytes = count * DtypeSize(out->dtype);
  const std::streampos data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const uint64_t available = static_cast<uint64_t>(in.tellg() - data_start);
  in.seekg(data_start);
  if (available < bytes)
    return path + ": file is shorter than its header says (" + std::to_string(available) +
           " data bytes, shape " + shape + " needs " + std::to_string(bytes) + ")";
  // np.save writes nothing after the data: more bytes mean the header's
  // shape was edited or the file was appended to, and guessing which part
  // is the array would give wrong results.
  if (available > bytes)
    return path + ": file is longer than its header says (" + std::to_string(available) +
           " data bytes, shape " + shape + " needs " + std::to_string(bytes) + ")";
  out->bytes.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(out->bytes.data()), out->bytes.size()))
    return path + ": read failed";
  // numpy's bool is one byte, 0 or 1; other values are not booleans.
  if (out->dtype == "i1")
    for (size_t i = 0; i < out->bytes.size(); ++i)
      if (out->bytes[i] > 1)
        return path + ": bool element " + std::to_string(i) + " is byte " +
               std::to_string(out->bytes[i]) + " (numpy bools are 0 or 1)";
  return "";
}

std::string NpyDescr(const std::string& dtype) {
  for (auto& d : kDescr)
    if (dtype == d[1]) return d[0];
  // Any other integer type: numpy's integer of its storage bytes.
  if (dtype != "i1" && elements::HasElementSize(dtype) && !elements::IsFloatDtype(dtype)) {
    const size_t bytes = elements::DtypeSize(dtype);
    return std::string(bytes == 1 ? "|" : "<") + (dtype.rfind("ui", 0) == 0 ? "u" : "i") + std::to_string(bytes);
  }
  return "";
}

std::string WriteNpy(const std::string& path, const NpyArray& a) {
  const std::string descr = NpyDescr(a.dtype);
  if (descr.empty()) return path + ": cannot write dtype " + a.dtype;
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  const uint16_t hlen = static_cast<uint16_t>(header.size());
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(hlen & 0xff);
  file += static_cast<char>(hlen >> 8);
  file += header;
  file.append(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  // Atomic for a regular file (a full disk leaves no truncated .npy), in
  // place for a device; errors carry the reason.
  if (Status st = WriteOutputFile(path, file); !st.ok()) return st.message();
  return "";
}

}  // namespace tessera::run
