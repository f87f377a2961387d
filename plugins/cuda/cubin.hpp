// Module images for Executable_Load, checked before the driver sees them.
// cuModuleLoadDataEx takes a pointer and no size: it trusts the offsets in
// an ELF's headers and reads PTX up to a NUL.  Images come from untrusted
// callers and files, so every offset is checked against the bytes actually
// given, and PTX gets a NUL-terminated copy.  Pure functions (no driver):
// cuda_plugin_test checks them on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensor_map.hpp"

namespace tessera::cuda {

// Executable_Load reads at most this much (a file or a caller's image).
inline constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;

enum class ImageKind { kCubin, kFatbin, kPtx, kUnknown };
const char* image_kind_name(ImageKind k);

// ELF (a cubin), a fatbinary, PTX text (".version" near the start), or not
// recognised.
ImageKind classify_image(const void* data, size_t size);

// "" when the ELF64 image is a CUDA cubin whose headers, sections and
// segments all lie inside `size` bytes; else what is wrong.
std::string check_cubin(const void* data, size_t size);
// "" when the fatbinary's header and declared payload lie inside `size`.
std::string check_fatbin(const void* data, size_t size);

// One image, ready for cuModuleLoadDataEx: its own 8-byte aligned copy (PTX
// NUL-terminated), what it is, and a name for messages.
struct PreparedImage {
  std::string name;         // archive entry name ("" for a single image)
  ImageKind kind = ImageKind::kUnknown;
  std::vector<uint64_t> bytes;  // aligned storage
  size_t size = 0;              // bytes used in `bytes` (PTX: with its NUL)
  const void* data() const { return bytes.data(); }
};

// Checks one image as `format` wants it ("cubin": ELF or fatbinary; "ptx":
// text; "any": either) and copies it.  "" or what is wrong.
std::string prepare_image(const void* data, size_t size, const char* format,
                          PreparedImage* out);

// "archive:cubin": a kernel archive (tessera/kernel_archive.hpp) whose
// entries, named by kernel, are each a cubin/fatbinary or PTX text, beside
// the ".tensormaps:<kernel>" entries of kernels with TMA copies
// (tensor_map.hpp), parsed into `tensor_maps`.  "" or what is wrong
// (naming the entry).
std::string prepare_archive(const void* data, size_t size, std::vector<PreparedImage>* out,
                            std::map<std::string, std::vector<TensorMapSpec>>* tensor_maps);

}  // namespace tessera::cuda
