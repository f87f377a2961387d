#ifndef TESSERA_GRAPHTOTILE_PASSES
#define TESSERA_GRAPHTOTILE_PASSES
include "mlir/Pass/PassBase.td"

def GraphToTileKernels : Pass<"tessera-graph-to-tile-kernels", "::mlir::ModuleOp"> {
  let summary = "Graph IR functions -> Tile IR kernels plus a host launch plan (GPU backends)";
  let description = [{
    Each Graph IR function becomes (a) Tile IR kernels, module-level
    `func.func`s with `tessera_tile.group_size` and `tessera_tile.grid` on
    flat `memref<N x f32>` buffers, and (b) a launch plan: the function
    itself, rewritten on memrefs and marked `tessera.launch_plan`. Its
    arguments are the program's inputs then its results
    (`tessera.buffer = "input"` / `"output"`), each `memref.alloc` marked
    `tessera.buffer = "intermediate"` (with `tessera.bytes`) is a buffer the
    host allocates, and each `func.call` is one kernel launch, in order, with
    its grid in `tessera.grid` and the buffers it binds as operands.

    Kernels: matmul + fused elementwise epilogue -> a shared-memory tiled
    GEMM (128x128 tile per group of 256 lanes, 8x8 per lane, BK = 16, guards
    where M, N, K are not multiples of the tile); chains of elementwise ops
    (with trailing broadcast and splat constants) -> one fused elementwise
    kernel; softmax (last dim) and reduce sum/max (last dim) -> one group per
    row with a shared-memory tree reduction; convert_layout -> an index
    mapping kernel using each layout's offset formula. Everything else is a
    diagnostic naming the op and `backend`.
  }];
  let options = [
    Option<"backend", "backend", "std::string", /*default=*/"\"gpu\"",
           "backend named in diagnostics (vulkan, cuda, hip, ...)">
  ];
  let dependentDialects = ["::tessera::tile::TileDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect",
                           "::mlir::vector::VectorDialect"];
}

def StripLaunchPlans : Pass<"tessera-strip-launch-plans", "::mlir::ModuleOp"> {
  let summary = "drop launch-plan functions (and optionally all kernels but one)";
  let description = [{
    Removes every `tessera.launch_plan` function so that the Tile IR kernels
    can be compiled on their own (e.g. by `tessera-tile-to-spirv`). With
    `keep=NAME`, every other Tile IR kernel is removed too (one kernel per
    SPIR-V module, for spirv-val in tests).
  }];
  let options = [
    Option<"keep", "keep", "std::string", /*default=*/"\"\"",
           "keep only this kernel">
  ];
}
#endif
