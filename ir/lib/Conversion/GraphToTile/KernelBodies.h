//===- KernelBodies.h - the Tile IR bodies of GraphToTile's kernels -*- C++ -*-===//
//
// Fills in a kernel function (made by the launch-plan patterns, arguments:
// the spec's leaves' buffers, then its output) with the Tile IR computing
// a KernelSpec: the fused elementwise tree per element, the tiled or
// matrix-unit GEMM with the tree as its epilogue, the row kernels, shape
// ops, layout copies and flash attention.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_KERNELBODIES_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_KERNELBODIES_H

#include "FusionPlan.h"

namespace tessera::conversion::graph_to_tile {

/// Builds the body of `k` computing `s` (not kAttentionGrad: its three
/// kernels are built by their pattern).
void buildKernelBody(mlir::func::FuncOp k, const KernelSpec &s);

}  // namespace tessera::conversion::graph_to_tile

#endif
