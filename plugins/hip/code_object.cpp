#include "code_object.hpp"

#include <cstdio>
#include <cstring>

#include "tessera/kernel_archive.hpp"

namespace tessera::hip {

namespace {

constexpr uint16_t kEmAmdgpu = 224;       // EM_AMDGPU
constexpr uint8_t kOsAbiAmdgpuHsa = 64;   // ELFOSABI_AMDGPU_HSA
constexpr uint16_t kEtRel = 1, kEtDyn = 3;
constexpr uint32_t kShtNobits = 8;        // SHT_NOBITS: no bytes in the file
// EI_ABIVERSION of ELFOSABI_AMDGPU_HSA: code object v2 .. v5.
constexpr uint8_t kAbiV3 = 1;
constexpr uint32_t kMachMask = 0x0ff;
// Code object v3: one bit each.  v4 and later: two-bit selections.
constexpr uint32_t kXnackV3 = 0x100, kSrameccV3 = 0x200;
constexpr uint32_t kXnackV4Mask = 0x300, kXnackV4Off = 0x200, kXnackV4On = 0x300;
constexpr uint32_t kSrameccV4Mask = 0xc00, kSrameccV4Off = 0x800, kSrameccV4On = 0xc00;

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
  return count <= (size - off) / entsize;
}

bool range_fits(uint64_t off, uint64_t len, uint64_t size) {
  return off <= size && len <= size - off;
}

}  // namespace

const char* amdgpu_mach_name(uint32_t mach) {
  // EF_AMDGPU_MACH_AMDGCN_* (llvm/BinaryFormat/ELF.h).
  switch (mach) {
    case 0x020: return "gfx600";
    case 0x021: return "gfx601";
    case 0x022: return "gfx700";
    case 0x023: return "gfx701";
    case 0x024: return "gfx702";
    case 0x025: return "gfx703";
    case 0x026: return "gfx704";
    case 0x028: return "gfx801";
    case 0x029: return "gfx802";
    case 0x02a: return "gfx803";
    case 0x02b: return "gfx810";
    case 0x02c: return "gfx900";
    case 0x02d: return "gfx902";
    case 0x02e: return "gfx904";
    case 0x02f: return "gfx906";
    case 0x030: return "gfx908";
    case 0x031: return "gfx909";
    case 0x032: return "gfx90c";
    case 0x033: return "gfx1010";
    case 0x034: return "gfx1011";
    case 0x035: return "gfx1012";
    case 0x036: return "gfx1030";
    case 0x037: return "gfx1031";
    case 0x038: return "gfx1032";
    case 0x039: return "gfx1033";
    case 0x03a: return "gfx602";
    case 0x03b: return "gfx705";
    case 0x03c: return "gfx805";
    case 0x03d: return "gfx1035";
    case 0x03e: return "gfx1034";
    case 0x03f: return "gfx90a";
    case 0x040: return "gfx940";
    case 0x041: return "gfx1100";
    case 0x042: return "gfx1013";
    case 0x043: return "gfx1150";
    case 0x044: return "gfx1103";
    case 0x045: return "gfx1036";
    case 0x046: return "gfx1101";
    case 0x047: return "gfx1102";
    case 0x048: return "gfx1200";
    case 0x04a: return "gfx1151";
    case 0x04b: return "gfx941";
    case 0x04c: return "gfx942";
    default: return "";
  }
}

std::string code_object_target(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!p || size < 64) return "";
  const uint32_t flags = rd<uint32_t>(p, 0x30);
  const uint32_t mach = flags & kMachMask;
  std::string t = amdgpu_mach_name(mach);
  if (t.empty()) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "EF_AMDGPU_MACH 0x%02x", mach);
    return buf;
  }
  const uint8_t abi = p[8];
  // ROCm orders the features alphabetically: sramecc before xnack.
  if (abi == kAbiV3) {
    if (flags & kSrameccV3) t += ":sramecc+";
    if (flags & kXnackV3) t += ":xnack+";
  } else if (abi > kAbiV3) {
    const uint32_t s = flags & kSrameccV4Mask, x = flags & kXnackV4Mask;
    if (s == kSrameccV4On) t += ":sramecc+";
    if (s == kSrameccV4Off) t += ":sramecc-";
    if (x == kXnackV4On) t += ":xnack+";
    if (x == kXnackV4Off) t += ":xnack-";
  }
  return t;
}

std::string check_code_object(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (!p || size < 64)
    return "a code object of " + std::to_string(size) +
           " bytes is truncated (an ELF64 header alone is 64)";
  if (std::memcmp(p, "\x7f" "ELF", 4) != 0)
    return "not an AMDGPU code object (no \\x7fELF magic)";
  if (p[4] != 2) return "not a 64-bit ELF (EI_CLASS " + std::to_string(p[4]) + ")";
  if (p[5] != 1) return "not a little-endian ELF";
  const uint16_t machine = rd<uint16_t>(p, 0x12);
  if (machine != kEmAmdgpu)
    return "an ELF for machine " + std::to_string(machine) +
           ", not an AMDGPU code object (EM_AMDGPU = 224)";
  if (p[7] != kOsAbiAmdgpuHsa)
    return "an AMDGPU ELF for OS ABI " + std::to_string(p[7]) +
           ", not the HSA runtime's (ELFOSABI_AMDGPU_HSA = 64)";
  const uint16_t type = rd<uint16_t>(p, 0x10);
  if (type == kEtRel)
    return "a relocatable object (ET_REL), not a linked code object: link it with "
           "'ld.lld -shared'";
  if (type != kEtDyn)
    return "ELF type " + std::to_string(type) + ", not a code object (ET_DYN, a shared object)";
  const uint64_t phoff = rd<uint64_t>(p, 0x20), shoff = rd<uint64_t>(p, 0x28);
  const uint16_t phentsize = rd<uint16_t>(p, 0x36), phnum = rd<uint16_t>(p, 0x38);
  const uint16_t shentsize = rd<uint16_t>(p, 0x3A), shnum = rd<uint16_t>(p, 0x3C);
  const uint16_t shstrndx = rd<uint16_t>(p, 0x3E);
  if (phnum == 0) return "a code object without program headers (nothing to load)";
  if (phentsize != 56)
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
    const uint32_t stype = rd<uint32_t>(p, h + 4);
    const uint64_t off = rd<uint64_t>(p, h + 0x18), len = rd<uint64_t>(p, h + 0x20);
    if (stype != kShtNobits && !range_fits(off, len, size))
      return "section " + std::to_string(i) + " (" + std::to_string(len) + " bytes at " +
             std::to_string(off) + ") lies past the end of the " + std::to_string(size) +
             "-byte image (truncated?)";
  }
  for (uint16_t i = 0; i < phnum; ++i) {
    const size_t h = static_cast<size_t>(phoff) + size_t{i} * 56;
    const uint64_t off = rd<uint64_t>(p, h + 8), filesz = rd<uint64_t>(p, h + 0x20);
    const uint64_t memsz = rd<uint64_t>(p, h + 0x28);
    if (!range_fits(off, filesz, size))
      return "segment " + std::to_string(i) + " lies past the end of the " +
             std::to_string(size) + "-byte image (truncated?)";
    if (memsz > kMaxImageBytes * 4)
      return "segment " + std::to_string(i) + " asks for " + std::to_string(memsz) +
             " bytes of memory (a corrupt header?)";
  }
  return "";
}

std::string prepare_image(const void* data, size_t size, PreparedImage* out) {
  if (!data || size == 0) return "the image is empty";
  if (size > kMaxImageBytes)
    return "the image is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxImageBytes) + " are accepted";
  std::string why = check_code_object(data, size);
  if (!why.empty()) return why;
  why = read_kernel_metadata(data, size, &out->kernels);
  if (!why.empty()) return why;
  out->target = code_object_target(data, size);
  out->size = size;
  out->bytes.assign((size + 7) / 8, 0);
  std::memcpy(out->bytes.data(), data, size);
  return "";
}

std::string prepare_archive(const void* data, size_t size, std::vector<PreparedImage>* out) {
  if (size > kMaxImageBytes)
    return "the archive is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxImageBytes) + " are accepted";
  std::vector<ArchiveEntry> entries;
  std::string why = ReadKernelArchive(data, size, &entries);
  if (!why.empty()) return why;
  if (entries.empty()) return "the kernel archive has no entries";
  for (const ArchiveEntry& e : entries) {
    for (const PreparedImage& o : *out)
      if (o.name == e.name) return "kernel archive has two entries named '" + e.name + "'";
    PreparedImage img;
    img.name = e.name;
    why = prepare_image(e.data.data(), e.data.size(), &img);
    if (!why.empty()) return "kernel archive entry '" + e.name + "': " + why;
    out->push_back(std::move(img));
  }
  return "";
}

}  // namespace tessera::hip
