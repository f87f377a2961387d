// The gradient of a loss through int8 storage: the dequantize scales get
// dy * f32(q) summed (per tensor, per channel), quantize passes no gradient
// (integers carry none); the program runs on cpu and vulkan and matches the
// reference's evaluation of the same gradient.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function f_grad --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function f_grad --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: exit code 0
func.func private @f(%q: tensor<4x8xi8>, %s: tensor<1xf32>, %w: tensor<8x3xf32>, %c: tensor<3xf32>) -> tensor<1x1xf32> {
  %d = tessera_graph.dequantize %q, %s : tensor<4x8xi8>, tensor<1xf32> -> tensor<4x8xf32>
  %m = tessera_graph.matmul %d, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %t = tessera_graph.tanh %m : tensor<4x3xf32>
  %q2 = tessera_graph.quantize %t, %c axis = 1 : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xi8>
  %e = tessera_graph.dequantize %q2, %c axis = 1 : tensor<4x3xi8>, tensor<3xf32> -> tensor<4x3xf32>
  %y = tessera_graph.mul %e, %t : tensor<4x3xf32>, tensor<4x3xf32>
  %l = tessera_graph.reduce sum %y dims = [0, 1] order = pairwise : tensor<4x3xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}
func.func private @f_grad(tensor<4x8xi8>, tensor<1xf32>, tensor<8x3xf32>, tensor<3xf32>)
    -> (tensor<1x1xf32>, tensor<1xf32>, tensor<8x3xf32>, tensor<3xf32>)
    attributes {tessera.grad_of = @f, tessera.wrt = [1, 2, 3]}
