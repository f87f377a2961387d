// Minimal .npy reader/writer (NumPy format 1.0/2.0, C order, little endian).
#ifndef TESSERA_TOOLS_RUN_NPY_HPP_
#define TESSERA_TOOLS_RUN_NPY_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::run {

struct NpyArray {
  std::string dtype;             // Tessera spelling: f32, f64, f16, bf16, f8E4M3FN, i8, i32, i64, i1
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};

// Returns "" on success, else a message naming the file and the problem.
std::string ReadNpy(const std::string& path, NpyArray* out);
std::string WriteNpy(const std::string& path, const NpyArray& array);

}  // namespace tessera::run

#endif
