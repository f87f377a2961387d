#ifndef TESSERA_SCHEDULE_PASSES
#define TESSERA_SCHEDULE_PASSES
include "mlir/Pass/PassBase.td"

def ScheduleToTile : Pass<"tessera-schedule-to-tile", "::mlir::ModuleOp"> {
  let summary = "lower pipelines and prefetches to Tile IR";
  let description = [{
    A `tessera_schedule.pipeline` whose `prefetch`es have `double_buffer`
    becomes an `scf.for` over two `tessera_tile.shared_alloc` buffers: a
    prologue issues the first tile with `cp_async`, each iteration issues the
    next tile into the other buffer, commits, waits with
    `cp_async_wait 1` and a barrier, computes on the current buffer and
    ends with a barrier. Without `double_buffer` the copy is synchronous.
    `tessera_schedule.barrier` becomes `tessera_tile.barrier`.
  }];
  let dependentDialects = ["::tessera::tile::TileDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}
#endif
