// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu | FileCheck %s --implicit-check-not=256x256 --implicit-check-not=65536xf32
// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu --tessera-cpu-expand-vector-exp | FileCheck %s --check-prefix=EXP --implicit-check-not=math.exp
// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu=matmul-lanes=16 | FileCheck %s --check-prefix=ZMM --implicit-check-not="vector<8xf32>"

// With 16 lanes: an AVX-512 target (the cpu compiler sets matmul-lanes=16 there)
// gets the same loop nest in vectors of 16 queries, 32 per register tile.
// ZMM-LABEL: func.func @attention
// ZMM: vector.fma {{.*}} : vector<16xf32>
// ZMM: math.exp {{.*}} : vector<16xf32>

// examples/flash_attention.mlir: one tessera_schedule.flash_attention
// (64 x 64 blocks) becomes the online-softmax loop nest.  Queries are
// row-local: 2 groups of 128 rows.  No 256x256 (65536-float) buffer exists:
// the scratch is Q^T, one score block S^T and O^T (64x64 each) and the
// per-query vectors m, m_new, l, alpha.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: memref<256x64xf32>, %[[K:.*]]: memref<16384xf32>, %[[V:.*]]: memref<256x64xf32>, %[[O:.*]]: memref<256x64xf32>, %{{.*}}: index
// CHECK-SAME: grid = array<i64: 2, 1, 1>
// CHECK: %[[QT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: %[[ST:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: %[[OT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: %[[M:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[MNEW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[L:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[ALPHA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// Query blocks of this group: Q^T * scale packed once, m = -inf, l = 0, O = 0.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64
// CHECK: memref.load %[[Q]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[QT]]
// CHECK: vector.store %{{.*}}, %[[M]]
// CHECK: vector.store %{{.*}}, %[[L]]
// CHECK: vector.store %{{.*}}, %[[OT]]
// Key/value blocks.
// CHECK: scf.for %[[KB:.*]] = %{{.*}} to %c256{{.*}} step %c64
// CHECK: vector.store %{{.*}}, %[[MNEW]]
// S^T = K_blk Q^T: K broadcast from the col_major argument itself.
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %[[QT]]
// CHECK: memref.load %[[K]]
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[ST]]
// m_new = max(m_new, rowmax S) from the register tile.
// CHECK: arith.maxf
// CHECK: vector.load %[[MNEW]]
// CHECK: arith.maxf
// CHECK: vector.store %{{.*}}, %[[MNEW]]
// alpha = exp(m - m_new); P = exp(S - m_new) in place; l = l * alpha + rowsum P.
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK: %[[MN:.*]] = vector.load %[[MNEW]][%[[IV]]]
// CHECK: %[[MO:.*]] = vector.load %[[M]][%[[IV]]]
// CHECK: %[[D:.*]] = arith.subf %[[MO]], %[[MN]] : vector<8xf32>
// CHECK: %[[A:.*]] = math.exp %[[D]] : vector<8xf32>
// CHECK: scf.for {{.*}} iter_args(%[[SUM:.*]] = {{.*}}) -> (vector<8xf32>)
// CHECK: vector.load %[[ST]]
// CHECK: math.exp %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[ST]]
// CHECK: arith.addf %[[SUM]]
// CHECK: vector.load %[[L]]
// CHECK: vector.fma %{{.*}}, %[[A]], %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[L]]
// CHECK: vector.store %[[MN]], %[[M]]
// CHECK: vector.store %[[A]], %[[ALPHA]]
// O^T = O^T * alpha + V_blk^T P^T.
// CHECK: vector.load %[[ALPHA]]
// CHECK: vector.load %[[OT]]
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %[[ST]]
// CHECK: memref.load %[[V]]
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[OT]]
// O = O^T / l after the last block.
// CHECK: memref.load %[[L]]
// CHECK: arith.divf
// CHECK: memref.load %[[OT]]
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: memref.dealloc %[[QT]]
// CHECK: return

// The exps become polynomials: no math.exp remains.
// EXP-LABEL: func.func @attention
// EXP: math.floor %{{.*}} : vector<8xf32>
// EXP: arith.shli %{{.*}} : vector<8xi32>
// EXP: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
func.func @attention(%q: tensor<256x64xf32>,
                     %kt: tensor<64x256xf32, #tessera_graph.layout<col_major>>,
                     %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %scale = arith.constant dense<0.125> : tensor<256xf32>
  %k_t = tessera_graph.convert_layout %kt : tensor<64x256xf32, #tessera_graph.layout<col_major>> -> tensor<64x256xf32>
  %s0 = tessera_graph.matmul %q, %k_t : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<256x256xf32>, tensor<256xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<256x256xf32>
  %o = tessera_graph.matmul %p, %v : tensor<256x256xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}

// 200 keys in blocks of 64: three full blocks in a loop, then the partial
// block of 8 keys with its own static trip counts (S^T tile rows, the exp
// loop, the O^T contraction).
// CHECK-LABEL: func.func @partial
// CHECK: scf.for %{{.*}} = %{{.*}} to %c192{{.*}} step %c64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c1{{.*}} iter_args
// CHECK: math.exp
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args
// CHECK: math.exp
// CHECK: return
func.func @partial(%q: tensor<64x16xf32>, %kt: tensor<16x200xf32>, %v: tensor<200x16xf32>) -> tensor<64x16xf32> {
  %s = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x200xf32> -> tensor<64x200xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<64x200xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x200xf32>, tensor<200x16xf32> -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}
