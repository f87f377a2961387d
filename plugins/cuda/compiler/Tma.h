//===- Tma.h - tile_load_async as TMA copies with an mbarrier pipeline -*- C++ -*-===//
//
// The sm_90a form of tessera_tile.tile_load_async / _commit / _wait:
//
//   kernel entry     lane 0 initializes one mbarrier per stage (arrival
//                    count 1) in shared memory; fence.mbarrier_init; a
//                    group barrier
//   tile_load_async  lane 0: mbarrier.expect_tx (the box's bytes), then
//                    cp.async.bulk.tensor.2d ... mbarrier::complete_tx
//                    from the source's tensor map into the swizzled target
//   tile_load_commit lane 0: mbarrier.arrive (the stage's phase completes
//                    once this arrival and every expected byte are in)
//   tile_load_wait   every lane: mbarrier.try_wait.parity until the
//                    stage's phase of that parity has completed
//
// A warp-specialized pipeline adds a second mbarrier per stage ("empty",
// arrival count: the acquire's releasers / 32):
//
//   single_lane      tile_load_async / _commit as above, by the lane that
//                    executes them (the producer), without the lane-0 guard
//   tile_load_release bar.warp.sync, then the subgroup's first lane arrives
//                    at the stage's empty barrier
//   tile_load_acquire mbarrier.try_wait.parity on the empty barrier
//   set_max_registers setmaxnreg.dec / .inc (by whether the count is below
//                    or above what each lane has at launch: 64K registers
//                    over the group's warps, in steps of 8, at most 255)
//
// Tensor maps (CUtensorMap, 128 bytes) cannot be made on the device: each
// distinct (source argument, box) is a 128-byte parameter appended to the
// entry after the kernel's own (BarePointerEntry.h), which the TMA copies
// name in inline PTX (<kernel>_param_<i>, cvta.param: LLVM 16 has no
// grid-constant parameters).  The plugin encodes them at each launch with
// cuTensorMapEncodeTiled from the buffers the launch passes, as
// TensorMapSpec lines describe them (tensor_map.hpp), kept in the kernel
// archive beside the cubin.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_TMA_H
#define TESSERA_CUDA_TMA_H

#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessera::cuda {

/// Rewrites the tile loads of kernel `f` (Tile IR, before the kernel body
/// is lowered) into TMA copies; `maps` gets one line per tensor-map
/// parameter, in parameter order (FormatTensorMapSpec, tensor_map.hpp).
mlir::LogicalResult lowerTileLoadsToTma(mlir::func::FuncOp f, std::vector<std::string> *maps);

}  // namespace tessera::cuda

#endif
