// RUN: tessera-opt %s -split-input-file --tessera-tile-to-cpu -verify-diagnostics | FileCheck %s

// Ids come from the trailing launch arguments, shared memory is a view into
// the group's scratch, cp_async is a synchronous vector copy (commit / wait
// vanish), mma is one outer product per k, atomics follow their scope.

// CHECK-LABEL: func.func @ops
// CHECK-SAME: (%[[G:.*]]: memref<1024xf32>, %[[O:.*]]: memref<16xf32>,
// CHECK-SAME:  %[[GX:.*]]: index, %[[GY:.*]]: index, %[[GZ:.*]]: index, %[[NX:.*]]: index, %[[NY:.*]]: index, %[[NZ:.*]]: index, %[[SMEM:.*]]: memref<65536xi8>)
// CHECK-SAME: tessera.cpu_kernel = {grid = array<i64: 8, 2, 1>, group_size = array<i64: 4, 1, 1>, inputs = 2 : i64, outputs = 0 : i64, shared_memory = 1088 : i64}
// CHECK-NOT: tessera_tile.group_size
// CHECK: %[[S1:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<65536xi8> to memref<16xf32>
// CHECK: %[[S2:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<65536xi8> to memref<256xf32>
// CHECK: %[[V:.*]] = vector.load %[[G]][%[[GX]]] : memref<1024xf32>, vector<4xf32>
// CHECK: vector.store %[[V]], %[[S2]][%[[NY]]] : memref<256xf32>, vector<4xf32>
// CHECK-NOT: cp_async
// CHECK: arith.extf %{{.*}} : vector<4x2xf16> to vector<4x2xf32>
// CHECK: vector.transpose
// CHECK-COUNT-2: vector.outerproduct
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[O]]
// CHECK: memref.generic_atomic_rmw %[[O]]
// CHECK:   arith.maxf
// CHECK: %[[OLD:.*]] = memref.load %[[O]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK: memref.store %[[NEW]], %[[O]]
// CHECK: math.exp
// CHECK: math.fma
// CHECK: arith.maxf
func.func @ops(%g: memref<1024xf32>, %o: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 4>, tessera_tile.grid = array<i64: 8, 2>} {
  %fa = arith.constant dense<1.0> : vector<4x2xf16>
  %fb = arith.constant dense<2.0> : vector<2x4xf16>
  %fc = arith.constant dense<0.0> : vector<4x4xf32>
  %z = arith.constant 0.0 : f32
  %gx = tessera_tile.group_id 0 : index
  %ny = tessera_tile.group_count 1 : index
  %t = tessera_tile.tile_id : index
  %n = tessera_tile.lane_count 0 : index
  %s1 = tessera_tile.shared_alloc : memref<16xf32, 3>
  %s2 = tessera_tile.shared_alloc swizzle = 128 : memref<256xf32, 3>
  tessera_tile.cp_async %g[%gx], %s2[%ny] elements = 4 : memref<1024xf32>, memref<256xf32, 3>
  tessera_tile.cp_async_commit
  tessera_tile.cp_async_wait 0
  %d = tessera_tile.mma %fa, %fb, %fc : vector<4x2xf16>, vector<2x4xf16>, vector<4x4xf32>
  %v = tessera_tile.load %g[%t] : memref<1024xf32>, vector<8xf32>
  %dt = tessera_tile.dot %v, %v, %z : vector<8xf32>, f32
  %a1 = tessera_tile.atomic_rmw add %dt, %o[%n] scope = device : f32, memref<16xf32>
  %a2 = tessera_tile.atomic_rmw max %a1, %o[%n] scope = mesh : f32, memref<16xf32>
  %a3 = tessera_tile.atomic_rmw add %a2, %o[%n] scope = group : f32, memref<16xf32>
  %e = tessera_tile.math exp(%a3) : f32
  %f = tessera_tile.math fma(%e, %e, %a3) : f32
  %m = tessera_tile.math max(%f, %e) : f32
  memref.store %m, %s1[%n] : memref<16xf32, 3>
  %w = memref.load %s1[%n] : memref<16xf32, 3>
  memref.store %w, %o[%n] : memref<16xf32>
  return
}

// -----

// A kernel whose lanes are not loops yet.
// expected-error @+1 {{run --tessera-tile-work-item-loops first}}
func.func @lanes() attributes {tessera_tile.group_size = array<i64: 4>} {
  tessera_tile.barrier
  return
}

// -----

// expected-error @+1 {{cpu kernel argument 0 has type 'vector<4xf32>': expected a statically shaped global memref, a 1-D memref of any length (memref<?xT>) or a scalar}}
func.func @vector_arg(%v: vector<4xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

func.func @helper() -> index {
  // expected-error @+1 {{is outside a Tile IR kernel}}
  %g = tessera_tile.group_id 0 : index
  return %g : index
}

// -----

// A 1-D buffer of any length: the kernel takes its base address (a static
// stand-in extent for the bare-pointer convention); the launch's buffer
// decides the length.
// CHECK-LABEL: func.func @any_length
// CHECK-SAME: (%{{.*}}: memref<1099511627776xf32>, %{{.*}}: i64
func.func @any_length(%x: memref<?xf32>, %n: i64) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %x[%c0] : memref<?xf32>
  return
}

// -----

// Only 1-D buffers may have any length.
// expected-error @+1 {{cpu kernel argument 0 has type 'memref<?x4xf32>': expected a statically shaped global memref, a 1-D memref of any length (memref<?xT>) or a scalar}}
func.func @two_dims(%x: memref<?x4xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

// An op the cpu has no lowering for: named, once (the conversion driver's
// generic "failed to legalize" line is not added).
func.func @mma_units() attributes {tessera_tile.group_size = array<i64: 1>} {
  %i = arith.constant 0 : index
  %c = arith.constant dense<0.0> : vector<4xf32>
  %s = tessera_tile.shared_alloc : memref<2048xi16, 3>
  // expected-error @+1 {{'tessera_tile.subgroup_mma' op has no cpu lowering}}
  %r = tessera_tile.subgroup_mma %s[%i], %s[%i], %c {m = 16 : i64, n = 8 : i64, lda = 16 : i64, ldb = 8 : i64, operand_type = bf16} : memref<2048xi16, 3>, memref<2048xi16, 3>, vector<4xf32>
  return
}

// -----

// More shared memory than the cpu plugin gives a group once each
// allocation starts 64-byte aligned (65532 + 1 bytes pass the verifier's
// sum): the pattern's own error, once.
func.func @too_much_shared(%o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %a = tessera_tile.shared_alloc : memref<16383xf32, 3>
  // expected-error @+1 {{needs shared memory up to byte 65537, more than the cpu plugin's 65536 bytes per group}}
  %b = tessera_tile.shared_alloc : memref<1xi8, 3>
  return
}
