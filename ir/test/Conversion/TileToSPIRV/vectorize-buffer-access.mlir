// RUN: tessera-opt %s --split-input-file --tessera-tile-to-spirv | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// The last case's binary (each case overwrites %t.spv): a vec4 runtime array.
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// tessera-spirv-vectorize-buffer-access: a buffer (storage or workgroup) of
// 32-bit scalars with at least one aligned quad (4 consecutive elements,
// the first at a multiple of 4, accessed together in one block with nothing
// that touches memory in between) becomes a buffer of vec4s: one load or
// store per such quad, one component for every other access.  Without such
// a quad, or with an access that is not a plain load or store, the buffer
// keeps its scalar type.

// lane * 2 is not known to be a multiple of 4: the quad may straddle two
// vec4s, so the buffer stays scalar.
// CHECK-LABEL: spirv.module @__spv__unaligned
// CHECK: !spirv.array<256 x f32, stride=4>
// CHECK-NOT: vector<4xf32>
func.func @unaligned(%x: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c2 = arith.constant 2 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c2 : index
  %v = tessera_tile.load %x[%i] : memref<256xf32>, vector<4xf32>
  %w = arith.addf %v, %v : vector<4xf32>
  tessera_tile.store %w, %x[%i] : vector<4xf32>, memref<256xf32>
  return
}


// -----

// Two elements of a quad only: a vec4 store would write the other two
// (another lane's), so the buffer stays scalar.
// CHECK-LABEL: spirv.module @__spv__partial
// CHECK: !spirv.array<256 x f32, stride=4>
// CHECK-NOT: vector<4xf32>
func.func @partial(%x: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c4 = arith.constant 4 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %v = tessera_tile.load %x[%i] : memref<256xf32>, vector<2xf32>
  %w = arith.addf %v, %v : vector<2xf32>
  tessera_tile.store %w, %x[%i] : vector<2xf32>, memref<256xf32>
  return
}


// -----

// A store to another buffer (which may be the same memory) between two
// halves of a quad: merging the loads would move one across it, so %x's
// loads stay single components (3-index access chains) while its two
// stores, adjacent, merge; %y's quad merges.
// CHECK-LABEL: spirv.module @__spv__ordered
// CHECK-DAG: spirv.GlobalVariable @[[X:.*]] bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @[[Y:.*]] bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK: spirv.AccessChain %[[X]]_addr[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : f32
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: spirv.AccessChain %[[X]]_addr[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : f32
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xf32>
func.func @ordered(%x: memref<256xf32>, %y: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %j = arith.addi %i, %c2 : index
  %a = tessera_tile.load %x[%i] : memref<256xf32>, vector<2xf32>
  %f = arith.constant dense<1.0> : vector<4xf32>
  tessera_tile.store %f, %y[%i] : vector<4xf32>, memref<256xf32>
  %b = tessera_tile.load %x[%j] : memref<256xf32>, vector<2xf32>
  %c = arith.addf %a, %b : vector<2xf32>
  tessera_tile.store %c, %x[%i] : vector<2xf32>, memref<256xf32>
  tessera_tile.store %c, %x[%j] : vector<2xf32>, memref<256xf32>
  return
}


// -----

// A length that is not a multiple of 4 (the last quad would be partial).
// CHECK-LABEL: spirv.module @__spv__odd_length
// CHECK: !spirv.array<258 x f32, stride=4>
// CHECK-NOT: vector<4xf32>
func.func @odd_length(%x: memref<258xf32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c4 = arith.constant 4 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %v = tessera_tile.load %x[%i] : memref<258xf32>, vector<4xf32>
  tessera_tile.store %v, %x[%i] : vector<4xf32>, memref<258xf32>
  return
}


// -----

// A merged quad, and an element at an index not known to be aligned (a
// lane's own): the latter reads component idx % 4 of vec4 idx / 4.  Shared
// memory (Workgroup) the same way, without an explicit layout.
// CHECK-LABEL: spirv.module @__spv__mixed
// CHECK-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>>)>, Workgroup>
// CHECK-DAG: spirv.GlobalVariable @{{.*}} bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : vector<4xf32>
// CHECK: spirv.ShiftRightLogical
// CHECK: spirv.BitwiseAnd
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : f32
// CHECK: spirv.Store "Workgroup" %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: spirv.Load "Workgroup" %{{.*}} : f32
func.func @mixed(%x: memref<256xf32>, %y: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c4 = arith.constant 4 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %v = tessera_tile.load %x[%i] : memref<256xf32>, vector<4xf32>
  %s = tessera_tile.load %x[%l] : memref<256xf32>, vector<1xf32>
  %sh = tessera_tile.shared_alloc : memref<256xf32, 3>
  tessera_tile.store %v, %sh[%i] : vector<4xf32>, memref<256xf32, 3>
  tessera_tile.barrier
  %t = tessera_tile.load %sh[%l] : memref<256xf32, 3>, vector<1xf32>
  %u = arith.addf %s, %t : vector<1xf32>
  tessera_tile.store %u, %y[%l] : vector<1xf32>, memref<256xf32>
  return
}

// -----

// A loop's induction variable: stepping by 4 from 0 it is a multiple of 4
// (read through the loop's back edge) and %x's quads merge; stepping by 6
// it is only even, and %y stays scalar.
// CHECK-LABEL: spirv.module @__spv__loops
// CHECK-DAG: spirv.GlobalVariable @{{.*}} bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @{{.*}} bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<256 x f32, stride=4> [0])>, StorageBuffer>
func.func @loops(%x: memref<256xf32>, %y: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c252 = arith.constant 252 : index
  scf.for %i = %c0 to %c252 step %c4 {
    %v = tessera_tile.load %x[%i] : memref<256xf32>, vector<4xf32>
    %w = arith.addf %v, %v : vector<4xf32>
    tessera_tile.store %w, %x[%i] : vector<4xf32>, memref<256xf32>
  }
  scf.for %j = %c0 to %c252 step %c6 {
    %v = tessera_tile.load %y[%j] : memref<256xf32>, vector<4xf32>
    %w = arith.addf %v, %v : vector<4xf32>
    tessera_tile.store %w, %y[%j] : vector<4xf32>, memref<256xf32>
  }
  return
}

// -----

// An atomic on the buffer: not a load or store, the buffer stays scalar.
// CHECK-LABEL: spirv.module @__spv__atomic
// CHECK: !spirv.array<256 x i32, stride=4>
// CHECK-NOT: vector<4xi32>
func.func @atomic(%x: memref<256xi32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %v = tessera_tile.load %x[%i] : memref<256xi32>, vector<4xi32>
  %s = vector.extract %v[0] : vector<4xi32>
  %o = tessera_tile.atomic_rmw add %s, %x[%c0] scope = device : i32, memref<256xi32>
  return
}

// -----

// A runtime-length buffer, a constant offset of 4 past an aligned base
// (lane * 8 + 4), i32 elements.
// CHECK-LABEL: spirv.module @__spv__offset_rt
// CHECK: spirv.GlobalVariable @{{.*}} bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<vector<4xi32>, stride=16> [0])>, StorageBuffer>
// CHECK: %[[Q:.*]] = spirv.IMul %{{.*}}, %{{.*}} : i32
// CHECK: %[[Q1:.*]] = spirv.IAdd %[[Q]], %{{.*}} : i32
// CHECK: spirv.AccessChain %{{.*}}[%{{.*}}, %[[Q1]]]
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : vector<4xi32>
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-NOT: spirv.Load "StorageBuffer" %{{.*}} : i32
func.func @offset_rt(%x: memref<?xi32>) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %l = tessera_tile.lane_id 0 : index
  %b = arith.muli %l, %c8 : index
  %i = arith.addi %b, %c4 : index
  %v = tessera_tile.load %x[%i] : memref<?xi32>, vector<4xi32>
  %w = arith.addi %v, %v : vector<4xi32>
  tessera_tile.store %w, %x[%i] : vector<4xi32>, memref<?xi32>
  return
}


// -----

// The GEMM's shared reads: row k of a 128-wide slice, 4 columns per lane,
// index k * 128 + lane * 4.  The vec4 index is divided through the sum
// (k * 32 + lane), as GLSL indexes a vec4 array, not shifted after it: a
// shader compiler cannot simplify `(k * 128 + lane * 4) >> 2` (the sum
// might wrap) and pays for it on every access.
// CHECK-LABEL: spirv.module @__spv__sum_of_multiples
// CHECK: spirv.mlir.loop
// CHECK-NOT: spirv.ShiftRightLogical
// CHECK: %[[K:.*]] = spirv.IMul %{{.*}}, %{{.*}} : i32
// CHECK: %[[Q:.*]] = spirv.IAdd %[[K]], %{{.*}} : i32
// CHECK: spirv.AccessChain %{{.*}}[%{{.*}}, %[[Q]]] : {{.*}}Workgroup
// CHECK: spirv.Load "Workgroup" %{{.*}} : vector<4xf32>
// CHECK-NOT: spirv.ShiftRightLogical
// CHECK: spirv.mlir.merge
func.func @sum_of_multiples(%x: memref<2048xf32>, %y: memref<2048xf32>) attributes {tessera_tile.group_size = array<i64: 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %l = tessera_tile.lane_id 0 : index
  %i = arith.muli %l, %c4 : index
  %sh = tessera_tile.shared_alloc : memref<2048xf32, 3>
  scf.for %k = %c0 to %c16 step %c1 {
    %row = arith.muli %k, %c128 : index
    %at = arith.addi %row, %i : index
    %v = tessera_tile.load %x[%at] : memref<2048xf32>, vector<4xf32>
    tessera_tile.store %v, %sh[%at] : vector<4xf32>, memref<2048xf32, 3>
  }
  tessera_tile.barrier
  scf.for %k = %c0 to %c16 step %c1 {
    %row = arith.muli %k, %c128 : index
    %at = arith.addi %row, %i : index
    %v = tessera_tile.load %sh[%at] : memref<2048xf32, 3>, vector<4xf32>
    tessera_tile.store %v, %y[%at] : vector<4xf32>, memref<2048xf32>
  }
  return
}
