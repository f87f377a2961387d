// The value of ROCm's `__oclc_ISA_version` control for a chipset (pure; no
// LLVM needed; checked by hip_plugin_test against the values of the
// oclc_isa_version_*.bc files Debian ships).
//
// Why: ocml picks instruction paths by this constant, which ROCm ships as one
// tiny bitcode file per chipset (oclc_isa_version_90a.bc holds 9010).
// Debian's rocm-device-libs (ROCm 5.2) predates RDNA3 and has no file for
// gfx1100-gfx1103 (nor gfx941), so the compiler defines the constant itself
// when the file is missing, with the number ROCm's files follow:
// major * 1000 + minor * 100 + stepping, the last two characters of the name
// being the minor and the stepping as hex digits (gfx90a -> 9, 0, 0xa).
#pragma once

#include <cctype>
#include <string>

namespace tessera::hip {

// -1 when `chipset` is not of the form gfx<major><minor><stepping>.
inline int amdgpu_isa_version(const std::string& chipset) {
  if (chipset.size() < 6 || chipset.compare(0, 3, "gfx") != 0) return -1;
  const std::string digits = chipset.substr(3);
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int major = 0;
  for (size_t i = 0; i + 2 < digits.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(digits[i]))) return -1;
    major = major * 10 + (digits[i] - '0');
    if (major > 99) return -1;
  }
  const int minor = hex(digits[digits.size() - 2]), stepping = hex(digits.back());
  if (major == 0 || minor < 0 || stepping < 0) return -1;
  return major * 1000 + minor * 100 + stepping;
}

}  // namespace tessera::hip
