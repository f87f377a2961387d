// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: tessera-opt %s --tessera-tile-to-spirv="client-api=opencl" --tessera-serialize-spirv=output=%t.cl.spv | FileCheck %s --check-prefix=CL
// RUN: spirv-val --target-env opencl2.2 %t.cl.spv

// scf.while with a carried index used in the body (and an f32): both
// regions' block arguments become i32 (Shader) or i64 (Kernel).  MLIR 16's
// pattern left the body's index argument unconverted: "failed to legalize
// unresolved materialization from 'index' to 'i32'".  The header computes
// the condition, stores what leaves the loop and branches to the body or
// the merge block; the body branches back with the yielded values.
// CHECK: spirv.func @walk
// CHECK-DAG: %[[I:.*]] = spirv.Variable : !spirv.ptr<i32, Function>
// CHECK-DAG: %[[S:.*]] = spirv.Variable : !spirv.ptr<f32, Function>
// CHECK: spirv.mlir.loop {
// CHECK:   spirv.Branch ^[[HEAD:bb[0-9]+]](%{{.*}}, %{{.*}} : i32, f32)
// CHECK: ^[[HEAD]](%[[IV:.*]]: i32, %[[ACC:.*]]: f32):
// CHECK:   %[[GO:.*]] = spirv.SLessThan %[[IV]], %{{.*}} : i32
// CHECK:   spirv.Store "Function" %[[I]], %[[IV]] : i32
// CHECK:   spirv.Store "Function" %[[S]], %[[ACC]] : f32
// CHECK:   spirv.BranchConditional %[[GO]], ^[[BODY:bb[0-9]+]](%[[IV]], %[[ACC]] : i32, f32), ^[[MERGE:bb[0-9]+]]
// CHECK: ^[[BODY]](%[[J:.*]]: i32, %{{.*}}: f32):
// CHECK:   %[[N:.*]] = spirv.IAdd %[[J]], %{{.*}} : i32
// CHECK:   spirv.Branch ^[[HEAD]](%[[N]], %{{.*}} : i32, f32)
// CHECK: ^[[MERGE]]:
// CHECK:   spirv.mlir.merge
// CHECK: spirv.Load "Function" %[[I]] : i32
// CHECK: spirv.Load "Function" %[[S]] : f32
// CL: spirv.func @walk
// CL: spirv.mlir.loop {
// CL: spirv.BranchConditional %{{[0-9]+}}, ^[[BODY:bb[0-9]+]]
// CL: ^[[BODY]](%[[J:.*]]: i64, %{{.*}}: f32):
// CL:   spirv.IAdd %[[J]], %{{.*}} : i64
func.func @walk(%x: memref<64xf32>, %y: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 4>, tessera_tile.grid = array<i64: 1>} {
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %l = tessera_tile.lane_id 0 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.while (%i = %l, %acc = %zero) : (index, f32) -> (index, f32) {
    %go = arith.cmpi slt, %i, %c64 : index
    scf.condition(%go) %i, %acc : index, f32
  } do {
  ^bb0(%j: index, %a: f32):
    %v = memref.load %x[%j] : memref<64xf32>
    %s = arith.addf %a, %v : f32
    %n = arith.addi %j, %c4 : index
    scf.yield %n, %s : index, f32
  }
  %k = arith.remui %r#0, %c64 : index
  memref.store %r#1, %y[%k] : memref<64xf32>
  return
}
