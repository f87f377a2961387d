// RUN: tessera-opt %s --tessera-schedule-to-cpu | FileCheck %s --implicit-check-not=128x128 --implicit-check-not=16384xf32

// A causal flash_attention over 4 heads (Schedule IR as graph-to-schedule
// writes it for a masked, batched attention): the groups split the heads
// (4 groups of 1), each loops over its heads, then its query blocks; keys
// past a query are set to -inf in the score tile (an i32 vector compare of
// the key with the lanes' queries, a select), and the key loop ends at the
// block holding the query block's last row (min(128, row0 + qb + rows)).
// No 128 x 128 score buffer exists.
// CHECK-LABEL: func.func @causal_heads
// CHECK-SAME: (%[[Q:.*]]: memref<4x128x32xf32>, %[[K:.*]]: memref<4x32x128xf32>, %[[V:.*]]: memref<4x128x32xf32>, %[[O:.*]]: memref<4x128x32xf32>
// CHECK-SAME: grid = array<i64: 4, 1, 1>
// CHECK: %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
// Heads (indices offset by the group's first head), then query blocks.
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %[[QB:.*]] = %{{.*}} to %{{.*}} step %c64
// CHECK: memref.load %[[Q]][
// The causal key loop bound.
// CHECK: %[[END:.*]] = arith.minsi %c128{{.*}}, %{{.*}}
// CHECK: scf.for %[[KB:.*]] = %{{.*}} to %[[END]] step %c64
// CHECK: memref.load %[[K]][
// CHECK: vector.fma
// CHECK: arith.addi %{{.*}}, %[[LANES]] : vector<8xi32>
// CHECK: arith.cmpi sgt, %{{.*}} : vector<8xi32>
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: math.exp
// CHECK: memref.load %[[V]][
// CHECK: memref.store %{{.*}}, %[[O]][
func.func @causal_heads(%q: tensor<4x128x32xf32>, %kt: tensor<4x32x128xf32>, %v: tensor<4x128x32xf32>)
    -> tensor<4x128x32xf32> {
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 causal
      : tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32> -> tensor<4x128x32xf32>
  return %o : tensor<4x128x32xf32>
}
