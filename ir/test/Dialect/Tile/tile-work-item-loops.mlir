// RUN: tessera-opt %s -split-input-file --tessera-tile-work-item-loops -verify-diagnostics | FileCheck %s

// The body is cut at the barrier into two lane loops over the 16 lanes of an
// 8x2 group; lane ids come from the loop index; %v and %i live across the
// barrier in per-lane arrays (i8 buffers viewed as memref<16 x T>); uniform ops stay at group level; the shuffle
// of a one-lane subgroup is the value itself.

// CHECK-LABEL: func.func @cross
// CHECK-DAG:   %[[V:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// CHECK-DAG:   %[[I:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<128xi8> to memref<16xindex>
// CHECK:       tessera_tile.group_id 0
// CHECK:       %[[S:.*]] = tessera_tile.shared_alloc : memref<16xf32, 3>
// CHECK:       scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         %[[LX:.*]] = arith.remui %[[L]], %{{.*}}
// CHECK:         %[[LY:.*]] = arith.divui %[[L]], %{{.*}}
// CHECK:         %[[SUM:.*]] = arith.addi %[[LX]], %[[LY]]
// CHECK:         memref.store %[[SUM]], %[[I]][%[[L]]]
// CHECK:         %[[X:.*]] = memref.load %arg0[%[[SUM]]]
// CHECK:         memref.store %[[X]], %[[V]][%[[L]]]
// CHECK-NOT:     tessera_tile.shuffle
// CHECK:         memref.store %[[X]], %[[S]][%[[LX]]]
// CHECK:       } {tessera.lane_loop}
// CHECK-NOT:   tessera_tile.barrier
// CHECK:       scf.for %[[L2:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         memref.load %[[S]]
// CHECK:         memref.load %[[V]][%[[L2]]]
// CHECK:         %[[I2:.*]] = memref.load %[[I]][%[[L2]]]
// CHECK:         memref.store %{{.*}}, %arg1[%[[I2]]]
// CHECK:       } {tessera.lane_loop}
func.func @cross(%x: memref<64xf32>, %y: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 8, 2>} {
  %c1 = arith.constant 1 : index
  %g = tessera_tile.group_id 0 : index
  %lx = tessera_tile.lane_id 0 : index
  %ly = tessera_tile.lane_id 1 : index
  %s = tessera_tile.shared_alloc : memref<16xf32, 3>
  %i = arith.addi %lx, %ly : index
  %v = memref.load %x[%i] : memref<64xf32>
  %w = tessera_tile.shuffle xor %v, %c1 : f32
  memref.store %w, %s[%lx] : memref<16xf32, 3>
  tessera_tile.barrier
  %u = memref.load %s[%ly] : memref<16xf32, 3>
  %r = arith.addf %u, %v : f32
  memref.store %r, %y[%i] : memref<64xf32>
  return
}

// -----

// A barrier inside a uniform loop: the loop stays at group level and its
// body is cut; the value it carries becomes a per-lane array.

// CHECK-LABEL: func.func @loop
// CHECK:       memref.alloca() {alignment = 64 : i64} : memref<16xi8>
// CHECK:       %[[ACC:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<16xi8> to memref<4xf32>
// CHECK:       scf.for
// CHECK:         memref.store %{{.*}}, %[[ACC]]
// CHECK:       } {tessera.lane_loop}
// CHECK:       scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:         scf.for
// CHECK:           memref.load %[[ACC]]
// CHECK:         } {tessera.lane_loop}
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[ACC]]
// CHECK:         } {tessera.lane_loop}
// CHECK:       }
// CHECK:       scf.for
// CHECK:         memref.load %[[ACC]]
// CHECK:       } {tessera.lane_loop}
func.func @loop(%x: memref<16xf32>, %y: memref<4xf32>)
    attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  %l = tessera_tile.lane_id 0 : index
  %s = tessera_tile.shared_alloc : memref<4xf32, 3>
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (f32) {
    %o = arith.muli %k, %c4 : index
    %i = arith.addi %o, %l : index
    %v = memref.load %x[%i] : memref<16xf32>
    memref.store %v, %s[%l] : memref<4xf32, 3>
    tessera_tile.barrier
    %n = arith.subi %c4, %c1 : index
    %m = arith.subi %n, %l : index
    %w = memref.load %s[%m] : memref<4xf32, 3>
    %a = arith.addf %acc, %w : f32
    scf.yield %a : f32
  }
  memref.store %r, %y[%l] : memref<4xf32>
  return
}

// -----

func.func @while_barrier(%n: index) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %c = arith.cmpi ult, %i, %n : index
    scf.condition(%c) %i : index
  } do {
  ^bb0(%i: index):
    // expected-error @+1 {{inside 'scf.while' cannot be run as work-item loops}}
    tessera_tile.barrier
    scf.yield %i : index
  }
  return
}

// -----

func.func @lane_bound(%x: memref<4xf32>) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = tessera_tile.lane_id 0 : index
  // expected-error @+1 {{uses the lane id in group-level (uniform) code}}
  scf.for %k = %c0 to %l step %c1 {
    tessera_tile.barrier
  }
  return
}
