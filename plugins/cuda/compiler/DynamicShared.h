//===- DynamicShared.h - shared memory above 48 KiB as dynamic shared -*- C++ -*-===//
//
// A CUDA kernel declares at most 48 KiB of static shared memory; above that
// (the TMA GEMM's stages) its shared arrays must live in the dynamic shared
// memory the launch sizes, which the kernel opts into
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to 227 KiB on
// Hopper; the plugin does that at launch).  LLVM 16 has no pass for it:
// the kernel's addrspace(3) globals become offsets into one extern
// `[0 x i8]` array (`.extern .shared`), each at its own alignment.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_DYNAMICSHARED_H
#define TESSERA_CUDA_DYNAMICSHARED_H

#include <cstdint>

#include "llvm/IR/Module.h"

namespace tessera::cuda {

/// The static shared memory a kernel may declare without opting in.
constexpr uint64_t kMaxStaticSharedBytes = 48 * 1024;

/// When `module`'s shared arrays total more than kMaxStaticSharedBytes,
/// moves them into dynamic shared memory and returns the bytes a launch
/// must ask for; else leaves them and returns 0.
uint64_t moveSharedToDynamic(llvm::Module &module);

}  // namespace tessera::cuda

#endif
