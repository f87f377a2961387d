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
def PromoteBF16 : Pass<"tessera-tile-promote-bf16", "::mlir::func::FuncOp"> {
  let summary = "compute bf16 arithmetic in f32, and convert bf16 with integer ops";
  let description = [{
    A Tile IR kernel may load bf16 elements and compute on them
    (`arith.addf` on bf16).  LLVM 16's back ends cannot all do that: NVPTX
    cannot select a bf16 `fadd`, and x86 turns the rounding back to bf16
    into a call to `__truncsfbf2`, which no kernel library provides.  This
    pass rewrites every float `arith` / `math` op on bf16 (scalars or
    vectors) into the same op on f32 between `arith.extf` and
    `arith.truncf` -- what those back ends do themselves where they can, so
    the results are the same -- and then expands every bf16 <-> f32
    `extf` / `truncf` into integer ops (round to nearest even, NaN kept
    quiet), so no back end needs a bf16 conversion of its own.

    `atomic_rmw` on bf16 memory needs a 16-bit compare-and-swap loop that
    x86 (a `__truncsfbf2` call inside it) and NVPTX (no selection) do not
    get from LLVM 16: refused with an error unless `bf16-atomics` says the
    back end has them (AMDGPU does).
  }];
  let options = [Option<"bf16Atomics", "bf16-atomics", "bool", /*default=*/"false",
                        "the back end lowers atomic_rmw on bf16 itself">];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}
#endif
