//===- WgmmaAccumulators.h - one register per wgmma accumulator -*- C++ -*-===//
//
// A GEMM's accumulators start as one constant (0.0): LLVM keeps one value,
// and the NVPTX back end materializes it once and copies it into the other
// registers (`mov.f32 %f259, %f258`). ptxas then cannot give the wgmma
// pipeline its registers: it injects warpgroup.arrive / warpgroup.wait
// around every wgmma.mma_async and serializes them ("C7511 Potential
// Performance Loss: wgmma.mma_async instructions are serialized due to
// insufficient register resources for the wgmma pipeline").
//
// This rewrite gives each accumulator that enters a wgmma block (Wgmma.h)
// from a constant its own definition: a side-effecting `mov.b32 $0, bits`
// per register, which LLVM may neither merge nor fold, so every
// accumulator is written once, by its own instruction, before the loop.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_WGMMAACCUMULATORS_H
#define TESSERA_CUDA_WGMMAACCUMULATORS_H

namespace llvm {
class Module;
}

namespace tessera::cuda {

/// Returns how many accumulator inputs were given their own definition.
unsigned separateWgmmaAccumulatorInits(llvm::Module &module);

}  // namespace tessera::cuda

#endif
