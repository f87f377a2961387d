// A stochastic cast that keys its random bits by the global index of an
// SPMD part (the device's mesh position and the global strides, as
// --tessera-shard-propagation writes it) gives the reference's bits on cpu
// and vulkan: fused after an elementwise op, and in a matmul's epilogue
// (K = 1: the f32 products are exact in any order, so tolerance 0 holds).
// The position is an input here (random small integers, negative ones
// too: the digits are taken of its unsigned value on both sides); seed 1
// gives positions with nonzero digits in both functions (with the
// position's term left out of the reference, both fail).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function elementwise --tolerance 0 --iterations 1 --seed 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function elementwise --tolerance 0 --iterations 1 --seed 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function epilogue --tolerance 0 --iterations 1 --seed 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function epilogue --tolerance 0 --iterations 1 --seed 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: {{.*}}: PASS
// CHECK: exit code 0

// Device (i, j) of a 2 x 2 mesh holds rows i*37.. and columns j*50.. of a
// global 74 x 100 tensor.
func.func @elementwise(%x: tensor<37x50xf32>, %p: tensor<1xi32>) -> tensor<37x50xbf16> {
  %y = tessera_graph.mul %x, %x : tensor<37x50xf32>, tensor<37x50xf32>
  %r = tessera_graph.cast %y, %p {rounding = "stochastic", seed = 11, global_strides = array<i64: 100, 1>,
         mesh_shape = array<i64: 2, 2>, mesh_offsets = array<i64: 3700, 50>} : tensor<37x50xf32>, tensor<1xi32> -> tensor<37x50xbf16>
  return %r : tensor<37x50xbf16>
}

// Columns split over the second axis of a 3 x 2 mesh, rows whole.
func.func @epilogue(%a: tensor<70x1xf32>, %b: tensor<1x45xf32>, %p: tensor<1xi32>) -> tensor<70x45xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<70x1xf32>, tensor<1x45xf32> -> tensor<70x45xf32>
  %r = tessera_graph.cast %c, %p {rounding = "stochastic", seed = 12, global_strides = array<i64: 90, 1>,
         mesh_shape = array<i64: 3, 2>, mesh_offsets = array<i64: 0, 45>} : tensor<70x45xf32>, tensor<1xi32> -> tensor<70x45xbf16>
  return %r : tensor<70x45xbf16>
}
