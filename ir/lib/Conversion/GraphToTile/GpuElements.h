//===- GpuElements.h - stored elements of the GPU kernels -----*- C++ -*-===//
//
// What every GPU kernel builder of tessera-graph-to-tile-kernels does with
// a stored element (kGpuElements: bf16 as its bits in i16, fp8 as i8):
// widen it to its compute type (f32 / i32) after a load, narrow it back
// before a store.  A scalar f32 stored as bf16 is narrowed by
// tessera_tile.round_to_bf16, which a target may lower to an instruction
// (cuda sm_80+: cvt.rn.bf16.f32) and every other expands to the integer
// rounding of ElementTypes.h.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_GPUELEMENTS_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_GPUELEMENTS_H

#include "mlir/IR/Builders.h"

namespace tessera::conversion::gpu_elements {

/// A stored element of Graph IR type `elem` -> its compute type.
mlir::Value widen(mlir::OpBuilder &b, mlir::Location l, mlir::Value stored, mlir::Type elem);
/// A compute value -> the stored form of Graph IR type `elem`.
mlir::Value narrow(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Type elem);

}  // namespace tessera::conversion::gpu_elements

#endif
