#include "npy.hpp"

#include <sys/stat.h>

#include "tessera/element_types.hpp"

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
                           {"|i1", "i8"},  {"<i4", "i32"}, {"<i8", "i64"},
                           {"<u2", "bf16"}, {"<V2", "bf16"}, {"|V2", "bf16"},
                           {"|u1", "f8E5M2"},
                           {"|u1", "f8E4M3FN"}, {"|V1", "f8E4M3FN"}, {"<V1", "f8E4M3FN"},
                           {"|b1", "i1"}};

// Headers are a Python dict literal; NumPy keeps them under 64 KiB (format
// 1.0) and writes small ones in practice. A larger one is a corrupt file.
constexpr uint32_t kMaxHeader = 1u << 20;

/// The text after `'key':` up to the next top-level ',' or '}' (a tuple is
/// returned whole). Empty when the key is missing or the dict is malformed.
std::string field(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos) return "";
  if (header[start] == '(') {
    size_t close = header.find(')', start);
    return close == std::string::npos ? "" : header.substr(start, close - start + 1);
  }
  size_t end = header.find_first_of(",}", start);
  return end == std::string::npos ? "" : header.substr(start, end - start);
}

/// Parses "(a, b, ...)" into dims; false on anything else (negative, not a
/// number, overflowing the element count).
bool parseShape(const std::string& tuple, std::vector<int64_t>* shape, uint64_t* count) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') return false;
  shape->clear();
  *count = 1;
  std::stringstream ss(tuple.substr(1, tuple.size() - 2));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t b = tok.find_first_not_of(" ");
    if (b == std::string::npos) continue;  // "(4,)" has an empty last token
    size_t e = tok.find_last_not_of(" L");  // Python 2 wrote "4L"
    tok = tok.substr(b, e - b + 1);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos ||
        tok.size() > 18)
      return false;
    int64_t d = std::stoll(tok);
    if (d != 0 && *count > (uint64_t(1) << 62) / static_cast<uint64_t>(d)) return false;
    shape->push_back(d);
    *count *= static_cast<uint64_t>(d);
  }
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
  std::string descr = field(header, "descr"), order = field(header, "fortran_order"),
              shape = field(header, "shape");
  if (descr.empty() || order.empty() || shape.empty())
    return path + ": malformed header (needs 'descr', 'fortran_order' and 'shape'): " +
           header.substr(0, header.find_last_not_of(" \n") + 1);
  if (order.find("True") != std::string::npos)
    return path + ": Fortran-order arrays are not supported (use np.ascontiguousarray)";
  out->dtype.clear();
  for (auto& d : kDescr)
    if (descr.find(d[0]) != std::string::npos) out->dtype = d[1];
  if (out->dtype.empty())
    return path + ": unsupported dtype " + descr +
           " (little-endian f16, f32, f64, i8, i32 or i64, bool '|b1' for i1; bf16 as '<u2' and fp8 as '|u1' "
           "bit patterns; use arr.astype('<f4'))";
  uint64_t count = 0;
  if (!parseShape(shape, &out->shape, &count)) return path + ": malformed or too large shape " + shape;
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
  out->bytes.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(out->bytes.data()), out->bytes.size()))
    return path + ": read failed";
  return "";
}

std::string WriteNpy(const std::string& path, const NpyArray& a) {
  std::string descr;
  for (auto& d : kDescr)
    if (a.dtype == d[1] && descr.empty()) descr = d[0];
  if (descr.empty()) return path + ": cannot write dtype " + a.dtype;
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) return path + ": cannot create";
  uint16_t hlen = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&hlen), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  return out ? "" : path + ": write failed";
}

}  // namespace tessera::run
