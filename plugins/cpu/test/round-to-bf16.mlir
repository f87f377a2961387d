// RUN: tessera-opt %s --tessera-tile-work-item-loops --tessera-tile-to-cpu | FileCheck %s

// tessera_tile.round_to_bf16 (how the GPU pipeline stores bf16; a Tile IR
// kernel compiled for the cpu takes it too) is the integer code of the
// SPIR-V and HIP targets: round to nearest even on the high half, a NaN
// kept quiet with its sign and top payload bits.
// CHECK-LABEL: func.func @store_bf16
// CHECK-NOT: tessera_tile.round_to_bf16
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.constant 2139095040 : i32
// CHECK: arith.cmpi ugt
// CHECK: arith.constant 32767 : i32
// CHECK: arith.select
// CHECK: arith.trunci %{{.*}} : i32 to i16
func.func @store_bf16(%x: memref<64xf32>, %y: memref<64xi16>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<64xf32>
  %b = tessera_tile.round_to_bf16 %v
  memref.store %b, %y[%l] : memref<64xi16>
  return
}
