#include "cubin.hpp"

#include <cstring>

#include "tessera/kernel_archive.hpp"

namespace tessera::cuda {

namespace {

constexpr uint16_t kEmCuda = 190;     // EM_CUDA
constexpr uint32_t kShtNobits = 8;    // SHT_NOBITS: no bytes in the file
constexpr uint32_t kFatbinMagic = 0xBA55ED50u;

template <class T>
T rd(const unsigned char* p, size_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof v);
  return v;
}

// [off, off + count * entsize) inside size, without overflow.
bool table_fits(uint64_t off, uint64_t count, uint64_t entsize, uint64_t size) {
  if (count == 0) return true;
  if (off > size || entsize == 0) return false;
  if (count > (size - off) / entsize) return false;
  return true;
}

bool range_fits(uint64_t off, uint64_t len, uint64_t size) {
  return off <= size && len <= size - off;
}

}  // namespace

const char* image_kind_name(ImageKind k) {
  switch (k) {
    case ImageKind::kCubin: return "cubin";
    case ImageKind::kFatbin: return "fatbinary";
    case ImageKind::kPtx: return "PTX";
    default: return "unknown";
  }
}

ImageKind classify_image(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!p || size == 0) return ImageKind::kUnknown;
  if (size >= 4 && std::memcmp(p, "\x7f" "ELF", 4) == 0) return ImageKind::kCubin;
  if (size >= 4 && rd<uint32_t>(p, 0) == kFatbinMagic) return ImageKind::kFatbin;
  // PTX: text whose first directive is .version (after comments).
  size_t window = size < 64 * 1024 ? size : 64 * 1024;
  static const char kVersion[] = ".version";
  const size_t n = sizeof kVersion - 1;
  for (size_t i = 0; i + n <= window; ++i)
    if (std::memcmp(p + i, kVersion, n) == 0) return ImageKind::kPtx;
  return ImageKind::kUnknown;
}

std::string check_cubin(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!p || size < 64) return "a cubin of " + std::to_string(size) + " bytes is truncated (an ELF64 header alone is 64)";
  if (std::memcmp(p, "\x7f" "ELF", 4) != 0) return "not an ELF file (no \\x7fELF magic)";
  if (p[4] != 2) return "not a 64-bit ELF (EI_CLASS " + std::to_string(p[4]) + ")";
  if (p[5] != 1) return "not a little-endian ELF";
  const uint16_t machine = rd<uint16_t>(p, 0x12);
  if (machine != kEmCuda)
    return "an ELF for machine " + std::to_string(machine) + ", not a CUDA cubin (EM_CUDA = 190)";
  const uint64_t phoff = rd<uint64_t>(p, 0x20), shoff = rd<uint64_t>(p, 0x28);
  const uint16_t phentsize = rd<uint16_t>(p, 0x36), phnum = rd<uint16_t>(p, 0x38);
  const uint16_t shentsize = rd<uint16_t>(p, 0x3A), shnum = rd<uint16_t>(p, 0x3C);
  const uint16_t shstrndx = rd<uint16_t>(p, 0x3E);
  if (phnum && phentsize != 56)
    return "bad program header size " + std::to_string(phentsize) + " (ELF64: 56)";
  if (shnum && shentsize != 64)
    return "bad section header size " + std::to_string(shentsize) + " (ELF64: 64)";
  if (!table_fits(phoff, phnum, phentsize, size))
    return "its program headers lie past the end of the " + std::to_string(size) +
           "-byte image (truncated?)";
  if (!table_fits(shoff, shnum, shentsize, size))
    return "its section headers lie past the end of the " + std::to_string(size) +
           "-byte image (truncated?)";
  if (shnum && shstrndx >= shnum) return "its section-name table index is out of range";
  for (uint16_t i = 0; i < shnum; ++i) {
    const size_t h = static_cast<size_t>(shoff) + size_t{i} * 64;
    const uint32_t type = rd<uint32_t>(p, h + 4);
    const uint64_t off = rd<uint64_t>(p, h + 0x18), len = rd<uint64_t>(p, h + 0x20);
    if (type != kShtNobits && !range_fits(off, len, size))
      return "section " + std::to_string(i) + " (" + std::to_string(len) + " bytes at " +
             std::to_string(off) + ") lies past the end of the " + std::to_string(size) +
             "-byte image (truncated?)";
  }
  for (uint16_t i = 0; i < phnum; ++i) {
    const size_t h = static_cast<size_t>(phoff) + size_t{i} * 56;
    const uint64_t off = rd<uint64_t>(p, h + 8), len = rd<uint64_t>(p, h + 0x20);
    if (!range_fits(off, len, size))
      return "segment " + std::to_string(i) + " lies past the end of the " +
             std::to_string(size) + "-byte image (truncated?)";
  }
  return "";
}

std::string check_fatbin(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!p || size < 16) return "a fatbinary of " + std::to_string(size) + " bytes is truncated";
  if (rd<uint32_t>(p, 0) != kFatbinMagic) return "not a fatbinary (bad magic)";
  const uint16_t header = rd<uint16_t>(p, 6);
  const uint64_t payload = rd<uint64_t>(p, 8);
  if (header < 16 || !range_fits(header, payload, size))
    return "the fatbinary declares " + std::to_string(payload) + " bytes after a " +
           std::to_string(header) + "-byte header; the image has " + std::to_string(size) +
           " (truncated?)";
  return "";
}

std::string prepare_image(const void* data, size_t size, const char* format,
                          PreparedImage* out) {
  if (!data || size == 0) return "the image is empty";
  if (size > kMaxImageBytes)
    return "the image is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxImageBytes) + " are accepted";
  const std::string fmt = format ? format : "any";
  ImageKind kind = classify_image(data, size);
  const bool want_binary = fmt == "cubin", want_ptx = fmt == "ptx";
  if (kind == ImageKind::kUnknown)
    return want_ptx ? "not PTX text (no .version directive)"
                    : want_binary ? "not a cubin (no ELF or fatbinary header)"
                                  : "neither a cubin, a fatbinary nor PTX text";
  if (want_binary && kind == ImageKind::kPtx)
    return "PTX text given as format 'cubin': load it as format 'ptx'";
  if (want_ptx && kind != ImageKind::kPtx)
    return std::string("a ") + image_kind_name(kind) +
           " given as format 'ptx': load it as format 'cubin'";
  std::string why = kind == ImageKind::kCubin    ? check_cubin(data, size)
                    : kind == ImageKind::kFatbin ? check_fatbin(data, size)
                                                 : "";
  if (!why.empty()) return why;
  size_t n = size;
  if (kind == ImageKind::kPtx) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0 && p[n - 1] == '\0') --n;  // trailing NULs are fine
    const void* nul = std::memchr(p, '\0', n);
    if (nul)
      return "the PTX text has a NUL byte at offset " +
             std::to_string(static_cast<const char*>(nul) - p) + " (binary data?)";
  }
  out->kind = kind;
  out->size = kind == ImageKind::kPtx ? n + 1 : n;
  out->bytes.assign((out->size + 7) / 8, 0);  // zero-filled: the PTX NUL
  std::memcpy(out->bytes.data(), data, n);
  return "";
}

std::string prepare_archive(const void* data, size_t size, std::vector<PreparedImage>* out,
                            std::map<std::string, std::vector<TensorMapSpec>>* tensor_maps) {
  if (size > kMaxImageBytes)
    return "the archive is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxImageBytes) + " are accepted";
  std::vector<ArchiveEntry> entries;
  std::string why = ReadKernelArchive(data, size, &entries);
  if (!why.empty()) return why;
  if (entries.empty()) return "the kernel archive has no entries";
  for (const ArchiveEntry& e : entries) {
    if (e.name.rfind(kTensorMapEntryPrefix, 0) == 0) {
      const std::string kernel = e.name.substr(sizeof(kTensorMapEntryPrefix) - 1);
      std::vector<TensorMapSpec> specs;
      why = ParseTensorMapSpecs(e.data, &specs);
      if (!why.empty()) return "kernel archive entry '" + e.name + "': " + why;
      if (!tensor_maps->emplace(kernel, std::move(specs)).second)
        return "kernel archive has two entries named '" + e.name + "'";
      continue;
    }
    PreparedImage img;
    img.name = e.name;
    why = prepare_image(e.data.data(), e.data.size(), "any", &img);
    if (!why.empty()) return "kernel archive entry '" + e.name + "': " + why;
    for (const PreparedImage& o : *out)
      if (o.name == e.name) return "kernel archive has two entries named '" + e.name + "'";
    out->push_back(std::move(img));
  }
  for (const auto& [kernel, specs] : *tensor_maps) {
    bool found = false;
    for (const PreparedImage& o : *out) found = found || o.name == kernel;
    if (!found) return "kernel archive has tensor maps for '" + kernel + "' but no such kernel";
  }
  return "";
}

}  // namespace tessera::cuda
