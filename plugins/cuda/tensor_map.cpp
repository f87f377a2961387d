// See tensor_map.hpp.
#include "tensor_map.hpp"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>

namespace tessera::cuda {

namespace {

// A decimal unsigned number that fits `max`; false otherwise.
bool parse_number(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno != 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

std::string ParseTensorMapSpecs(const std::string& text, std::vector<TensorMapSpec>* out) {
  out->clear();
  std::istringstream lines(text);
  std::string line;
  size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    if (out->size() == kMaxTensorMaps)
      return "more than " + std::to_string(kMaxTensorMaps) + " tensor maps";
    std::map<std::string, uint64_t> fields;
    std::istringstream tokens(line);
    std::string token;
    while (tokens >> token) {
      const size_t eq = token.find('=');
      const std::string key = token.substr(0, eq);
      static const char* const kKeys[] = {"arg", "element_bytes", "rows", "ld", "box_rows", "box_cols", "swizzle"};
      bool known = false;
      for (const char* k : kKeys) known = known || key == k;
      uint64_t v = 0;
      if (eq == std::string::npos || !known || !parse_number(token.substr(eq + 1), UINT64_MAX >> 1, &v))
        return "line " + std::to_string(number) + ": '" + token.substr(0, 64) +
               "' is not one of arg, element_bytes, rows, ld, box_rows, box_cols, swizzle = a number";
      if (!fields.emplace(key, v).second)
        return "line " + std::to_string(number) + ": " + key + " given twice";
    }
    if (fields.size() != 7)
      return "line " + std::to_string(number) + ": needs arg, element_bytes, rows, ld, box_rows, box_cols and swizzle";
    for (const char* k : {"arg", "element_bytes", "box_rows", "box_cols", "swizzle"})
      if (fields[k] > UINT32_MAX) return "line " + std::to_string(number) + ": " + k + " is out of range";
    TensorMapSpec s;
    s.arg = static_cast<uint32_t>(fields["arg"]);
    s.element_bytes = static_cast<uint32_t>(fields["element_bytes"]);
    s.rows = fields["rows"];
    s.ld = fields["ld"];
    s.box_rows = static_cast<uint32_t>(fields["box_rows"]);
    s.box_cols = static_cast<uint32_t>(fields["box_cols"]);
    s.swizzle = static_cast<uint32_t>(fields["swizzle"]);
    out->push_back(s);
  }
  return "";
}

std::string CheckTensorMap(const TensorMapSpec& s, uint64_t address, uint64_t bytes, TiledMapArgs* out) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  if (s.element_bytes != 1 && s.element_bytes != 2 && s.element_bytes != 4 && s.element_bytes != 8)
    return "element_bytes " + n(s.element_bytes) + " is not 1, 2, 4 or 8";
  if (s.swizzle != 0 && s.swizzle != 32 && s.swizzle != 64 && s.swizzle != 128)
    return "swizzle " + n(s.swizzle) + " is not 0, 32, 64 or 128 bytes";
  // cuTensorMapEncodeTiled: globalAddress 16-byte aligned; globalDim
  // non-zero, at most 2^32; globalStrides multiples of 16 below 2^40, each
  // at least the row it steps over; boxDim non-zero, at most 256, the inner
  // one a multiple of 16 bytes and within the swizzle span.
  if (address % 16) return "the buffer's address " + n(address) + " is not 16-byte aligned";
  if (s.ld == 0 || s.ld > (uint64_t{1} << 32) || s.rows == 0 || s.rows > (uint64_t{1} << 32))
    return "the view " + n(s.rows) + " x " + n(s.ld) + " has a dimension that is 0 or above 2^32";
  const uint64_t pitch = s.ld * s.element_bytes;
  if (pitch % 16 || pitch >= (uint64_t{1} << 40))
    return "the row pitch of " + n(pitch) + " bytes is not a multiple of 16 below 2^40";
  if (s.box_rows == 0 || s.box_rows > 256 || s.box_cols == 0 || s.box_cols > 256)
    return "the box " + n(s.box_rows) + " x " + n(s.box_cols) + " has a dimension that is 0 or above 256";
  const uint64_t inner = uint64_t{s.box_cols} * s.element_bytes;
  if (inner % 16) return "the box's rows of " + n(inner) + " bytes are not a multiple of 16";
  if (s.swizzle != 0 && inner > s.swizzle)
    return "the box's rows of " + n(inner) + " bytes exceed the " + n(s.swizzle) + "-byte swizzle span";
  if (s.box_cols > s.ld || s.box_rows > s.rows)
    return "the box " + n(s.box_rows) + " x " + n(s.box_cols) + " is larger than the view " + n(s.rows) + " x " +
           n(s.ld);
  if (s.rows > bytes / pitch)
    return "the view " + n(s.rows) + " x " + n(s.ld) + " of " + n(s.element_bytes) + "-byte elements needs " +
           n(s.rows) + " x " + n(pitch) + " bytes; the buffer has " + n(bytes);
  out->address = address;
  out->global_dim[0] = s.ld;
  out->global_dim[1] = s.rows;
  out->global_stride = pitch;
  out->box_dim[0] = s.box_cols;
  out->box_dim[1] = s.box_rows;
  return "";
}

}  // namespace tessera::cuda
