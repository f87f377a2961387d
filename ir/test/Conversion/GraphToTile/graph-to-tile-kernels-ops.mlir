// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=ops_k0_elementwise --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k0_elementwise.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k0_elementwise.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=ops_k1_softmax --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k1_softmax.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k1_softmax.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=ops_k2_reduce --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k2_reduce.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k2_reduce.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=ops_k3_reduce --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k3_reduce.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k3_reduce.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=ops_k4_layout --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k4_layout.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k4_layout.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=strided_k0_softmax --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.s0.spv
// RUN: spirv-val --target-env vulkan1.1 %t.s0.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=strided_k1_reduce --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.s1.spv
// RUN: spirv-val --target-env vulkan1.1 %t.s1.spv

// Everything but matmul: one fused elementwise kernel for sub (bias
// broadcast), mul by a splat constant, gelu, exp, div, max; softmax (one
// group per row, shared-memory trees); a sequential reduction (one lane per
// row, left to right) and a pairwise one (one group per row: the balanced
// tree, chunks of 2 per lane, then shared memory); a layout conversion.
// Results are written straight into the output buffers; only %5 (used by
// softmax and reduce max) needs an intermediate.
// CHECK-LABEL: func.func @ops(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2400xf32> {tessera.buffer = "input"}, %[[B:[a-z0-9]+]]: memref<300xf32> {tessera.buffer = "input"}, %[[Y:[a-z0-9]+]]: memref<2400xf32> {tessera.buffer = "input"}, %[[P:[a-z0-9]+]]: memref<2400xf32> {tessera.buffer = "output"}, %[[S:[a-z0-9]+]]: memref<8xf32> {tessera.buffer = "output"}, %[[M:[a-z0-9]+]]: memref<8xf32> {tessera.buffer = "output"}, %[[C:[a-z0-9]+]]: memref<2400xf32> {tessera.buffer = "output"})
// CHECK-NEXT: %[[T:.*]] = memref.alloc() {tessera.buffer = "intermediate", tessera.bytes = 9600 : i64}
// CHECK-NEXT: call @ops_k0_elementwise(%[[X]], %[[B]], %[[Y]], %[[T]]) {tessera.grid = array<i64: 10, 1, 1>}
// CHECK-NEXT: call @ops_k1_softmax(%[[T]], %[[P]]) {tessera.grid = array<i64: 8, 1, 1>}
// CHECK-NEXT: call @ops_k2_reduce(%[[P]], %[[S]]) {tessera.grid = array<i64: 1, 1, 1>}
// CHECK-NEXT: call @ops_k3_reduce(%[[T]], %[[M]]) {tessera.grid = array<i64: 8, 1, 1>}
// CHECK-NEXT: call @ops_k4_layout(%[[P]], %[[C]]) {tessera.grid = array<i64: 10, 1, 1>}
// CHECK-NEXT: memref.dealloc %[[T]]

// Grid-stride loop, one element per lane; the bias is read at i % 300.
// CHECK-LABEL: func.func @ops_k0_elementwise(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c2400 step
// CHECK-DAG: %[[XV:.*]] = memref.load %arg0[%[[I]]]
// CHECK-DAG: %[[BI:.*]] = arith.remui %[[I]], %c300
// CHECK: %[[BV:.*]] = memref.load %arg1[%[[BI]]]
// CHECK: arith.subf %[[XV]], %[[BV]]
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.exp
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.maxf %{{.*}}, %[[XV]]
// CHECK: memref.store %{{.*}}, %arg3[%[[I]]]

// CHECK-LABEL: func.func @ops_k1_softmax(
// CHECK-COUNT-2: tessera_tile.shared_alloc : memref<256xf32, 3>
// CHECK: scf.for
// CHECK: arith.maxf
// CHECK: tessera_tile.barrier
// CHECK: arith.shrui %c128
// CHECK: tessera_tile.barrier
// CHECK: math.exp
// CHECK: tessera_tile.barrier
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: tessera_tile.barrier

// CHECK-LABEL: func.func @ops_k2_reduce(
// CHECK: scf.for %[[O:.*]] = %{{.*}} to %c8 step
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[O]], %c300
// CHECK-NEXT: %[[FIRST:.*]] = memref.load %arg0[%[[BASE]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[J:.*]] = %c1 to %c300 step %c1 iter_args(%[[ACC:.*]] = %[[FIRST]])
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[BASE]], %[[J]]
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[%[[AT]]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NOT: tessera_tile.barrier
// CHECK: memref.store %[[SUM]], %arg1[%[[O]]]
// CHECK-LABEL: func.func @ops_k3_reduce(
// CHECK: %[[ID:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[ACC:.*]] = %[[ID]])
// CHECK: arith.cmpi ult, %{{.*}}, %c300
// CHECK: arith.maxf %[[ACC]]
// CHECK: tessera_tile.barrier
// CHECK-COUNT-8: arith.maxf
// CHECK: arith.cmpi eq, %{{.*}}, %c0
// CHECK: memref.store %{{.*}}, %arg1[

// row_major [8x300] -> col_major: load at i*300 + j, store at j*8 + i.
// CHECK-LABEL: func.func @ops_k4_layout(
// CHECK: %[[I:.*]] = arith.divui %{{.*}}, %c300
// CHECK: %[[J:.*]] = arith.remui %{{.*}}, %c300
// CHECK: arith.muli %[[I]], %c300
// CHECK: arith.muli %[[J]], %c8
func.func @ops(%x: tensor<8x300xf32>, %b: tensor<300xf32>, %y: tensor<8x300xf32>)
    -> (tensor<8x300xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x300xf32, #tessera_graph.layout<col_major>>) {
  %half = arith.constant dense<0.5> : tensor<8x300xf32>
  %0 = tessera_graph.sub %x, %b : tensor<8x300xf32>, tensor<300xf32>
  %1 = tessera_graph.mul %0, %half : tensor<8x300xf32>, tensor<8x300xf32>
  %2 = tessera_graph.gelu %1 : tensor<8x300xf32>
  %3 = tessera_graph.exp %y : tensor<8x300xf32>
  %4 = tessera_graph.div %2, %3 : tensor<8x300xf32>, tensor<8x300xf32>
  %5 = tessera_graph.max %4, %x : tensor<8x300xf32>, tensor<8x300xf32>
  %6 = tessera_graph.softmax %5 dim = 1 : tensor<8x300xf32>
  %s = tessera_graph.reduce sum %6 dims = [1] order = sequential : tensor<8x300xf32> -> tensor<8xf32>
  %m = tessera_graph.reduce max %5 dims = [1] order = pairwise : tensor<8x300xf32> -> tensor<8xf32>
  %c = tessera_graph.convert_layout %6 : tensor<8x300xf32> -> tensor<8x300xf32, #tessera_graph.layout<col_major>>
  return %6, %s, %m, %c : tensor<8x300xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x300xf32, #tessera_graph.layout<col_major>>
}


// Softmax over dim 0 of 4x6x8: 48 rows of 4 elements, 48 apart (row r
// starts at (r / 48) * 192 + r % 48 = r). Reduce over dims [0, 2]: the
// kept index o is at o * 8, reduced element j at (j / 8) * 48 + j % 8.
// CHECK-LABEL: func.func @strided(
// CHECK: call @strided_k0_softmax(%{{.*}}) {tessera.grid = array<i64: 48, 1, 1>}
// CHECK: call @strided_k1_reduce(%{{.*}}) {tessera.grid = array<i64: 1, 1, 1>}
// CHECK-LABEL: func.func @strided_k0_softmax(
// CHECK: arith.muli %{{.*}}, %c48
// CHECK-LABEL: func.func @strided_k1_reduce(
// CHECK: %[[KEPT:.*]] = arith.muli %{{.*}}, %c8
// CHECK: scf.for %[[J:.*]] = %c1 to %c32 step %c1
// CHECK-DAG: arith.remui %[[J]], %c8
// CHECK-DAG: arith.divui %[[J]], %c8
// CHECK: arith.muli %{{.*}}, %c48
func.func @strided(%x: tensor<4x6x8xf32>) -> (tensor<4x6x8xf32>, tensor<6xf32>) {
  %s = tessera_graph.softmax %x dim = 0 : tensor<4x6x8xf32>
  %r = tessera_graph.reduce sum %x dims = [0, 2] order = sequential : tensor<4x6x8xf32> -> tensor<6xf32>
  return %s, %r : tensor<4x6x8xf32>, tensor<6xf32>
}
