// Schedule IR the cpu backend must follow even when graph-to-schedule would
// not write it that way (bugs found in review, each a function here):
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel two_results --iterations 1 | FileCheck %s
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel col_major_leaf --iterations 1 | FileCheck %s
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel two_roots --iterations 1 | FileCheck %s
// RUN: env TESSERA_BACKEND=vulkan tessera-run %s --kernel two_results --iterations 1 | FileCheck %s --check-prefix=GPU
// CHECK-NOT: FAIL
// CHECK: verify: {{.*}}: PASS
// GPU: {{verify: .*: PASS|vulkan backend unavailable}}

// A matmul tile with two results whose first feeds the next matmul tile's
// lhs: merge-matmul-chains leaves it alone (it used to merge only result 0
// and erase the tile while result 1 was still used: a crash).
func.func @two_results(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = tessera_schedule.tile(%x, %w) tile_sizes = [8, 16, 8] micro_tile = [4, 8] {
  ^bb0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>):
    %1 = tessera_graph.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    %2 = tessera_graph.relu %1 : tensor<8x8xf32>
    tessera_schedule.yield %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %3 = tessera_schedule.tile(%0#0, %v) tile_sizes = [8, 16, 8] micro_tile = [4, 8] {
  ^bb0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>):
    %4 = tessera_graph.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    tessera_schedule.yield %4 : tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3, %0#1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// A matmul epilogue reading a col_major tensor: its elements are gathered
// through the layout (it used to be "a fused epilogue operand must be
// row-major").
func.func @col_major_leaf(%a: tensor<8x16xf32>, %b: tensor<16x12xf32>, %r: tensor<8x12xf32, #tessera_graph.layout<col_major>>) -> tensor<8x12xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<8x16xf32>, tensor<16x12xf32> -> tensor<8x12xf32>
  %d = tessera_graph.add %c, %r : tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>
  return %d : tensor<8x12xf32>
}

// A hand-written tile whose tree reads two roots: the second is stored
// first (it used to be "no buffer for a fused operand").
func.func @two_roots(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x16xf32>, %d: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %y = tessera_schedule.tile(%a, %b, %c, %d) tile_sizes = [12, 16, 256] micro_tile = [6, 16] {
  ^bb0(%p: tensor<8x16xf32>, %q: tensor<16x8xf32>, %r: tensor<8x16xf32>, %s: tensor<16x8xf32>):
    %m0 = tessera_graph.matmul %p, %q : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
    %m1 = tessera_graph.matmul %r, %s : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
    %z = tessera_graph.add %m0, %m1 : tensor<8x8xf32>, tensor<8x8xf32>
    tessera_schedule.yield %z : tensor<8x8xf32>
  } : (tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
