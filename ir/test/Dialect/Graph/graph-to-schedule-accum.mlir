// RUN: tessera-opt %s -split-input-file --tessera-graph-to-schedule -verify-diagnostics
// A stated accumulator other than f32 / i32 is refused before scheduling,
// on every backend (they all share this pass): never a silent change of
// precision.

func.func @bf16_accumulator(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xbf16> {
  // expected-error @+1 {{asks for accum = bf16, a numerics policy no Tessera backend honours: the cpu, vulkan, cuda, hip and level_zero kernels accumulate floats in f32 (unsupported; use accum = f32 or leave it out)}}
  %c = tessera_graph.matmul %a, %b {accum = bf16} : tensor<16x8xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
  return %c : tensor<16x16xbf16>
}

// -----

func.func @f64_sum(%x: tensor<16x8xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{asks for accum = f64}}
  %s = tessera_graph.reduce sum %x dims = [1] order = pairwise {accum = f64} : tensor<16x8xf32> -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

func.func @i16_accumulator(%a: tensor<16x8xi8>, %b: tensor<8x16xi8>) -> tensor<16x16xi32> {
  // expected-error @+1 {{accumulate integers in i32 (unsupported; use accum = i32 or leave it out)}}
  %c = tessera_graph.matmul %a, %b {accum = i16} : tensor<16x8xi8>, tensor<8x16xi8> -> tensor<16x16xi32>
  return %c : tensor<16x16xi32>
}
