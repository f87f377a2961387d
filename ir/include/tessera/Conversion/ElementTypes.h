//===- ElementTypes.h - how Graph IR element types are stored and computed ===//
//
// Shared by the code generators (the cpu backend's ScheduleToCPU and the
// GPU path's tessera-graph-to-tile-kernels), so that every backend stores,
// computes and rounds each Graph IR element type the same way, and the same
// way as tessera-run's reference (tools/tessera-run/dtype.hpp):
//
//   element     stored in memrefs as   computed in
//   f32         f32                    f32
//   f16         f16                    f32   (arith.extf/truncf: F16C on x86,
//                                             OpFConvert in SPIR-V; or integer code)
//   bf16        bf16 (i16 for SPIR-V)  f32   (integer code)
//   f8E4M3FN    i8 (raw bits)          f32   (integer code)
//   f8E5M2      i8 (raw bits)          f32   (integer code)
//   i32         i32                    i32
//   i8          i8                     i32
//   i1          i8 (0 or 1)            i1    (a stored byte != 0 is true)
//
// Narrow floats are storage types: a load widens to f32 (exact), a store
// rounds to nearest even once.  fp8 e4m3fn has no infinities: finite values
// beyond +-448 and +-inf saturate to +-448 (NVIDIA's cvt.rn.satfinite), NaN
// is 0x7F / 0xFF.  f16, bf16 and fp8 e5m2 (the top byte of an f16) keep
// IEEE overflow (to +-inf).  Integers
// wrap in their width when stored (i32 -> i8 keeps the low byte).
//
// The integer code exists because LLVM 16's x86 backend cannot select a
// vector fptrunc to bf16 (X86ISD::VFPROUND on v16bf16) and has no f16
// conversion without F16C (it calls __extendhfsf2 / __truncsfhf2, which a
// kernel .so cannot resolve), because MLIR 16's LLVM type converter leaves
// the fp8 types unconverted (memref<...xf8E4M3FN> has no LLVM type), so fp8 is
// an i8 memref, and because MLIR 16's SPIR-V dialect has no bf16 type.
// Every helper works on scalars and on vectors; the ops are plain arith /
// math ops, which both the LLVM and the SPIR-V lowerings handle.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_ELEMENTTYPES_H
#define TESSERA_CONVERSION_ELEMENTTYPES_H

#include "mlir/IR/Builders.h"

namespace tessera::elements {

struct ElementOptions {
  /// f16 <-> f32 with arith.extf / truncf (F16C on x86); else integer code.
  bool hardwareF16 = false;
  /// bf16 is stored as its bits in i16 (SPIR-V has no bf16 type): widen
  /// takes and narrow returns i16 values for bf16.
  bool bf16AsI16 = false;
  /// Float x / +-0 is computed as IEEE says (+-inf with the sign of x * y;
  /// 0 / 0 and NaN / 0 are NaN) by a select rather than by the divide:
  /// Vulkan leaves OpFDiv by zero undefined (its precision table covers
  /// |y| in [2^-126, 2^126] only) and lavapipe returns 0. LLVM on x86
  /// divides in IEEE already.
  bool selectDivisionByZero = false;
};

/// The memref element type of a Graph IR element type (fp8 -> i8;
/// bf16 -> i16 with options.bf16AsI16).
mlir::Type storageType(mlir::Type elem, const ElementOptions &options = {});
/// f32 for float element types, i32 for integer ones, i1 for i1.
mlir::Type computeType(mlir::Type elem);
/// `like` (a scalar or vector type) with its element type replaced.
mlir::Type withElement(mlir::Type like, mlir::Type elem);

/// A value loaded from storage of Graph IR type `elem` -> its compute type
/// (exact).
mlir::Value widen(mlir::OpBuilder &b, mlir::Location loc, mlir::Value stored,
                  mlir::Type elem, const ElementOptions &options);
/// A compute-type value -> the storage of `elem`: round to nearest even
/// (floats), truncate (integers).
mlir::Value narrow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                   mlir::Type elem, const ElementOptions &options);
/// The bits (i16) of f32 `value` rounded to bf16, ties to even; a NaN stays
/// a NaN (quiet, its sign and top payload bits kept).  Scalar or vector.
mlir::Value roundToBF16Bits(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);
/// narrow then widen: the value an op of result type `elem` produces.
mlir::Value roundTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    mlir::Type elem, const ElementOptions &options);

/// The arithmetic of `tessera_graph.cast` from `from` to `to` on compute
/// values (the rounding or wrapping to `to` happens in `narrow`):
///   float -> int: toward zero, saturated to the range of `to`, NaN -> 0;
///   int -> float: to f32 (round to nearest even);
///   float -> float, int -> int: unchanged;
///   i1 -> any: 0 or 1; any -> i1: x != 0 (NaN is true).
mlir::Value castCompute(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                        mlir::Type from, mlir::Type to);

/// The compute-type result of an elementwise Graph op (graph::isElementwise)
/// on compute-type operands (scalars or vectors).  The
/// caller rounds it to the op's result type (`narrow` / `roundTo`).
/// Integer division truncates toward zero; x / 0 = 0 and the overflow of
/// INT_MIN / -1 wraps (no trap, no poison).
mlir::FailureOr<mlir::Value> emitElementwise(mlir::OpBuilder &b, mlir::Location loc,
                                             mlir::Operation *op,
                                             llvm::ArrayRef<mlir::Value> in,
                                             const ElementOptions &options = {});

/// Stochastic rounding of `tessera_graph.cast {rounding = "stochastic"}`
/// (f32 -> bf16, f16, f8E4M3FN or f8E5M2): the f32 compute value `x` (scalar or vector)
/// -> the neighbour chosen in `to`, as f32 (exactly representable, or past
/// the largest finite value: `narrow` then overflows or saturates as the
/// cast does).  `index` is the element's row-major index as i64 (a vector of
/// them for a vector `x`).  Integer arithmetic only (Philox-4x32-10 keyed by
/// `seed`, counter = index), so every backend and the reference
/// (tessera::reference::StochasticRound) give the same bits.
mlir::Value emitStochasticRound(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                                mlir::Type to, uint64_t seed, mlir::Value index);

/// The counter of a stochastic cast as an i64 scalar: `sum_d idx[d] *
/// strides[d]` (idx: one index value per dim), plus, when `position` (the
/// device's tessera_graph.mesh_position as an i32 scalar) is given, `sum_a
/// c_a * meshOffsets[a]` over its row-major digits c over `meshShape`: an
/// SPMD part's element keyed by its index in the global tensor.
mlir::Value emitStochasticIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange idx,
                                llvm::ArrayRef<int64_t> strides, mlir::Value position,
                                llvm::ArrayRef<int64_t> meshShape, llvm::ArrayRef<int64_t> meshOffsets);

/// Portable f32 forms (arith + math.exp / fma / abs only, which
/// every backend lowers; the same bits on every backend up to the
/// backends' exp): the logistic sigmoid, tanh and erf.
mlir::Value emitSigmoid(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
mlir::Value emitTanh(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
mlir::Value emitErf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// A splat constant of `type` (scalar or vector; float or integer).
mlir::Value splatConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                          double value);

}  // namespace tessera::elements

#endif
