// Kernel archives: several named binaries in one blob.
//
// Some executable formats hold one kernel per image (a SPIR-V module per
// kernel as Tessera's SPIR-V lowering makes them).  A compiler that returns
// several such images returns them as an archive, with the executable format
// "archive:<format>" ("archive:spirv"); Executable_Load takes the same.
//
// Layout (little-endian, every field bounded by the blob's size):
//   u8[4] magic "TSKA", u32 version (1), u32 count, u32 reserved (0)
//   count entries, each: u32 name_bytes, u32 reserved (0), u64 data_bytes,
//                        name (no NUL), padding to 8, data, padding to 8
//
// Header-only so that plugins, tools and the program layer share one
// reader; ReadKernelArchive never reads past `size` and rejects anything
// malformed with a message.
#ifndef TESSERA_KERNEL_ARCHIVE_HPP_
#define TESSERA_KERNEL_ARCHIVE_HPP_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tessera {

struct ArchiveEntry {
  std::string name;
  std::string data;
};

inline constexpr char kKernelArchivePrefix[] = "archive:";

inline bool IsKernelArchive(const void* data, size_t size) {
  return data != nullptr && size >= 16 && std::memcmp(data, "TSKA", 4) == 0;
}

inline std::string WriteKernelArchive(const std::vector<ArchiveEntry>& entries) {
  std::string out;
  auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  auto pad = [&] { out.append((8 - out.size() % 8) % 8, '\0'); };
  out.append("TSKA", 4);
  u32(1);
  u32(static_cast<uint32_t>(entries.size()));
  u32(0);
  for (const ArchiveEntry& e : entries) {
    u32(static_cast<uint32_t>(e.name.size()));
    u32(0);
    u64(e.data.size());
    out += e.name;
    pad();
    out += e.data;
    pad();
  }
  return out;
}

// Returns "" and fills `entries`, or says what is wrong.
inline std::string ReadKernelArchive(const void* data, size_t size,
                                     std::vector<ArchiveEntry>* entries) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!IsKernelArchive(data, size)) return "not a kernel archive (no TSKA header)";
  uint32_t version, count;
  std::memcpy(&version, p + 4, 4);
  std::memcpy(&count, p + 8, 4);
  if (version != 1)
    return "kernel archive version " + std::to_string(version) + "; this reader knows version 1";
  // Each entry takes at least 16 bytes: a count beyond that is a lie.
  if (count > (size - 16) / 16)
    return "kernel archive claims " + std::to_string(count) + " entries in " + std::to_string(size) +
           " bytes";
  size_t at = 16;
  auto align = [](size_t v) { return (v + 7) / 8 * 8; };
  for (uint32_t i = 0; i < count; ++i) {
    if (size - at < 16) return "kernel archive entry " + std::to_string(i) + " is truncated";
    uint32_t name_bytes;
    uint64_t data_bytes;
    std::memcpy(&name_bytes, p + at, 4);
    std::memcpy(&data_bytes, p + at + 8, 8);
    at += 16;
    if (name_bytes == 0 || name_bytes > 4096 || name_bytes > size - at)
      return "kernel archive entry " + std::to_string(i) + " has a bad name length";
    ArchiveEntry e;
    e.name.assign(reinterpret_cast<const char*>(p + at), name_bytes);
    at = align(at + name_bytes);
    if (at > size || data_bytes > size - at)
      return "kernel archive entry '" + e.name + "' claims " + std::to_string(data_bytes) +
             " bytes, more than the archive holds";
    e.data.assign(reinterpret_cast<const char*>(p + at), static_cast<size_t>(data_bytes));
    at = align(at + static_cast<size_t>(data_bytes));
    if (at > size) at = size;
    entries->push_back(std::move(e));
  }
  return "";
}

}  // namespace tessera

#endif  // TESSERA_KERNEL_ARCHIVE_HPP_
