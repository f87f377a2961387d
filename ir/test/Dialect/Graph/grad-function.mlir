// RUN: tessera-opt %s --tessera-grad="function=mlp wrt=1" | FileCheck %s --check-prefix=MLP
// RUN: not tessera-opt %s --tessera-grad="function=mlp wrt=2" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tessera-opt %s --tessera-grad="function=mlp wrt=1 loss-scale=1024" | FileCheck %s --check-prefix=SCALE

// Loss scaling: the seed is the scale, each gradient divided by it in f32.
// SCALE-LABEL: func.func @mlp_grad(
// SCALE: arith.constant dense<1.024000e+03> : tensor<1x1xf32>
// SCALE: %[[S:.*]] = arith.constant dense<9.765625E-4> : tensor<8x16xf32>
// SCALE: %[[G:.*]] = tessera_graph.mul %{{.*}}, %[[S]] : tensor<8x16xf32>, tensor<8x16xf32>
// SCALE: return %{{.*}}, %[[G]]

// The matmul's rule: dW = x^T . dh, with the transpose as its own op; the
// relu's mask reads relu's result (what the backward keeps anyway).
// MLP-LABEL: func.func @mlp_grad(
// MLP-SAME: -> (tensor<1x1xf32>, tensor<8x16xf32>) attributes {tessera.saved_bytes = 256 : i64}
// MLP: %[[H0:.*]] = tessera_graph.matmul %arg0, %arg1
// MLP: %[[H:.*]] = tessera_graph.relu %[[H0]]
// MLP: tessera_graph.compare gt %[[H]],
// MLP: %[[XT:.*]] = tessera_graph.transpose %arg0 perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// MLP: %[[DW:.*]] = tessera_graph.matmul %[[XT]], %{{.*}} : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
// MLP: return %{{.*}}, %[[DW]] : tensor<1x1xf32>, tensor<8x16xf32>
func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %h = tessera_graph.relu %h0 : tensor<4x16xf32>
  %l = tessera_graph.reduce sum %h dims = [0, 1] order = pairwise : tensor<4x16xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}

// BAD: error: 'func.func' op wrt names argument 2, and @mlp has 2 (numbered from 0)
