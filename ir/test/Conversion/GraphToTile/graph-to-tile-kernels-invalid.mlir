// RUN: tessera-opt %s -split-input-file --tessera-gpu-graph-pipeline=backend=vulkan -verify-diagnostics

// Graph ops without a GPU kernel: a diagnostic naming the op and the
// backend, nothing half-converted.
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
func.func @collective(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'tessera_graph.all_reduce' op is not lowered for the vulkan backend (tessera-graph-to-tile-kernels): no GPU kernel for this op yet}}
  %r = tessera_graph.all_reduce sum %x over @mesh ["dp"] : tensor<8x16xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

func.func @table(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op is not lowered for the vulkan backend (tessera-graph-to-tile-kernels): only splat tensor constants are supported (f32, f16, bf16, f8E4M3FN, f8E5M2, i32, i8, i1)}}
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = tessera_graph.add %x, %t : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @layout_operand(%x: tensor<8x16xf32, #tessera_graph.layout<col_major>>) -> tensor<8x16xf32, #tessera_graph.layout<col_major>> {
  // expected-error @+1 {{operands must be row-major (insert a convert_layout)}}
  %r = tessera_graph.exp %x : tensor<8x16xf32, #tessera_graph.layout<col_major>>
  return %r : tensor<8x16xf32, #tessera_graph.layout<col_major>>
}

// -----

// A shape whose element count wraps 64 bits: getNumElements said 4, and the
// kernel was lowered onto memref<4xf32>.
func.func @wraps(%x: tensor<4611686018427387905x4xf32>) -> tensor<4611686018427387905x4xf32> {
  // expected-error @+1 {{'tessera_graph.relu' op has a tensor 'tensor<4611686018427387905x4xf32>' that has more elements than a 64-bit count holds: no device addresses that much memory; give it a size that fits}}
  %r = tessera_graph.relu %x : tensor<4611686018427387905x4xf32>
  return %r : tensor<4611686018427387905x4xf32>
}
