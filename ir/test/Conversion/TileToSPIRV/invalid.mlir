// RUN: tessera-opt %s -split-input-file --tessera-tile-to-gpu -verify-diagnostics

// What the SPIR-V lowering still cannot express, each with a diagnostic
// (never a crash or a module spirv-val rejects).

// bf16 has no SPIR-V type in MLIR 16's Vulkan target (no
// SPV_KHR_bfloat16).
// expected-error @+1 {{SPIR-V kernel argument 0 has type 'bf16': expected a statically shaped global memref, a 1-D memref of any length (memref<?xT>) or an 8/16/32/64-bit integer or f16/f32/f64 scalar}}
func.func @bf16(%x: bf16) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

// Float atomics are 32-bit (16/64-bit float atomics need extensions MLIR
// 16 cannot emit).
func.func @f16_atomic(%o: memref<16xf16>, %v: f16) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{SPIR-V atomics take 32-bit values (or 64-bit integers), not 'f16'}}
  %r = tessera_tile.atomic_rmw add %v, %o[%c0] scope = device : f16, memref<16xf16>
  return
}

// -----

// Mesh (system) scope: Vulkan's widest scope is a device.  Lowering it to
// Device scope would silently drop atomicity against the host and peers.
func.func @mesh_atomic(%o: memref<16xi32>, %v: i32) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{has scope 'mesh' (the host and peer devices), which the SPIR-V kernels cannot express: their widest atomic scope is one device (the vulkan and level_zero plugins report no atomic_scopes.mesh). Use scope = device and combine across devices with a collective, or read the result on the host after the kernel completes; or run the kernel on a backend with atomic_scopes.mesh (cpu, cuda)}}
  %r = tessera_tile.atomic_rmw add %v, %o[%c0] scope = mesh : i32, memref<16xi32>
  return
}

// -----

// A float atomic max/min retypes its buffer to integers; a buffer that is
// only reachable through a view cannot be retyped.
func.func @fmax_view(%o: memref<16xf32>, %v: f32) attributes {tessera_tile.group_size = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{float atomic max/min on a buffer that is neither a kernel argument nor a shared_alloc}}
  %s = memref.subview %o[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %r = tessera_tile.atomic_rmw max %v, %s[%c0] scope = device : f32, memref<8xf32, strided<[1]>>
  return
}

// -----

// Vectors are scalarized; a vector carried out of an scf.if cannot be.
func.func @vector_if(%o: memref<16xf32>, %n: i32) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  %p = arith.cmpi sgt, %n, %z : i32
  %a = arith.constant dense<1.0> : vector<2xf32>
  %r = scf.if %p -> (vector<2xf32>) {
    // expected-error @+1 {{yields a vector from an op other than scf.for}}
    scf.yield %a : vector<2xf32>
  } else {
    scf.yield %a : vector<2xf32>
  }
  tessera_tile.store %r, %o[%c0] : vector<2xf32>, memref<16xf32>
  return
}

// -----

// 3-D vectors are not Tile IR fragments.
func.func @rank3(%o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %a = arith.constant dense<1.0> : vector<2x2x2xf32>
  // expected-error @+1 {{only 1-D / 2-D vectors lower to SPIR-V}}
  %r = vector.extract %a[0] : vector<2x2x2xf32>
  %s = vector.extract %r[0, 0] : vector<2x2xf32>
  memref.store %s, %o[%c0] : memref<16xf32>
  return
}

// -----

// i1 is not a storable scalar (no bool push constants in Vulkan).
// expected-error @+1 {{SPIR-V kernel argument 0 has type 'i1'}}
func.func @bool_arg(%p: i1) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

// expected-error @+1 {{SPIR-V kernel argument 0 has type 'memref<16xbf16>': 'bf16' has no SPIR-V type for Vulkan}}
func.func @bf16_buffer(%x: memref<16xbf16>) attributes {tessera_tile.group_size = array<i64: 1>} {
  return
}

// -----

func.func @mma_bf16(%o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %a = arith.constant dense<1.0> : vector<4x2xbf16>
  %b = arith.constant dense<2.0> : vector<2x4xbf16>
  %c = arith.constant dense<0.0> : vector<4x4xf32>
  // expected-error @+1 {{has 'bf16' fragments, which have no SPIR-V type for Vulkan in MLIR 16}}
  %d = tessera_tile.mma %a, %b, %c : vector<4x2xbf16>, vector<2x4xbf16>, vector<4x4xf32>
  return
}

// -----

// A vector the lowering cannot take apart (made by an op it does not
// scalarize) stored by a Tile IR op: one error, at the store (not also the
// conversion driver's "failed to legalize").
func.func @opaque_vector(%o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %a = arith.constant dense<1.0> : vector<2x2xf32>
  %b = vector.shape_cast %a : vector<2x2xf32> to vector<4xf32>
  // expected-error @+1 {{has a vector operand the GPU lowering cannot scalarize ('vector<4xf32>')}}
  tessera_tile.store %b, %o[%c0] : vector<4xf32>, memref<16xf32>
  return
}

// -----

// A scalarized vector read by an op that cannot take it apart.
func.func @vector_to_opaque(%x: memref<16xf32>, %o: memref<16xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %v = tessera_tile.load %x[%c0] : memref<16xf32>, vector<4xf32>
  // expected-error @+1 {{takes a 'vector<4xf32>' that the GPU lowering cannot scalarize}}
  %b = vector.shape_cast %v : vector<4xf32> to vector<2x2xf32>
  %s = vector.extract %b[0, 0] : vector<2x2xf32>
  memref.store %s, %o[%c0] : memref<16xf32>
  return
}
