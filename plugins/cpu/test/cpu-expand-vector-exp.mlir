// RUN: tessera-opt %s --tessera-cpu-expand-vector-exp | FileCheck %s

// A vector exp becomes Cephes' expf in vector ops: clamp, n = floor(x log2 e
// + 1/2), r = x - n ln2 (two parts), the polynomial, 2^n from the exponent
// bits as two factors (2^(n/2) 2^(n - n/2): 2^128 and 2^-127 are reached),
// 0 below the clamp, inf above ln(FLT_MAX), NaN kept.  A scalar exp gets the same polynomial
// on a one-lane vector (one function everywhere: no libm expf).
// CHECK-LABEL: func.func @vexp
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>, %[[S:.*]]: f32)
// CHECK: arith.minf %[[X]]
// CHECK: arith.maxf
// CHECK: %[[N:.*]] = math.floor %{{.*}} : vector<8xf32>
// CHECK: math.fma %[[N]]
// CHECK: math.fma %[[N]]
// CHECK: %[[NI:.*]] = arith.fptosi %[[N]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[N1:.*]] = arith.shrsi %[[NI]]
// CHECK: %[[N2:.*]] = arith.subi %[[NI]], %[[N1]]
// CHECK: %[[E1:.*]] = arith.addi %[[N1]]
// CHECK: %[[SH1:.*]] = arith.shli %[[E1]]
// CHECK: %[[P1:.*]] = arith.bitcast %[[SH1]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[E2:.*]] = arith.addi %[[N2]]
// CHECK: %[[SH2:.*]] = arith.shli %[[E2]]
// CHECK: %[[P2:.*]] = arith.bitcast %[[SH2]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[Y1:.*]] = arith.mulf %{{.*}}, %[[P1]]
// CHECK: arith.mulf %[[Y1]], %[[P2]]
// CHECK: arith.cmpf ole, %[[X]]
// CHECK: arith.cmpf ogt, %[[X]]
// CHECK: arith.cmpf uno, %[[X]], %[[X]]
// CHECK: %[[R:.*]] = arith.select
// CHECK-NOT: math.exp
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<1xf32>
// CHECK: math.floor %{{.*}} : vector<1xf32>
// CHECK: arith.cmpf uno, {{.*}} : vector<1xf32>
// CHECK-NEXT: %[[SR:.*]] = arith.select {{.*}} : vector<1xi1>, vector<1xf32>
// CHECK: %[[SE:.*]] = vector.extract %[[SR]][0] : vector<1xf32>
// CHECK: return %[[R]], %[[SE]]
func.func @vexp(%x: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32) {
  %e = math.exp %x : vector<8xf32>
  %se = math.exp %s : f32
  return %e, %se : vector<8xf32>, f32
}
