// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @mma(%a: vector<16x8xf16>, %b: vector<16x16xf16>, %c: vector<16x16xf32>) {
  // expected-error @+1 {{fragment shapes are incompatible: a is 16x8, b is 16x16 (K differs)}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<16x16xf16>, vector<16x16xf32>
  return
}

// -----

func.func @mma_acc(%a: vector<16x8xf16>, %b: vector<8x16xf16>, %c: vector<16x8xf32>) {
  // expected-error @+1 {{accumulator must be 16x16, got 16x8}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<8x16xf16>, vector<16x8xf32>
  return
}

// -----

func.func @too_much_shared() attributes {tessera_tile.group_size = array<i64: 64>} {
  %a = tessera_tile.shared_alloc : memref<16384xf32, 3>
  // expected-error @+1 {{kernel needs 65540 bytes of shared memory, more than the limit of 65536 bytes}}
  %b = tessera_tile.shared_alloc : memref<1xf32, 3>
  return
}

// -----

func.func @limit_attr() attributes {tessera_tile.max_shared_memory = 1024 : i64} {
  // expected-error @+1 {{kernel needs 4096 bytes of shared memory, more than the limit of 1024 bytes}}
  %a = tessera_tile.shared_alloc : memref<1024xf32, 3>
  return
}

// -----

func.func @not_shared() {
  // expected-error @+1 {{result must be in shared memory}}
  %a = tessera_tile.shared_alloc : memref<16xf32>
  return
}

// -----

func.func @swizzle() {
  // expected-error @+1 {{swizzle must be 0, 32, 64 or 128 bytes, got 48}}
  %a = tessera_tile.shared_alloc swizzle = 48 : memref<16xf32, 3>
  return
}

// -----

func.func @cp_bytes(%g: memref<64xf32>, %s: memref<64xf32, 3>, %i: index) {
  // expected-error @+1 {{copies 4, 8 or 16 bytes per lane, got 12}}
  tessera_tile.cp_async %g[%i], %s[%i] elements = 3 : memref<64xf32>, memref<64xf32, 3>
  return
}

// -----

func.func @dim() {
  // expected-error @+1 {{dim must be 0, 1 or 2, got 3}}
  %l = tessera_tile.lane_id 3 : index
  return
}

// -----

// expected-error @+1 {{group of 2048 lanes exceeds the limit of 1024}}
func.func @group() attributes {tessera_tile.group_size = array<i64: 2048>} {
  return
}

// -----

func.func @math(%a: f32) {
  // expected-error @+1 {{fma takes 3 operand(s), got 2}}
  %r = tessera_tile.math fma(%a, %a) : f32
  return
}
