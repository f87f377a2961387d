//===- KernelSignature.h - the argument list a cpu kernel exports ---------===//
//
// Every kernel the code generator emits also exports
// `tessera_signature_<name>`, the text tessera/cpu_kernel.h describes, so the
// plugin checks a launch's arguments (count, kinds, scalar sizes, buffer
// lengths, and the grid a kernel declared) before a worker thread runs it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CPU_KERNELSIGNATURE_H
#define TESSERA_CPU_KERNELSIGNATURE_H

#include <map>
#include <string>
#include <vector>

#include "tessera/cpu/Compiler.h"

namespace llvm {
class Module;
}

namespace tessera::cpu {

/// Bytes of one element of `dtype` ("f32" -> 4; i1, i8, fp8 -> 1).
uint64_t dtypeBytes(const std::string &dtype);

/// Bytes a buffer argument spans (0: a memref of any length).
uint64_t bufferBytes(const KernelArgInfo &arg);

/// The signature text of `kernel`; `declaredGrid`: the kernel's buffers are
/// sized for its grid (a Tile IR kernel with tessera_tile.grid, or a Graph IR
/// kernel), so a launch over a larger one is refused.
std::string signatureText(const KernelInfo &kernel, bool declaredGrid);

/// Adds the exported `tessera_signature_<name>` constants to `module`.
/// `declared`: names of the kernels whose grid is declared.
void addKernelSignatures(llvm::Module &module, const std::vector<KernelInfo> &kernels,
                         const std::vector<std::string> &declared);

}  // namespace tessera::cpu

#endif
