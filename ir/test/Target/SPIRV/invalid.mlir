// RUN: tessera-opt %s -split-input-file --tessera-tile-to-gpu -verify-diagnostics

func.func @mma(%o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %a = arith.constant dense<1.0> : vector<4x2xf16>
  %b = arith.constant dense<2.0> : vector<2x4xf16>
  %c = arith.constant dense<0.0> : vector<4x4xf32>
  // expected-error @+1 {{has no SPIR-V lowering yet}}
  %d = tessera_tile.mma %a, %b, %c : vector<4x2xf16>, vector<2x4xf16>, vector<4x4xf32>
  return
}

// -----

func.func @fmax(%o: memref<16xf32>, %v: f32) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{float atomic max/min has no SPIR-V lowering yet}}
  %r = tessera_tile.atomic_rmw max %v, %o[%c0] scope = device : f32, memref<16xf32>
  return
}

// -----

// expected-error @+1 {{SPIR-V kernel argument 0 has type 'f64': expected a statically shaped global memref or a 32-bit scalar}}
func.func @f64(%x: f64) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

func.func @shuffle_down(%v: f32, %o: memref<4xf32>) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{shuffle up/down has no SPIR-V lowering yet}}
  %r = tessera_tile.shuffle down %v, %c1 : f32
  memref.store %r, %o[%c1] : memref<4xf32>
  return
}
