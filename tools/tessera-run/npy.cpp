#include "npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera::run {
namespace {

const char* kDescr[][2] = {{"<f4", "f32"}, {"<f8", "f64"}, {"<f2", "f16"},
                           {"|i1", "i8"},  {"<i4", "i32"}, {"<i8", "i64"}};

std::string field(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t colon = header.find(':', k);
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

}  // namespace

size_t DtypeSize(const std::string& d) {
  if (d == "f64" || d == "i64") return 8;
  if (d == "f32" || d == "i32") return 4;
  if (d == "f16" || d == "bf16") return 2;
  return 1;
}

std::string ReadNpy(const std::string& path, NpyArray* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open";
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return path + ": not a .npy file (bad magic)";
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    uint16_t h;
    in.read(reinterpret_cast<char*>(&h), 2);
    hlen = h;
  } else {
    in.read(reinterpret_cast<char*>(&hlen), 4);
  }
  std::string header(hlen, '\0');
  in.read(header.data(), hlen);
  std::string descr = field(header, "descr"), order = field(header, "fortran_order"),
              shape = field(header, "shape");
  if (order.find("True") != std::string::npos)
    return path + ": Fortran-order arrays are not supported (use np.ascontiguousarray)";
  out->dtype.clear();
  for (auto& d : kDescr)
    if (descr.find(d[0]) != std::string::npos) out->dtype = d[1];
  if (out->dtype.empty()) return path + ": unsupported dtype " + descr;
  out->shape.clear();
  std::string dims = shape.substr(1, shape.size() - 2);
  std::stringstream ss(dims);
  std::string tok;
  size_t n = 1;
  while (std::getline(ss, tok, ','))
    if (tok.find_first_not_of(" ") != std::string::npos) {
      out->shape.push_back(std::stoll(tok));
      n *= out->shape.back();
    }
  out->bytes.resize(n * DtypeSize(out->dtype));
  if (!in.read(reinterpret_cast<char*>(out->bytes.data()), out->bytes.size()))
    return path + ": file is shorter than its header says";
  return "";
}

std::string WriteNpy(const std::string& path, const NpyArray& a) {
  std::string descr;
  for (auto& d : kDescr)
    if (a.dtype == d[1]) descr = d[0];
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
