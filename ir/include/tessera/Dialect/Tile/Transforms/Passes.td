#ifndef TESSERA_TILE_PASSES
#define TESSERA_TILE_PASSES
include "mlir/Pass/PassBase.td"

def WorkItemLoops : Pass<"tessera-tile-work-item-loops", "::mlir::func::FuncOp"> {
  let summary = "run the lanes of a group as loops, split at barriers";
  let description = [{
    For backends without SIMT hardware (PoCL's work-item loops): the body of
    a kernel is cut at each `tessera_tile.barrier` into regions, each region
    is wrapped in an `scf.for` over the lanes, `tessera_tile.lane_id`
    becomes the loop index, and lane-private values that live across a
    barrier are kept in per-lane arrays. Barriers may sit inside `scf.for`
    loops with uniform bounds. Subgroup ops are rewritten for a subgroup of
    one lane first (the cpu plugin's subgroup size).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}
#endif
