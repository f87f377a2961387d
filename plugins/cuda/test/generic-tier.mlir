// The cuda compiler's generic tier (sm_70 and up): Tile IR -> NVVM -> PTX
// (LLVM 16's NVPTX back end).  Each Tile IR op's PTX form:
// RUN: tessera-compile %s --function saxpy --target cuda:sm_80 --emit ptx -o %t.saxpy.ptx
// RUN: tessera-compile %s --function reduce --target cuda:sm_80 --emit ptx -o %t.reduce.ptx
// RUN: tessera-compile %s --function softexp --target cuda:sm_80 --emit ptx -o %t.softexp.ptx
// RUN: cat %t.saxpy.ptx %t.reduce.ptx %t.softexp.ptx | FileCheck %s
// and the toolkit's ptxas accepts them (the executable is one cubin per
// kernel; without a ptxas it holds the PTX and the log says so):
// RUN: tessera-compile %s --function reduce --target cuda:sm_90a -o %t.tsp

// CHECK: .version 7.8
// CHECK: .target sm_80

// One pointer per buffer, scalars by value, as every plugin launches:
// CHECK-LABEL: .visible .entry saxpy(
// CHECK-NEXT: .param .u64 saxpy_param_0,
// CHECK-NEXT: .param .u64 saxpy_param_1,
// CHECK-NEXT: .param .f32 saxpy_param_2,
// CHECK-NEXT: .param .u64 saxpy_param_3
// CHECK: mov.u32 {{.*}}%ctaid.x
// CHECK: mov.u32 {{.*}}%tid.x
// CHECK: fma.rn.f32
func.func @saxpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: 128>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %i64 = arith.index_cast %i : index to i64
  %inside = arith.cmpi ult, %i64, %n : i64
  scf.if %inside {
    %xv = memref.load %x[%i] : memref<?xf32>
    %yv = memref.load %y[%i] : memref<?xf32>
    %r = tessera_tile.math fma(%a, %xv, %yv) : f32
    memref.store %r, %y[%i] : memref<?xf32>
  }
  return
}

// Shared memory is a .shared array of the group; barrier is bar.sync;
// subgroup_reduce is an xor butterfly of warp shuffles (5 steps for 32
// lanes); a device-scope atomic add is atom.global.add.
// CHECK-LABEL: .visible .entry reduce(
// CHECK: .shared .align {{[0-9]+}} .b8 {{.*}}[256]
// CHECK: bar.sync 0
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: atom.global.add.f32
func.func @reduce(%out: memref<1xf32>, %in: memref<?xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %shared = tessera_tile.shared_alloc : memref<64xf32, 3>
  %lane = tessera_tile.lane_id 0 : index
  %t = tessera_tile.tile_id : index
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %t, %c64 : index
  %i = arith.addi %base, %lane : index
  %v = memref.load %in[%i] : memref<?xf32>
  memref.store %v, %shared[%lane] : memref<64xf32, 3>
  tessera_tile.barrier
  %w = memref.load %shared[%lane] : memref<64xf32, 3>
  %s = tessera_tile.subgroup_reduce add %w : f32
  %old = tessera_tile.atomic_rmw add %s, %out[%c0] scope = device : f32, memref<1xf32>
  return
}

// exp is libdevice's __nv_expf, linked and inlined: no call remains.
// CHECK-LABEL: .visible .entry softexp(
// CHECK-NOT: call
// CHECK: ex2.approx
// CHECK: ret;
func.func @softexp(%y: memref<256xf32>, %x: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 256>} {
  %lane = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%lane] : memref<256xf32>
  %e = tessera_tile.math exp(%v) : f32
  memref.store %e, %y[%lane] : memref<256xf32>
  return
}

// Mesh scope (the host and peer devices see it): PTX's system scope, on the
// element's generic address.
// RUN: tessera-compile %s --function mesh_count --target cuda:sm_80 --emit ptx -o %t.mesh.ptx
// RUN: FileCheck %s --check-prefix=MESH < %t.mesh.ptx
// MESH: atom.sys.add.u32
func.func @mesh_count(%c: memref<?xi32>)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %c3 = arith.constant 3 : index
  %one = arith.constant 1 : i32
  %o = tessera_tile.atomic_rmw add %one, %c[%c3] scope = mesh : i32, memref<?xi32>
  return
}

// cp_async: on sm_80 and up the asynchronous copy engine (cp.async, .cg for
// 16 bytes) with commit / wait groups, into a 16-byte aligned .shared array;
// before sm_80 a synchronous copy.
// RUN: tessera-compile %s --function stage --target cuda:sm_80 --emit ptx -o %t.stage80.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t.stage80.ptx
// RUN: tessera-compile %s --function stage --target cuda:sm_75 --emit ptx -o %t.stage75.ptx
// RUN: FileCheck %s --check-prefix=SM75 < %t.stage75.ptx
// SM80: .shared .align 16 .b8
// SM80: cp.async.cg.shared.global [{{%rd[0-9]+}}], [{{%rd[0-9]+}}], 16;
// SM80: cp.async.commit_group;
// SM80: cp.async.wait_group 0;
// SM80: bar.sync 0
// SM75-NOT: cp.async
// SM75: bar.sync 0
func.func @stage(%out: memref<256xf32>, %in: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %s = tessera_tile.shared_alloc : memref<256xf32, 3>
  %l = tessera_tile.lane_id 0 : index
  %c4 = arith.constant 4 : index
  %i = arith.muli %l, %c4 : index
  tessera_tile.cp_async %in[%i], %s[%i] elements = 4 : memref<256xf32>, memref<256xf32, 3>
  tessera_tile.cp_async_commit
  tessera_tile.cp_async_wait 0
  tessera_tile.barrier
  %v = memref.load %s[%l] : memref<256xf32, 3>
  memref.store %v, %out[%l] : memref<256xf32>
  return
}
