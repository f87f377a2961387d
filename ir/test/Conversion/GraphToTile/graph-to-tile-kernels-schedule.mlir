// The GEMM kernel follows the tile sizes Schedule IR records: here the
// pass runs on the output of --tessera-graph-to-schedule with other sizes
// than the GPU schedule's, and on a hand-written schedule.
// RUN: tessera-opt %s --tessera-graph-to-schedule="tile-m=64 tile-n=32 tile-k=8 micro-m=4 micro-n=4 clamp-tiles=0 attention=0 fuse-reductions=0" --tessera-graph-to-tile-kernels | FileCheck %s --check-prefix=SMALL
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=40 tile-n=24 tile-k=10 micro-m=5 micro-n=3}" | FileCheck %s --check-prefix=GUARD
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=40 tile-n=24 tile-k=10 micro-m=5 micro-n=3}" --tessera-strip-launch-plans=keep=layer_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: tessera-opt %s --tessera-graph-to-tile-kernels | FileCheck %s --check-prefix=HAND
// RUN: tessera-opt %s --tessera-graph-to-schedule="tile-m=64 tile-n=32 tile-k=8 micro-m=4 micro-n=4 micro-layout=quads clamp-tiles=0 attention=0" | FileCheck %s --check-prefix=QSCHED
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=64 tile-n=32 tile-k=8 micro-m=4 micro-n=4 micro-layout=quads}" | FileCheck %s --check-prefix=QUADS
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=64 tile-n=32 tile-k=8 micro-m=4 micro-n=4 micro-layout=quads}" --tessera-strip-launch-plans=keep=layer_k0_gemm --tessera-tile-to-spirv | FileCheck %s --check-prefix=QSPV
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=64 tile-n=32 tile-k=8 micro-m=4 micro-n=4 micro-layout=quads}" --tessera-strip-launch-plans=keep=layer_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.q.spv
// RUN: spirv-val --target-env vulkan1.1 %t.q.spv
// RUN: not tessera-opt %s --tessera-graph-to-schedule="micro-layout=diagonal" 2>&1 | FileCheck %s --check-prefix=QBAD
// Sizes out of range are errors before anything divides by them or makes
// vectors of them (micro-m=0 was a division by zero, vector-width=65536 a
// crash in LLVM's code generator):
// RUN: not tessera-opt %s --tessera-graph-to-schedule="micro-m=0" 2>&1 | FileCheck %s --check-prefix=MICRO0
// RUN: not tessera-opt %s --tessera-graph-to-schedule="micro-n=-3" 2>&1 | FileCheck %s --check-prefix=MICRON
// RUN: not tessera-opt %s --tessera-graph-to-schedule="vector-width=65536" 2>&1 | FileCheck %s --check-prefix=VWIDTH
// RUN: not tessera-opt %s --tessera-graph-to-schedule="tile-k=0" 2>&1 | FileCheck %s --check-prefix=TILEK
// MICRO0: error: --tessera-graph-to-schedule: micro-m=0 is out of range; use 1..64
// MICRON: error: --tessera-graph-to-schedule: micro-n=-3 is out of range; use 1..64
// VWIDTH: error: --tessera-graph-to-schedule: vector-width=65536 is out of range; use 1..64
// TILEK: error: --tessera-graph-to-schedule: tile-k=0 is out of range; use 1..1048576
// RUN: not tessera-opt %s --tessera-gpu-graph-pipeline="schedule={tile-m=64 tile-n=64 micro-m=1 micro-n=1}" 2>&1 | FileCheck %s --check-prefix=LANES
// A register block of 64 x 64 (4096 accumulators per lane) made the GPU
// compiles run for minutes and gigabytes:
// RUN: not tessera-opt %s --tessera-gpu-graph-pipeline="schedule={micro-m=64 micro-n=64}" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: register block 64x64 is 4096 accumulators per lane; a GPU kernel keeps at most 256 in registers

// 64x32 tiles of 4x4 per lane: 16 x 8 = 128 lanes; A slices of 8 x 64, B
// slices of 8 x 32 in shared memory; grid N/32 x M/64.
// SMALL-LABEL: func.func @layer(
// SMALL: call @layer_k0_gemm({{.*}}) {tessera.grid = array<i64: 4, 2, 1>}
// SMALL-LABEL: func.func @layer_k0_gemm(
// SMALL-SAME: tessera_tile.group_size = array<i64: 128>
// SMALL: tessera_tile.shared_alloc : memref<512xf32, 3>
// SMALL: tessera_tile.shared_alloc : memref<256xf32, 3>
// SMALL-COUNT-16: math.fma
// SMALL-NOT: math.fma
// SMALL: tessera_tile.barrier
// The epilogue (bias, relu) stays in the GEMM: no other kernel.
// SMALL-NOT: func.func @layer_k1

// 40x24 tiles of 5x3 per lane: 8 x 8 = 64 lanes; the A slice (400
// elements) is not a multiple of 64: its last staging round is guarded.
// GUARD-LABEL: func.func @layer_k0_gemm(
// GUARD-SAME: tessera_tile.grid = array<i64: 6, 4, 1>, tessera_tile.group_size = array<i64: 64>
// GUARD: tessera_tile.shared_alloc : memref<400xf32, 3>
// GUARD: tessera_tile.shared_alloc : memref<240xf32, 3>
// GUARD: scf.if
// GUARD-COUNT-15: math.fma

// Schedule IR written by hand: its tile sizes, whatever a pass would pick.
// HAND-LABEL: func.func @hand_k0_gemm(
// HAND-SAME: tessera_tile.group_size = array<i64: 64>
// HAND: tessera_tile.shared_alloc : memref<128xf32, 3>
// HAND-COUNT-4: math.fma

// micro-layout=quads: the matmul tile says so, and each lane's 4 x 4
// block is rows 4*ty .. 4*ty+3 (tx, ty = lane % 8, lane / 8): consecutive
// shared-memory reads at an aligned base, which the SPIR-V path merges
// into one vec4 load per 4 (A slice 8 x 64 and B slice 8 x 32 as
// 128 and 64 vec4s).
// QSCHED: tessera_schedule.tile
// QSCHED: } {micro_layout = "quads"} :
// QUADS-LABEL: func.func @layer_k0_gemm(
// QUADS: %[[TY:.*]] = arith.divui %{{.*}}, %c8 : index
// QUADS: scf.for
// QUADS: scf.for
// QUADS: %[[Q:.*]] = arith.muli %[[TY]], %c4 : index
// QUADS: %[[B:.*]] = arith.addi %{{.*}}, %[[Q]] : index
// QUADS: memref.load %{{.*}}[%[[B]]] : memref<512xf32, 3>
// QUADS: %[[B1:.*]] = arith.addi %[[B]], %c1 : index
// QUADS: memref.load %{{.*}}[%[[B1]]] : memref<512xf32, 3>
// The slices are staged in runs of 4 too (A: 4 k of a row, B: 4 columns;
// aligned through the K loop's induction variable, a multiple of 8), and
// C is stored 4 columns at a time after the epilogue (bias, relu): every
// buffer but the bias becomes vec4s.
// QSPV-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<128 x vector<4xf32>>)>, Workgroup>
// QSPV-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>>)>, Workgroup>
// QSPV-DAG: spirv.GlobalVariable @layer_k0_gemm_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<1536 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// QSPV-DAG: spirv.GlobalVariable @layer_k0_gemm_arg_1 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<1536 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// QSPV-DAG: spirv.GlobalVariable @layer_k0_gemm_arg_2 bind(0, 2) : !spirv.ptr<!spirv.struct<(!spirv.array<128 x f32, stride=4> [0])>, StorageBuffer>
// QSPV-DAG: spirv.GlobalVariable @layer_k0_gemm_arg_3 bind(0, 3) : !spirv.ptr<!spirv.struct<(!spirv.array<4096 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// QSPV: spirv.Load "StorageBuffer" %{{.*}} : vector<4xf32>
// QSPV: spirv.Load "StorageBuffer" %{{.*}} : vector<4xf32>
// QSPV: spirv.Store "Workgroup" %{{.*}}, %{{.*}} : vector<4xf32>
// QSPV: spirv.ControlBarrier
// QSPV-COUNT-2: spirv.Load "Workgroup" %{{.*}} : vector<4xf32>
// QSPV-COUNT-4: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xf32>
// QBAD: error: --tessera-graph-to-schedule: micro-layout=diagonal is not a register-block layout; use micro-layout=strided or quads

// LANES: error: 'tessera_graph.matmul' op is not lowered for the gpu backend (tessera-graph-to-tile-kernels): the schedule's GEMM tile 64x64x16 with 1x1 per lane has 4096 lanes per group; it needs RM | TM, RN | TN and (TM/RM) x (TN/RN) <= 1024 lanes

func.func @layer(%x: tensor<128x48xf32>, %w: tensor<48x128xf32>, %b: tensor<128xf32>) -> tensor<128x128xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<128x48xf32>, tensor<48x128xf32> -> tensor<128x128xf32>
  %a = tessera_graph.add %m, %b : tensor<128x128xf32>, tensor<128xf32>
  %r = tessera_graph.relu %a : tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

func.func @hand(%x: tensor<32x16xf32>, %w: tensor<16x32xf32>) -> tensor<32x32xf32> {
  %y = tessera_schedule.tile(%x, %w) tile_sizes = [16, 16, 8] micro_tile = [2, 2] {
  ^bb0(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>):
    %m = tessera_graph.matmul %a, %b : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
    tessera_schedule.yield %m : tensor<32x32xf32>
  } : (tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}
