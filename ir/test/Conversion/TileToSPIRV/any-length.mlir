// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN

// A 1-D buffer of any length (memref<?xT>) is a runtime array: one module
// serves every length, the launch's buffer decides it.
// CHECK: spirv.module
// CHECK: !spirv.rtarray<f32
// BIN: OpTypeRuntimeArray %float
func.func @scale_n(%x: memref<?xf32>, %n: i32) attributes {tessera_tile.group_size = array<i64: 64>} {
  %t = tessera_tile.tile_id : index
  %l = tessera_tile.lane_id 0 : index
  %c64 = arith.constant 64 : index
  %b = arith.muli %t, %c64 : index
  %i = arith.addi %b, %l : index
  %i32 = arith.index_cast %i : index to i32
  %in = arith.cmpi ult, %i32, %n : i32
  scf.if %in {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<?xf32>
  }
  return
}
