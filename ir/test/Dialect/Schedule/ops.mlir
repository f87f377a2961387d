// RUN: tessera-opt %s | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @tile
func.func @tile(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<96x32xf32> {
  // CHECK: tessera_schedule.tile(%{{.*}}, %{{.*}}, %{{.*}}) tile_sizes = [96, 256, 256] micro_tile = [6, 16]
  %y = tessera_schedule.tile (%x, %w, %b) tile_sizes = [96, 256, 256] micro_tile = [6, 16] {
  ^bb0(%a: tensor<96x64xf32>, %bw: tensor<64x32xf32>, %bias: tensor<32xf32>):
    %m = tessera_graph.matmul %a, %bw : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    %s = tessera_graph.add %m, %bias : tensor<96x32xf32>, tensor<32xf32>
    // CHECK: tessera_schedule.yield %{{.*}} : tensor<96x32xf32>
    tessera_schedule.yield %s : tensor<96x32xf32>
  } : (tensor<96x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// CHECK-LABEL: func.func @pipeline
func.func @pipeline(%a: memref<512xf32>, %out: memref<64xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // CHECK: tessera_schedule.pipeline %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} stages = 2
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
    // CHECK: tessera_schedule.prefetch %{{.*}}[%{{.*}}] scope = "shared" double_buffer
    %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
    // CHECK: tessera_schedule.copy
    tessera_schedule.copy %t, %out : memref<64xf32, 3>, memref<64xf32, 3>
    // CHECK: tessera_schedule.barrier
    tessera_schedule.barrier
  }
  return
}

// K^T as a col_major tensor (its storage is K row-major) and as a plain one;
// the value head dim may differ from the query/key head dim; a block need
// not divide its sequence (256 keys in blocks of 96: 96, 96, 64).
// CHECK-LABEL: func.func @flash_attention
func.func @flash_attention(%q: tensor<256x64xf32>,
                           %kt: tensor<64x256xf32, #tessera_graph.layout<col_major>>,
                           %kt2: tensor<64x128xf32>, %v: tensor<256x64xf32>,
                           %v2: tensor<128x32xf32>) -> (tensor<256x64xf32>, tensor<256x32xf32>) {
  // CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 block_q = 64 block_kv = 96 : tensor<256x64xf32>, tensor<64x256xf32, #tessera_graph.layout<col_major>>, tensor<256x64xf32> -> tensor<256x64xf32>
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 96
      : tensor<256x64xf32>, tensor<64x256xf32, #tessera_graph.layout<col_major>>, tensor<256x64xf32> -> tensor<256x64xf32>
  // CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00 block_q = 256 block_kv = 128 : tensor<256x64xf32>, tensor<64x128xf32>, tensor<128x32xf32> -> tensor<256x32xf32>
  %o2 = tessera_schedule.flash_attention %q, %kt2, %v2 scale = 1.0 block_q = 256 block_kv = 128
      : tensor<256x64xf32>, tensor<64x128xf32>, tensor<128x32xf32> -> tensor<256x32xf32>
  return %o, %o2 : tensor<256x64xf32>, tensor<256x32xf32>
}

// Heads as a batch dimension, with the causal mask.
// CHECK-LABEL: func.func @flash_attention_heads
func.func @flash_attention_heads(%q: tensor<12x256x64xf32>, %kt: tensor<12x64x256xf32>,
                                 %v: tensor<12x256x64xf32>) -> tensor<12x256x64xf32> {
  // CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 block_q = 64 block_kv = 64 causal : tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32> -> tensor<12x256x64xf32>
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 causal
      : tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32> -> tensor<12x256x64xf32>
  return %o : tensor<12x256x64xf32>
}

// The blockwise attention backward.
// CHECK-LABEL: func.func @flash_attention_grad
func.func @flash_attention_grad(%q: tensor<2x64x16xf32>, %kt: tensor<2x16x80xf32>, %v: tensor<2x80x8xf32>,
                                %o: tensor<2x64x8xf32>, %do: tensor<2x64x8xf32>)
    -> (tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>) {
  // CHECK: tessera_schedule.flash_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 block_q = 32 block_kv = 48 causal : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>, tensor<2x64x8xf32>, tensor<2x64x8xf32> -> tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>
  %dq, %dkt, %dv = tessera_schedule.flash_attention_grad %q, %kt, %v, %o, %do scale = 0.25 block_q = 32 block_kv = 48 causal
      : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>, tensor<2x64x8xf32>, tensor<2x64x8xf32>
      -> tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>
  return %dq, %dkt, %dv : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>
}
