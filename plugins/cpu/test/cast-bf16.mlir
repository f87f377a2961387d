// RUN: tessera-opt %s --tessera-schedule-to-cpu | FileCheck %s
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --tolerance 0 --iterations 1 | FileCheck %s --check-prefix=EXEC

// Regression: an f32 -> bf16 cast crashed LLVM 16's x86 backend ("Cannot
// select: v16bf16 = X86ISD::VFPROUND"): the loop of arith.truncf was
// vectorized into an fptrunc to <16 x bfloat>.  The cpu backend now rounds
// to nearest even in integer code and stores the bits, so no float
// truncation to bf16 reaches LLVM; the result equals the reference's
// rounding exactly.
// CHECK-LABEL: func.func @c
// CHECK-SAME: memref<64x64xf32>, %{{.*}}: memref<64x64xbf16>
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.constant 32767 : i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: memref.store %{{.*}} : memref<64x64xbf16>
// EXEC: verify: max abs error 0 {{.*}}: PASS
func.func @c(%a: tensor<64x64xf32>) -> tensor<64x64xbf16> {
  %c = tessera_graph.cast %a : tensor<64x64xf32> -> tensor<64x64xbf16>
  return %c : tensor<64x64xbf16>
}
