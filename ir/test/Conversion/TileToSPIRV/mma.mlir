// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// tessera_tile.mma without cooperative matrices: each lane owns its whole
// fragments (as on the cpu path), so a MxK * KxN + MxN mma is M*N*K
// per-lane FMAs, k outermost (the order of the cpu's outer products).
// Fragments are scalarized row-major; vector.insert / extract of rows move
// scalars; an accumulator carried by scf.for becomes M*N scalar loop
// values.  f16 fragments widen to the f32 accumulator; i8 ones to i32.
// CHECK-LABEL: spirv.module @__spv__mma_f16
// CHECK: spirv.mlir.loop
// f16 fragments are loaded and widened to f32 (2x2 a, 2x2 b).
// CHECK-COUNT-8: spirv.FConvert %{{.*}} : f16 to f32
// 2x2x2: 8 FMAs per iteration.
// CHECK-COUNT-8: spirv.GL.Fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: spirv.mlir.merge
// The 2x2 result rows are stored after the loop.
// CHECK-COUNT-4: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : f32
func.func @mma_f16(%a: memref<2x2xf16>, %b: memref<2x2xf16>, %c: memref<2x2xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : vector<2x2xf32>
  %zh = arith.constant dense<0.0> : vector<2x2xf16>
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%cv = %zero) -> (vector<2x2xf32>) {
    %a0 = tessera_tile.load %a[%c0, %c0] : memref<2x2xf16>, vector<2xf16>
    %a1 = tessera_tile.load %a[%c1, %c0] : memref<2x2xf16>, vector<2xf16>
    %b0 = tessera_tile.load %b[%c0, %c0] : memref<2x2xf16>, vector<2xf16>
    %b1 = tessera_tile.load %b[%c1, %c0] : memref<2x2xf16>, vector<2xf16>
    %fa0 = vector.insert %a0, %zh [0] : vector<2xf16> into vector<2x2xf16>
    %fa = vector.insert %a1, %fa0 [1] : vector<2xf16> into vector<2x2xf16>
    %fb0 = vector.insert %b0, %zh [0] : vector<2xf16> into vector<2x2xf16>
    %fb = vector.insert %b1, %fb0 [1] : vector<2xf16> into vector<2x2xf16>
    %d = tessera_tile.mma %fa, %fb, %cv : vector<2x2xf16>, vector<2x2xf16>, vector<2x2xf32>
    scf.yield %d : vector<2x2xf32>
  }
  %r0 = vector.extract %acc[0] : vector<2x2xf32>
  %r1 = vector.extract %acc[1] : vector<2x2xf32>
  tessera_tile.store %r0, %c[%c0, %c0] : vector<2xf32>, memref<2x2xf32>
  tessera_tile.store %r1, %c[%c1, %c0] : vector<2xf32>, memref<2x2xf32>
  return
}
