//===- AMDGPUBackend.h - LLVM IR -> AMDGPU object -> code object (hsaco) --===//
#ifndef TESSERA_HIP_AMDGPUBACKEND_H
#define TESSERA_HIP_AMDGPUBACKEND_H

#include <array>
#include <string>

#include "llvm/IR/Module.h"

namespace tessera::hip {

struct AmdgpuTarget {
  std::string chipset;  // gfx90a
  int64_t wavefront = 64;
};
AmdgpuTarget ParseAmdgpuTarget(const std::string &arch);

struct AmdgpuOutput {
  std::string llvm;    // optimized LLVM IR text (emit llvm)
  std::string asm_;    // AMDGPU assembly (emit asm)
  std::string object;  // relocatable ELF (input of ld.lld)
};

/// Links ROCm's device libraries (ocml, ockl and the oclc_* controls for
/// the chipset, from `deviceLibs` or the usual folders) when the module
/// calls __ocml_* / __ockl_*, gives the kernel `entry` its flat work-group
/// size (`lanes`), makes every other function internal, optimizes at -O3
/// and emits what `emit` asks ("llvm", "asm", else the object).  false with
/// *error set on failure.
bool EmitAmdgpu(llvm::Module &module, const AmdgpuTarget &target, const std::string &entry,
                int64_t lanes, const std::string &deviceLibs, const std::string &emit,
                AmdgpuOutput *out, std::string *error);

/// ld.lld -shared on the object: the code object hipModuleLoadData takes.
std::string LinkCodeObject(const std::string &object, std::string *error);

}  // namespace tessera::hip

#endif
