#ifndef TESSERA_CPU_PASSES
#define TESSERA_CPU_PASSES
include "mlir/Pass/PassBase.td"

def ScheduleToCPU : Pass<"tessera-schedule-to-cpu", "::mlir::ModuleOp"> {
  let summary = "lower Graph/Schedule IR functions to vectorized CPU loops";
  let description = [{
    Each function on tensors becomes a kernel on memrefs that computes one
    block of `MC` output rows per tile group. A `tessera_schedule.tile`
    around a matmul becomes the BLIS loop nest: KC slices, A packed into
    MR-row slivers, B packed into NR-column slivers, and an MRxNR register
    tile of `vector<8 x f32>` (or, with `matmul-lanes=16`, `vector<16 x f32>`)
    accumulators updated with `vector.fma`; the
    fused epilogue is applied to the register tile before it is stored.
    Other Graph ops become loops. Results are written to output arguments
    appended after the inputs.

    Element types: f16/bf16/f8E4M3FN/f8E5M2 are storage types (loaded,
    widened to f32, rounded to nearest even when stored; fp8 is held in i8
    memrefs; e4m3 saturates to +-448, e5m2 overflows to +-inf), i8/i32 compute in i32 and wrap when stored. Matmul
    operands are widened while packing, so the micro-kernel runs on f32 (or
    i32) and the result is rounded once. Any M, N, K; batched matmuls loop
    over their batch dims. The kernel attribute's `dtypes` lists the element
    type of each argument.
  }];
  let options = [
    Option<"hardwareF16", "hardware-f16", "bool", /*default=*/"false",
           "convert f16 with arith.extf/truncf (the target has F16C); else in integer code">,
    Option<"matmulLanes", "matmul-lanes", "int64_t", /*default=*/"8",
           "lanes of the matmul micro-kernel's vectors: 8 (AVX2 ymm) or 16 (AVX-512 zmm, "
           "used by tiles whose NR is a multiple of 16)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect", "::mlir::func::FuncDialect",
                           "::tessera::tile::TileDialect"];
}

def ExpandVectorExp : Pass<"tessera-cpu-expand-vector-exp", "::mlir::ModuleOp"> {
  let summary = "expand math.exp on f32 (vectors and scalars) into one polynomial (no libm calls)";
  let description = [{
    LLVM would scalarize `llvm.exp` on vectors into one `expf` call per lane.
    Each `math.exp` whose operand is a vector of f32 becomes Cephes' expf in
    vector ops: clamp, `n = floor(x log2(e) + 1/2)`, `r = x - n ln 2`, a
    degree-5 polynomial, `2^n` from the exponent bits. About 2 ulp; inputs
    below -88.37 (and -inf) give exactly 0, results below 2^-126 flush to 0.
    A scalar f32 `math.exp` becomes the same polynomial on a one-lane
    vector, so a value never depends on whether it was computed in a vector
    lane, a remainder loop or a fused epilogue.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TileToCPU : Pass<"tessera-tile-to-cpu", "::mlir::ModuleOp"> {
  let summary = "lower Tile IR kernels to scf/memref/vector for the cpu plugin";
  let description = [{
    Kernels get trailing arguments for the group id, the grid and the
    group's shared memory (a 64 KiB byte buffer); `shared_alloc` becomes a
    view into it, `cp_async` a synchronous vector copy, commit/wait
    disappear, `mma` becomes one `vector.outerproduct` per k, `dot` a
    `vector.reduction`, device/mesh atomics `memref.atomic_rmw` (tile/group
    scope: a plain read-modify-write, the group runs on one thread). Run
    after `tessera-tile-work-item-loops`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect"];
}

def CPUKernelABI : Pass<"tessera-cpu-kernel-abi", "::mlir::ModuleOp"> {
  let summary = "export kernels as tessera_kernel_<name>(const TsCpuLaunchContext*)";
  let description = [{
    Runs on the LLVM dialect (after lowering with bare-pointer memrefs). For
    each kernel function adds an exported wrapper that reads the launch
    context of tessera/cpu_kernel.h: buffer arguments are pointers, scalar
    arguments pointers to their bytes, then group id, grid and shared
    memory.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}
#endif
