// RUN: tessera-opt %s --tessera-schedule-to-cpu | FileCheck %s
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --tolerance 0 --iterations 1 | FileCheck %s --check-prefix=EXEC

// compare and select on the cpu: i1 tensors are i8 memrefs (one byte, 0 or
// 1; the kernel's dtypes keep i1 for the host); a compare is arith.cmpf on
// vector<8xf32> chunks stored as select(c, 1, 0) bytes, a loaded i1 byte
// is `!= 0`, and select is arith.select on vectors, then the scalar
// remainder (20 = 2 x 8 + 4).
// CHECK-LABEL: func.func @cs
// CHECK-SAME: %{{.*}}: memref<16x20xf32>, %{{.*}}: memref<20xf32>, %{{.*}}: memref<16x20xi8>, %{{.*}}: memref<16x20xf32>, %{{.*}}: memref<16x20xi8>
// CHECK-SAME: dtypes = [f32, f32, i1, f32, i1]
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi8>
// CHECK: vector.store %{{.*}} : memref<16x20xi8>, vector<8xi8>
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i8
// CHECK: vector.load %{{.*}} : memref<16x20xi8>, vector<8xi8>
// CHECK: arith.cmpi ne, %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// EXEC: verify: f32 results: max abs error 0 {{.*}}: PASS
// EXEC: verify: i1 results: max abs error 0 {{.*}}: PASS
func.func @cs(%x: tensor<16x20xf32>, %y: tensor<20xf32>, %m: tensor<16x20xi1>) -> (tensor<16x20xf32>, tensor<16x20xi1>) {
  %c = tessera_graph.compare lt %x, %y : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xi1>
  %s = tessera_graph.select %m, %x, %y : tensor<16x20xi1>, tensor<16x20xf32>, tensor<20xf32>
  return %s, %c : tensor<16x20xf32>, tensor<16x20xi1>
}
