// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule="row-tile=8 vector-width=4" --tessera-schedule-to-cpu | FileCheck %s --check-prefix=ROWS
// RUN: tessera-opt %s --tessera-graph-to-schedule="micro-m=12 micro-n=32" --tessera-schedule-to-cpu=matmul-lanes=16 | FileCheck %s --check-prefix=ZMM
// RUN: tessera-opt %s --tessera-graph-to-schedule="micro-m=6 micro-n=8" --tessera-schedule-to-cpu=matmul-lanes=16 | FileCheck %s --check-prefix=YMM
// RUN: not tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu=matmul-lanes=4 2>&1 | FileCheck %s --check-prefix=BADLANES

// A matmul with a fused bias+relu epilogue becomes a BLIS nest on memrefs:
// packed A/B buffers, an MRxNR register tile of vector<8xf32> updated with
// vector.fma, and the epilogue applied before the store.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: (%{{.*}}: memref<96x64xf32>, %{{.*}}: memref<64x32xf32>, %{{.*}}: memref<32xf32>, %{{.*}}: memref<96x32xf32>, %{{.*}}: index
// CHECK-SAME: tessera.cpu_kernel = {dtypes = [f32, f32, f32, f32], grid = array<i64: 2, 1, 1>
// Packed A: (MC/MR + 1) slivers of KC x MR floats (MC = 96, KC = 64).
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<6528xf32>
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: vector.store
// AVX-512 (matmul-lanes=16, what the cpu compiler sets on a target with
// AVX-512F): a 12 x 32 register tile is 24 vector<16xf32> accumulators.
// ZMM-LABEL: func.func @dense
// ZMM: memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xf32>
// Prefetches come from inside the micro-kernel's k loop, before the step's
// loads (a prefetch orders memory: loads hoisted above one spilled
// accumulators), never in a burst before it: the C tile's rows (write),
// then the rows of B packed next (read).
// ZMM-NOT: memref.prefetch
// ZMM: scf.for {{.*}} iter_args
// ZMM-NOT: vector.load
// ZMM: memref.prefetch %arg3[{{.*}}], write, locality<3>, data : memref<96x32xf32>
// ZMM-NOT: vector.load
// ZMM: memref.prefetch %arg1[{{.*}}], read, locality<2>, data : memref<64x32xf32>
// ZMM: vector.load {{.*}} : memref<{{[0-9]+}}xf32>, vector<16xf32>
// ZMM: vector.fma {{.*}} : vector<16xf32>
// ZMM-NOT: vector.fma {{.*}} : vector<8xf32>
// ZMM: arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// ZMM: vector.store {{.*}} : memref<96x32xf32>, vector<16xf32>
// A tile whose NR is not a multiple of 16 keeps 8 lanes.
// YMM-LABEL: func.func @dense
// YMM: vector.fma {{.*}} : vector<8xf32>
// YMM-NOT: vector<16xf32>
// YMM-LABEL: func.func @attention
// BADLANES: error: tessera-schedule-to-cpu: matmul-lanes must be 8 (AVX2) or 16 (AVX-512), not 4
func.func @dense(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<96x32xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
  %a = tessera_graph.add %m, %b : tensor<96x32xf32>, tensor<32xf32>
  %r = tessera_graph.relu %a : tensor<96x32xf32>
  return %r : tensor<96x32xf32>
}

// 1024 rows: 8 groups of 128, each reading all of B.  B is packed once,
// sliver by sliver, into the kernel's scratch parameter (%arg3: 4 state
// words, then 2 slivers x 64 x 32 values), by the group that counts first
// into the sliver's word (+1); it publishes the sliver by adding 2^30, the
// others spin until the word reaches it.  The micro-kernel prefetches the
// next sliver: packed already (its word), its packed rows; else the rows of
// B this group will pack.  The last group to finish zeroes the words.
// ZMM-LABEL: func.func @shared_weights
// ZMM-SAME: %arg1: memref<64x96xf32>, %arg2: memref<1024x96xf32>, %arg3: memref<24640xi8>
// ZMM-SAME: grid = array<i64: 8, 1, 1>
// ZMM-SAME: scratch = 1 : i64
// ZMM: %[[FLAGS:.*]] = memref.view %arg3[%c0][] : memref<24640xi8> to memref<4xi32>
// ZMM: %[[SB:.*]] = memref.view %arg3[%c64][] : memref<24640xi8> to memref<6144xf32>
// ZMM: memref.alloc() {alignment = 64 : i64} : memref<9984xf32>
// ZMM-NEXT: memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// ZMM: %[[SEEN:.*]] = memref.atomic_rmw addi %{{.*}}, %[[FLAGS]][%[[SLOT:.*]]] : (i32, memref<4xi32>) -> i32
// ZMM: scf.if
// ZMM: memref.prefetch %arg1
// ZMM: vector.store %{{.*}}, %[[SB]]
// ZMM: memref.atomic_rmw addi %c1073741824_i32{{.*}}, %[[FLAGS]][%[[SLOT]]]
// ZMM: scf.while
// ZMM: memref.atomic_rmw ori %{{.*}}, %[[FLAGS]][%[[SLOT]]]
// ZMM: memref.atomic_rmw ori %{{.*}}, %[[FLAGS]]
// ZMM: scf.if
// ZMM: memref.prefetch %[[SB]]
// ZMM: } else {
// ZMM: memref.prefetch %arg1
// ZMM: vector.load %[[SB]]
// ZMM: memref.atomic_rmw addi %{{.*}}, %[[FLAGS]][%c3]
// ZMM: memref.store %c0_i32, %[[FLAGS]]
func.func @shared_weights(%x: tensor<1024x64xf32>, %w: tensor<64x96xf32>) -> tensor<1024x96xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<1024x64xf32>, tensor<64x96xf32> -> tensor<1024x96xf32>
  return %m : tensor<1024x96xf32>
}

// A splat tensor constant (the attention scale) is fused into the first
// matmul's epilogue as a scalar, broadcast across the register; a K^T
// argument in col_major layout is a flat memref read by convert_layout; the
// softmax becomes max / exp-sum / scale loops.  Not row-local (layout
// argument), so one group computes everything.  The probabilities are also
// returned, so this is not rewritten into a flash_attention
// (flash-attention-to-cpu.mlir has that form).
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%{{.*}}: memref<32x16xf32>, %{{.*}}: memref<512xf32>, %{{.*}}: memref<32x16xf32>, %{{.*}}: memref<32x16xf32>, %{{.*}}: memref<32x32xf32>, %{{.*}}: index
// CHECK-SAME: grid = array<i64: 1, 1, 1>
// CHECK-NOT: memref<32xf32>
// CHECK: vector.fma
// CHECK: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: vector.broadcast %[[SCALE]] : f32 to vector<8xf32>
// CHECK: math.exp
// CHECK: vector.fma
func.func @attention(%q: tensor<32x16xf32>, %kt: tensor<16x32xf32, #tessera_graph.layout<col_major>>,
                     %v: tensor<32x16xf32>) -> (tensor<32x16xf32>, tensor<32x32xf32>) {
  %scale = arith.constant dense<0.25> : tensor<32xf32>
  %k = tessera_graph.convert_layout %kt : tensor<16x32xf32, #tessera_graph.layout<col_major>> -> tensor<16x32xf32>
  %s0 = tessera_graph.matmul %q, %k : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<32x32xf32>, tensor<32xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<32x32xf32>
  %o = tessera_graph.matmul %p, %v : tensor<32x32xf32>, tensor<32x16xf32> -> tensor<32x16xf32>
  return %o, %p : tensor<32x16xf32>, tensor<32x32xf32>
}

// A tile without matmul follows its schedule: R = 64 rows per group by
// default (one group for 64 rows), 8-wide vectors; with row-tile=8 and
// vector-width=4, 8 groups of 8 rows and vector<4xf32>. The scale and the
// cast are applied before the one store (no buffer for the softmax).
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME: grid = array<i64: 1, 1, 1>
// CHECK-NOT: memref.alloc() {{.*}} : memref<{{[0-9]+}}x100xf32>
// CHECK: math.exp {{.*}} : vector<8xf32>
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// ROWS-LABEL: func.func @softmax_rows
// ROWS-SAME: grid = array<i64: 8, 1, 1>
// ROWS: math.exp {{.*}} : vector<4xf32>
func.func @softmax_rows(%x: tensor<64x100xf32>) -> tensor<64x100xbf16> {
  %c = arith.constant dense<2.0> : tensor<64x100xf32>
  %s = tessera_graph.softmax %x dim = 1 : tensor<64x100xf32>
  %m = tessera_graph.mul %s, %c : tensor<64x100xf32>, tensor<64x100xf32>
  %y = tessera_graph.cast %m : tensor<64x100xf32> -> tensor<64x100xbf16>
  return %y : tensor<64x100xbf16>
}
