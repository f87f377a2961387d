// Minimal .npy reader/writer (NumPy format 1.0/2.0, C order, little endian).
#ifndef TESSERA_TOOLS_RUN_NPY_HPP_
#define TESSERA_TOOLS_RUN_NPY_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::run {

struct NpyArray {
  std::string dtype;             // Tessera spelling: f32, f64, f16, bf16, f8E4M3FN, i8, i16, i32, i64, ui32, i1
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  std::string descr;             // ReadNpy: the file's numpy dtype ('<i4')
};

// The numpy dtype a Tessera dtype is written as ('<f4', '<i2', '|u1', ...),
// or "" when it has none.  Several Tessera dtypes share one (bf16 and ui16
// '<u2', fp8 and ui8 '|u1', i32 and si32 and i24 '<i4'): a file of that
// dtype can be given for any of them.
std::string NpyDescr(const std::string& dtype);

// Returns "" on success, else a message naming the file and the problem.
std::string ReadNpy(const std::string& path, NpyArray* out);
std::string WriteNpy(const std::string& path, const NpyArray& array);

}  // namespace tessera::run

#endif
