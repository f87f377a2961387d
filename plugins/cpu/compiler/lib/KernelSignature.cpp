//===- KernelSignature.cpp - the argument list a cpu kernel exports -------===//
#include "KernelSignature.h"

#include <algorithm>

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "tessera/cpu_kernel.h"

namespace tessera::cpu {

uint64_t dtypeBytes(const std::string &dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "index") return 8;
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16") return 2;
  return 1;  // i8, f8E4M3FN, f8E5M2, i1
}

uint64_t bufferBytes(const KernelArgInfo &arg) {
  uint64_t n = 1;
  for (int64_t d : arg.shape) {
    if (d < 0) return 0;  // a memref of any length spans what the launch gives it
    n *= static_cast<uint64_t>(d);
  }
  return n * dtypeBytes(arg.dtype);
}

std::string signatureText(const KernelInfo &kernel, bool declaredGrid) {
  std::string s;
  for (const KernelArgInfo &a : kernel.args) {
    if (!s.empty()) s += ' ';
    s += a.buffer ? "b" + std::to_string(bufferBytes(a)) : "s" + std::to_string(dtypeBytes(a.dtype));
  }
  if (declaredGrid) {
    if (!s.empty()) s += ' ';
    s += "grid=" + std::to_string(kernel.grid[0]) + "," + std::to_string(kernel.grid[1]) + "," +
         std::to_string(kernel.grid[2]);
  }
  return s;
}

void addKernelSignatures(llvm::Module &module, const std::vector<KernelInfo> &kernels,
                         const std::vector<std::string> &declared) {
  for (const KernelInfo &k : kernels) {
    const bool grid = k.graph || std::find(declared.begin(), declared.end(), k.name) != declared.end();
    llvm::Constant *text = llvm::ConstantDataArray::getString(module.getContext(), signatureText(k, grid),
                                                              /*AddNull=*/true);
    auto *g = new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::ExternalLinkage, text,
                                       TESSERA_CPU_SIGNATURE_PREFIX + k.name);
    g->setVisibility(llvm::GlobalValue::DefaultVisibility);
  }
}

}  // namespace tessera::cpu
