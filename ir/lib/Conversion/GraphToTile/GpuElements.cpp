//===- GpuElements.cpp - stored elements of the GPU kernels ---------------===//
#include "GpuElements.h"

#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;

namespace tessera::conversion::gpu_elements {

Value widen(OpBuilder &b, Location l, Value stored, Type elem) {
  return elements::widen(b, l, stored, elem, kGpuElements);
}

Value narrow(OpBuilder &b, Location l, Value v, Type elem) {
  // Scalars only: vectors are narrowed lane by lane in integer code.
  if (elem.isBF16() && v.getType().isF32()) return b.create<tile::RoundToBF16Op>(l, b.getI16Type(), v);
  return elements::narrow(b, l, v, elem, kGpuElements);
}

}  // namespace tessera::conversion::gpu_elements
