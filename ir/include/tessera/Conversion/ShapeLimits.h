//===- ShapeLimits.h - sizes of static shapes, without overflow ----------===//
//
// ShapedType::getNumElements multiplies the dims in int64_t and wraps: a
// tensor<4611686018427387905x4xf32> counted 4 elements and was lowered to
// memref<4xf32>, one of 2^32 x 2^32 counted 0 ("zero-sized").  Passes that
// size buffers, loops or grids from a shape ask here first.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_SHAPELIMITS_H
#define TESSERA_CONVERSION_SHAPELIMITS_H

#include <cstdint>
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tessera {

/// No device addresses more than this many bytes in one tensor; kept 8x
/// below 2^63 so that sizes in bits (elements x bit width) fit int64 too.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 60;

/// "" when the static shape of `t` holds at most kMaxTensorBytes; else why
/// not ("has more elements than a 64-bit count holds", "holds N elements,
/// more than 2^60 bytes").  Unranked and dynamic shapes: "".
inline std::string oversizedShapeReason(mlir::Type type) {
  auto t = type.dyn_cast<mlir::ShapedType>();
  if (!t || !t.hasRank()) return "";
  uint64_t elements = 1;
  for (int64_t d : t.getShape()) {
    if (d <= 0) continue;  // dynamic or zero: judged elsewhere
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements))
      return "has more elements than a 64-bit count holds";
  }
  mlir::Type e = t.getElementType();
  const uint64_t each = e.isIntOrFloat() ? (e.getIntOrFloatBitWidth() + 7) / 8 : 8;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, each ? each : 1, &bytes) || bytes > kMaxTensorBytes)
    return "holds " + std::to_string(elements) + " elements, more than 2^60 bytes";
  return "";
}

}  // namespace tessera

#endif
