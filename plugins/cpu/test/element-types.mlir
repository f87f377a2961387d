// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu --canonicalize --cse | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu --canonicalize --cse | FileCheck %s --check-prefix=NOACC
// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu=hardware-f16=1 --canonicalize --cse | FileCheck %s --check-prefix=F16C
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel bf16_out --iterations 1 | FileCheck %s --check-prefix=EXEC
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel odd --iterations 1 | FileCheck %s --check-prefix=EXEC
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel int8 --iterations 1 | FileCheck %s --check-prefix=EXEC
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel batched --iterations 1 | FileCheck %s --check-prefix=EXEC
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel fp8 --iterations 1 | FileCheck %s --check-prefix=EXEC
// RUN: env TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=%t.cache tessera-run %s --kernel f16_out --iterations 1 | FileCheck %s --check-prefix=EXEC
// EXEC: verify: {{.*}}: PASS

// bf16 x bf16 -> bf16 with K = 300 > KC = 256: the operands are widened to
// f32 while packing, by vectors (A through register transposes and masked
// stores of its 6-row slivers; the K remainder element by element), the
// micro-kernel is the f32 one, and the partial sums of the two K slices
// stay in an f32 scratch of the group's rows x the panel's columns; C
// (bf16) is written once, after the last slice, rounded to nearest even in
// integer code.  Two groups: each packs B itself (no scratch parameter).
// CHECK-LABEL: func.func @bf16_out(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<96x300xbf16>, %[[B:[a-z0-9]+]]: memref<300x40xbf16>, %[[C:[a-z0-9]+]]: memref<96x40xbf16>, %{{.*}}: index
// CHECK-SAME: dtypes = [bf16, bf16, bf16], grid = array<i64: 2, 1, 1>, group_size = array<i64: 1, 1, 1>, inputs = 2 : i64, outputs = 1 : i64, scratch = 0 : i64
// CHECK: %[[PA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<26112xf32>
// CHECK: %[[PB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12288xf32>
// CHECK: %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<48x48xf32>
// CHECK: vector.load %[[A]][{{.*}}] : memref<96x300xbf16>, vector<8xbf16>
// CHECK-NEXT: arith.bitcast %{{.*}} : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT: arith.extui %{{.*}} : vector<8xi16> to vector<8xi32>
// CHECK-NEXT: arith.shli
// CHECK-NEXT: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.maskedstore %[[PA]]
// CHECK: memref.load %[[A]]
// CHECK-NEXT: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: memref.store %{{.*}}, %[[PA]]
// CHECK: vector.load %[[B]][{{.*}}] : memref<300x40xbf16>, vector<8xbf16>
// CHECK-NEXT: arith.bitcast %{{.*}} : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT: arith.extui %{{.*}} : vector<8xi16> to vector<8xi32>
// CHECK-NEXT: arith.shli
// CHECK-NEXT: %[[WIDE:.*]] = arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.store %[[WIDE]], %[[PB]]
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK: scf.if
// CHECK: vector.load %[[ACC]]
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: scf.if
// CHECK: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi16>
// CHECK: vector.store %{{.*}}, %[[C]][{{.*}}] : memref<96x40xbf16>, vector<8xbf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: vector.store %{{.*}}, %[[ACC]]
// C is never read: no accumulation through the bf16 output.
// NOACC-LABEL: func.func @bf16_out(
// NOACC-SAME: %[[C:[a-z0-9]+]]: memref<96x40xbf16>
// NOACC-NOT: load %[[C]][
// NOACC: return
func.func @bf16_out(%a: tensor<96x300xbf16>, %b: tensor<300x40xbf16>) -> tensor<96x40xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<96x300xbf16>, tensor<300x40xbf16> -> tensor<96x40xbf16>
  return %c : tensor<96x40xbf16>
}

// N = 17: one full 16-column sliver, then a 1-column remainder sliver: B is
// packed with a masked load (zeros past column 17) and the 6 x 1-vector
// remainder tile is stored with masked stores.
// CHECK-LABEL: func.func @odd(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<70x17xf32>, %[[C:[a-z0-9]+]]: memref<40x17xf32>
// CHECK: %[[M1:.*]] = vector.constant_mask [1] : vector<8xi1>
// CHECK-NEXT: vector.maskedload %[[B]][%{{.*}}, %c16], %[[M1]], %{{.*}} : memref<70x17xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: vector.maskedstore %[[C]][%{{.*}}, %c16], %{{.*}} : memref<40x17xf32>, vector<8xi1>, vector<8xf32>
func.func @odd(%a: tensor<40x70xf32>, %b: tensor<70x17xf32>) -> tensor<40x17xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<40x70xf32>, tensor<70x17xf32> -> tensor<40x17xf32>
  return %c : tensor<40x17xf32>
}

// i8 x i8 -> i32: sign-extended into i32 packing buffers, the same register
// tile with vector<8xi32> multiply-add, no float op.
// CHECK-LABEL: func.func @int8(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<64x32xi8>, %{{.*}}: memref<40x32xi32>
// CHECK-SAME: dtypes = [i8, i8, i32]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xi32>
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: vector.load %[[B]]{{.*}} : memref<64x32xi8>, vector<8xi8>
// CHECK-NEXT: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT: arith.addi %[[P]], %{{.*}} : vector<8xi32>
// CHECK-NOT: vector.fma
// CHECK: return
func.func @int8(%a: tensor<40x64xi8>, %b: tensor<64x32xi8>) -> tensor<40x32xi32> {
  %c = tessera_graph.matmul %a, %b : tensor<40x64xi8>, tensor<64x32xi8> -> tensor<40x32xi32>
  return %c : tensor<40x32xi32>
}

// Batched: a loop over this group's matrices (dim 0 split into 2 groups of
// 2) around the BLIS nest.
// CHECK-LABEL: func.func @batched(
// CHECK-SAME: grid = array<i64: 2, 1, 1>
// CHECK: %[[N:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %[[BATCH:.*]] = %c0 to %[[N]] step %c1 {
// CHECK: vector.fma
func.func @batched(%a: tensor<4x40x64xf32>, %b: tensor<4x64x32xf32>) -> tensor<4x40x32xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<4x40x64xf32>, tensor<4x64x32xf32> -> tensor<4x40x32xf32>
  return %c : tensor<4x40x32xf32>
}

// fp8 is an i8 memref (MLIR 16 cannot lower memref<..xf8E4M3FN> to LLVM);
// the kernel attribute keeps the element type.  Widening: NaN (0x7F / 0xFF)
// to f32 NaN, subnormals through sitofp * 2^-9.  Rounding back: saturation
// at 448 (code 0x7E = 126).
// CHECK-LABEL: func.func @fp8(
// CHECK-SAME: memref<40x64xi8>, %{{.*}}: memref<64x32xi8>, %{{.*}}: memref<40x32xi8>
// CHECK-SAME: dtypes = [f8E4M3FN, f8E4M3FN, f8E4M3FN]
// CHECK-DAG: %[[SAT:.*]] = arith.constant dense<126> : vector<8xi32>
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<2143289344> : vector<8xi32>
// CHECK-DAG: %[[SUB:.*]] = arith.constant dense<0.001953125> : vector<8xf32>
// CHECK: %[[M:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: arith.mulf %[[M]], %[[SUB]] : vector<8xf32>
// CHECK: arith.ori %{{.*}}, %[[NAN]] : vector<8xi32>
// CHECK: arith.minui %{{.*}}, %[[SAT]] : vector<8xi32>
func.func @fp8(%a: tensor<40x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>) -> tensor<40x32xf8E4M3FN> {
  %c = tessera_graph.matmul %a, %b : tensor<40x64xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<40x32xf32>
  %h = tessera_graph.cast %c : tensor<40x32xf32> -> tensor<40x32xf8E4M3FN>
  return %h : tensor<40x32xf8E4M3FN>
}

// f16: integer code by default (no libcalls without F16C), extf / truncf
// with hardware-f16 (vcvtph2ps / vcvtps2ph on an F16C target).
// CHECK-LABEL: func.func @f16_out(
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
// F16C-LABEL: func.func @f16_out(
// F16C: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// F16C: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
func.func @f16_out(%a: tensor<40x64xf16>, %b: tensor<64x32xf16>) -> tensor<40x32xf16> {
  %c = tessera_graph.matmul %a, %b : tensor<40x64xf16>, tensor<64x32xf16> -> tensor<40x32xf16>
  return %c : tensor<40x32xf16>
}
