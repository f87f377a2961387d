// RUN: tessera-opt %s --tessera-schedule-to-cpu | FileCheck %s --implicit-check-not=128x128 --implicit-check-not=16384xf32
// RUN: tessera-opt %s --tessera-schedule-to-cpu=matmul-lanes=16 | FileCheck %s --check-prefix=ZMM --implicit-check-not="vector<8xf32>"
// ZMM-LABEL: func.func @attention_bwd
// ZMM: vector.fma {{.*}} : vector<16xf32>

// The blockwise attention backward over 4 heads: groups split the heads;
// per head, the packs, pass 1 (the softmax statistics) and pass 2 over key
// blocks of 64 with query tiles of 16 starting (causal) at the tile holding
// the block's first key; dK^T and dV stored per key block, dQ at the end.
// No 128 x 128 buffer: the score storage is one 64 x 16 block of P^T and
// one of dS^T.
// CHECK-LABEL: func.func @attention_bwd
// CHECK-SAME: grid = array<i64: 4, 1, 1>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<32x128xf32>
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %c1
// Pass 1: exp of the scores, the running max.
// CHECK: vector.fma
// CHECK: arith.maxf
// CHECK: math.exp
// CHECK: arith.divf
// Pass 2: key blocks of 64; causal query tiles from floor(kb / 16) * 16.
// CHECK: scf.for %[[KB:.*]] = %{{.*}} to %c128{{.*}} step %c64
// CHECK: arith.divui %[[KB]], %c16
// CHECK: arith.cmpi sgt, %{{.*}} : vector<8xi32>
// CHECK: math.exp
// CHECK: vector.fma
func.func @attention_bwd(%q: tensor<4x128x32xf32>, %kt: tensor<4x32x128xf32>, %v: tensor<4x128x32xf32>,
                         %o: tensor<4x128x32xf32>, %do: tensor<4x128x32xf32>)
    -> (tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32>) {
  %dq, %dkt, %dv = tessera_schedule.flash_attention_grad %q, %kt, %v, %o, %do scale = 0.125 block_q = 64 block_kv = 64 causal
      : tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32>, tensor<4x128x32xf32>, tensor<4x128x32xf32>
      -> tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32>
  return %dq, %dkt, %dv : tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32>
}
