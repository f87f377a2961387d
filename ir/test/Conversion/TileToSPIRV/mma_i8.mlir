// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// tessera_tile.mma on i8 fragments: widened to the i32 accumulator, one
// multiply-add per k (see mma.mlir for the lane mapping).  Single-element
// vector.insert / extract positions ([i, j]) move scalars.
// CHECK-LABEL: spirv.module @__spv__mma_i8
// CHECK-COUNT-4: spirv.SConvert %{{.*}} : i8 to i32
// 1x2 * 2x1: 2 multiply-adds into the 1x1 accumulator.
// CHECK: spirv.IMul %{{.*}}, %{{.*}} : i32
// CHECK: spirv.IAdd %{{.*}}, %{{.*}} : i32
// CHECK: spirv.IMul %{{.*}}, %{{.*}} : i32
// CHECK: spirv.IAdd %{{.*}}, %{{.*}} : i32
func.func @mma_i8(%a: memref<2xi8>, %b: memref<2xi8>, %c: memref<1xi32>)
    attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %av = tessera_tile.load %a[%c0] : memref<2xi8>, vector<2xi8>
  %bv = tessera_tile.load %b[%c0] : memref<2xi8>, vector<2xi8>
  %z8 = arith.constant dense<0> : vector<1x2xi8>
  %z8t = arith.constant dense<0> : vector<2x1xi8>
  %fa = vector.insert %av, %z8 [0] : vector<2xi8> into vector<1x2xi8>
  %b0 = vector.extract %bv[0] : vector<2xi8>
  %b1 = vector.extract %bv[1] : vector<2xi8>
  %fb0 = vector.insert %b0, %z8t [0, 0] : i8 into vector<2x1xi8>
  %fb = vector.insert %b1, %fb0 [1, 0] : i8 into vector<2x1xi8>
  %acc = arith.constant dense<5> : vector<1x1xi32>
  %d = tessera_tile.mma %fa, %fb, %acc : vector<1x2xi8>, vector<2x1xi8>, vector<1x1xi32>
  %r = vector.extract %d[0, 0] : vector<1x1xi32>
  memref.store %r, %c[%c0] : memref<1xi32>
  return
}
