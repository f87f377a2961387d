// Code objects for Executable_Load, checked before the runtime sees them.
// hipModuleLoadData takes a pointer and no size: it trusts the offsets in
// the ELF's headers.  Images come from untrusted callers and files, so the
// header, every section and every segment is checked against the bytes
// actually given (machine EM_AMDGPU, OS ABI AMDGPU_HSA, a linked shared
// object), and each image gets its own aligned copy.  Pure functions (no
// runtime): hip_plugin_test checks them on machines without an AMD GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_metadata.hpp"

namespace tessera::hip {

// Executable_Load reads at most this much (a file or a caller's image).
inline constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;

// "" when the image is an AMDGPU HSA code object (ELF64, little-endian,
// e_machine EM_AMDGPU = 224, EI_OSABI ELFOSABI_AMDGPU_HSA = 64, e_type
// ET_DYN) whose header, sections and segments all lie inside `size` bytes;
// else what is wrong.
std::string check_code_object(const void* data, size_t size);

// The target a code object was built for, from e_flags and EI_ABIVERSION,
// spelt as ROCm spells gcnArchName: "gfx90a", "gfx90a:sramecc+:xnack-",
// "gfx942:xnack+" (a feature built for "any" is left out).  An unknown
// processor is "EF_AMDGPU_MACH 0x<hex>"; "" when the header is too short.
std::string code_object_target(const void* data, size_t size);

// The gfx name of EF_AMDGPU_MACH value `mach` ("gfx90a"), "" when unknown.
const char* amdgpu_mach_name(uint32_t mach);

// One image, ready for hipModuleLoadData: its own 8-byte aligned copy, a
// name for messages and the target it was built for.
struct PreparedImage {
  std::string name;    // archive entry name ("" for a single image)
  std::string target;  // code_object_target
  std::vector<uint64_t> bytes;  // aligned storage
  size_t size = 0;              // bytes used in `bytes`
  std::vector<KernelMetadata> kernels;  // its argument layouts (read_kernel_metadata)
  const void* data() const { return bytes.data(); }
};

// Checks one code object ("hsaco"), reads its kernels' metadata and copies
// it.  "" or what is wrong.
std::string prepare_image(const void* data, size_t size, PreparedImage* out);

// "archive:hsaco": a kernel archive (tessera/kernel_archive.hpp) whose
// entries, named by kernel, are each one code object.  "" or what is wrong
// (naming the entry).
std::string prepare_archive(const void* data, size_t size, std::vector<PreparedImage>* out);

}  // namespace tessera::hip
