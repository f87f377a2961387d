// RUN: tessera-opt %s -split-input-file --tessera-schedule-to-tile -verify-diagnostics | FileCheck %s

// double_buffer: two shared buffers; the prologue issues tile 0 into the
// first, each iteration issues tile k+1 into the other one (cp_async per
// lane, 16 bytes each), commits, waits until one group is pending, and
// computes on the current buffer between two barriers.

// CHECK-LABEL: func.func @double_buffer
// CHECK:       %[[B0:.*]] = tessera_tile.shared_alloc : memref<256xf32, 3>
// CHECK:       %[[B1:.*]] = tessera_tile.shared_alloc : memref<256xf32, 3>
// CHECK:       scf.if
// CHECK:         arith.select %{{.*}}, %[[B1]], %[[B0]]
// CHECK:         tessera_tile.lane_id 0
// CHECK:         scf.for
// CHECK:           tessera_tile.cp_async %arg0[%{{.*}}], %{{.*}}[%{{.*}}] elements = 4
// CHECK:       tessera_tile.cp_async_commit
// CHECK:       scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         %[[NEXT:.*]] = arith.addi %[[K]]
// CHECK:         arith.cmpi slt, %[[NEXT]]
// CHECK:         scf.if
// CHECK:           arith.muli %[[NEXT]], %{{.*}}
// CHECK:           tessera_tile.cp_async
// CHECK:         tessera_tile.cp_async_commit
// CHECK-NEXT:    tessera_tile.cp_async_wait 1
// CHECK-NEXT:    tessera_tile.barrier
// CHECK:         %[[CUR:.*]] = arith.select %{{.*}}, %[[B1]], %[[B0]]
// CHECK:         tessera_tile.load %[[CUR]]
// CHECK:         tessera_tile.barrier
// CHECK-NEXT:  }
// CHECK-NEXT:  tessera_tile.cp_async_wait 0
// CHECK-NOT:   tessera_schedule
func.func @double_buffer(%x: memref<4096xf32>, %y: memref<4096xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %l = tessera_tile.lane_id 0 : index
  %off = arith.muli %l, %c4 : index
  tessera_schedule.pipeline %k = %c0 to %c16 step %c1 stages = 2 {
    %t = tessera_schedule.prefetch %x[%k] scope = "shared" double_buffer : memref<4096xf32> -> memref<256xf32, 3>
    %v = tessera_tile.load %t[%off] : memref<256xf32, 3>, vector<4xf32>
    %b = arith.muli %k, %c256 : index
    %i = arith.addi %b, %off : index
    tessera_tile.store %v, %y[%i] : vector<4xf32>, memref<4096xf32>
  }
  return
}

// -----

// Three stages: three buffers, two tiles in flight (cp_async_wait 2).
// CHECK-LABEL: func.func @three_stages
// CHECK-COUNT-3: tessera_tile.shared_alloc : memref<16x16xf32, 3>
// CHECK:       tessera_tile.cp_async_commit
// CHECK:       tessera_tile.cp_async_commit
// CHECK:       scf.for
// CHECK:         tessera_tile.cp_async_wait 2
// CHECK:         tessera_tile.barrier
func.func @three_stages(%x: memref<64x64xf32>, %out: memref<16x16xf32>)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tessera_schedule.pipeline %k = %c0 to %c4 step %c1 stages = 3 {
    %t = tessera_schedule.prefetch %x[%c1, %k] scope = "shared" double_buffer : memref<64x64xf32> -> memref<16x16xf32, 3>
    tessera_schedule.copy %t, %out : memref<16x16xf32, 3>, memref<16x16xf32>
  }
  return
}

// -----

// Without double_buffer: one buffer, the copy of tile k completes
// (cp_async_wait 0) before the body; copies and barriers become Tile IR.
// CHECK-LABEL: func.func @single
// CHECK:       tessera_tile.shared_alloc : memref<64xf32, 3>
// CHECK-NOT:   tessera_tile.shared_alloc
// CHECK:       scf.for
// CHECK:         tessera_tile.cp_async
// CHECK:         tessera_tile.cp_async_wait 0
// CHECK:         tessera_tile.barrier
// CHECK:         memref.load
// CHECK:         memref.store
// CHECK:         tessera_tile.barrier
// CHECK:         tessera_tile.barrier
func.func @single(%a: memref<512xf32>, %out: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 1 {
    %t = tessera_schedule.prefetch %a[%k] scope = "shared" : memref<512xf32> -> memref<64xf32, 3>
    tessera_schedule.copy %t, %out : memref<64xf32, 3>, memref<64xf32>
    tessera_schedule.barrier
  }
  return
}

// -----

func.func @bad_index(%a: memref<512xf32>, %m: memref<8xindex>) attributes {tessera_tile.group_size = array<i64: 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
    %i = memref.load %m[%k] : memref<8xindex>
    // expected-error @+1 {{tile indices must be pure functions of the induction variable}}
    %t = tessera_schedule.prefetch %a[%i] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
  }
  return
}

// -----

// A lane-private prefetch is well-formed Schedule IR that no backend lowers
// yet: a diagnostic, not a silent shared-memory copy.
func.func @local_scope(%a: memref<512xf32>) attributes {tessera_tile.group_size = array<i64: 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
    // expected-error @+1 {{scope 'local' is not lowered yet; use scope = "shared"}}
    %t = tessera_schedule.prefetch %a[%k] scope = "local" double_buffer : memref<512xf32> -> memref<64xf32>
  }
  return
}
