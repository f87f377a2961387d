// TMA tensor maps of the kernels the cuda compiler part makes (compiler/
// Tma.h): how the compiler describes them and what the plugin checks before
// it encodes one at a launch (cuTensorMapEncodeTiled).
//
// A kernel with TMA copies takes, after its own parameters, one 128-byte
// tensor map per line of its archive entry ".tensormaps:<kernel>", in
// order.  A line (tokens in any order, each once):
//
//   arg=<i> element_bytes=<b> rows=<r> ld=<n> box_rows=<br> box_cols=<bc> swizzle=<s>
//
// = buffer argument i viewed as a row-major matrix of r rows of n elements
// of b bytes (row pitch n*b bytes), copied in boxes of br x bc elements
// with the s-byte shared-memory swizzle (0, 32, 64 or 128).
//
// Pure logic (no driver): shared by the compiler part, which writes the
// lines, and the plugin, which reads and checks them; unit-tested in
// cuda_plugin_test.cpp against the driver's documented rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::cuda {

// Archive entries of this prefix hold a kernel's tensor maps, not an image.
inline constexpr char kTensorMapEntryPrefix[] = ".tensormaps:";

struct TensorMapSpec {
  uint32_t arg = 0;
  uint32_t element_bytes = 0;
  uint64_t rows = 0, ld = 0;
  uint32_t box_rows = 0, box_cols = 0;
  uint32_t swizzle = 0;
};

// The arguments of cuTensorMapEncodeTiled for a rank-2 map (innermost
// dimension first, as the driver takes them).
struct TiledMapArgs {
  uint64_t address = 0;
  uint64_t global_dim[2] = {0, 0};
  uint64_t global_stride = 0;  // bytes between rows (the lower rank-1 strides)
  uint32_t box_dim[2] = {0, 0};
  uint32_t element_strides[2] = {1, 1};
};

// One line of an archive entry (the compiler part writes them with it).
inline std::string FormatTensorMapSpec(const TensorMapSpec& s) {
  return "arg=" + std::to_string(s.arg) + " element_bytes=" + std::to_string(s.element_bytes) +
         " rows=" + std::to_string(s.rows) + " ld=" + std::to_string(s.ld) + " box_rows=" + std::to_string(s.box_rows) +
         " box_cols=" + std::to_string(s.box_cols) + " swizzle=" + std::to_string(s.swizzle);
}

// Parses the lines of an archive entry; "" or what is wrong (line number
// and token).  At most kMaxTensorMaps lines.
inline constexpr size_t kMaxTensorMaps = 64;
std::string ParseTensorMapSpecs(const std::string& text, std::vector<TensorMapSpec>* out);

// Checks `spec` on a buffer argument at device address `address` with
// `bytes` bytes from there (the launch's buffer less its offset) against
// cuTensorMapEncodeTiled's rules and the view fitting the buffer; fills
// `out`.  "" or the rule broken, naming the value.
std::string CheckTensorMap(const TensorMapSpec& spec, uint64_t address, uint64_t bytes, TiledMapArgs* out);

}  // namespace tessera::cuda
