//===- BarePointerEntry.h - one pointer per buffer at a kernel's entry ----===//
//
// MLIR 16 lowers a memref kernel argument to its descriptor (allocated and
// aligned pointers, offset, sizes, strides), and the NVVM lowering has no
// bare-pointer option (ROCDL's cannot take memref<?xT>).  Every Tessera
// plugin launches a kernel with one pointer per buffer, so after the
// conversion to the LLVM dialect the kernel of `gm` (the llvm.func carrying
// `kernelAttrName`, e.g. nvvm.kernel or rocdl.kernel) is renamed
// <name>__impl (internal, always inlined) and a new <name> taking one
// pointer per memref of `tileArgs` (the Tile IR kernel's argument types)
// and each scalar as is builds the descriptors and calls it.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_TILETOGPU_BAREPOINTERENTRY_H
#define TESSERA_CONVERSION_TILETOGPU_BAREPOINTERENTRY_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LogicalResult.h"

namespace tessera::gpu_lowering {

/// `opaqueParams`: 128-byte parameters (64-byte aligned, byval) appended
/// after the kernel's own, which the body reaches by name in inline
/// assembly (cuda: the TMA tensor maps, `<name>_param_<i>`).
mlir::LogicalResult addBarePointerEntry(mlir::gpu::GPUModuleOp gm, llvm::ArrayRef<mlir::Type> tileArgs,
                                        llvm::StringRef kernelAttrName, unsigned opaqueParams = 0);

}  // namespace tessera::gpu_lowering

#endif
