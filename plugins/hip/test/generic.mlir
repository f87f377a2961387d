// The hip compiler: Tile IR -> ROCDL -> LLVM 16 AMDGPU -> code object
// (ld.lld -shared).  Each Tile IR op's AMDGPU form, for CDNA2 (gfx90a,
// 64-lane wavefronts):
// RUN: tessera-compile %s --function saxpy --target hip:gfx90a --emit asm -o %t.saxpy.s
// RUN: tessera-compile %s --function reduce --target hip:gfx90a --emit asm -o %t.reduce.s
// RUN: tessera-compile %s --function softexp --target hip:gfx90a --emit asm -o %t.softexp.s
// RUN: cat %t.saxpy.s %t.reduce.s %t.softexp.s | FileCheck %s
// The code object ld.lld links, and what its notes say:
// RUN: tessera-compile %s --function reduce --target hip:gfx90a --emit hsaco -o %t.hsaco
// RUN: llvm-readelf --notes %t.hsaco | FileCheck %s --check-prefix=NOTES
// RDNA3, whose oclc_isa_version file Debian's device libraries lack (the
// compiler defines the control itself), links ocml the same way:
// RUN: tessera-compile %s --function softexp --target hip:gfx1100 --emit asm -o %t.rdna3.s
// RUN: FileCheck %s --check-prefix=RDNA3 < %t.rdna3.s
// RUN: tessera-compile %s --function softexp --target hip:gfx1102 --emit hsaco -o %t.gfx1102.hsaco
// RUN: llvm-readelf --notes %t.gfx1102.hsaco | FileCheck %s --check-prefix=GFX1102
// RDNA3: .amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
// RDNA3-LABEL: softexp:
// RDNA3-NOT: s_swappc
// RDNA3: v_exp_f32
// RDNA3: .amdhsa_wavefront_size32 1
// GFX1102: amdgcn-amd-amdhsa--gfx1102

// CHECK: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a
// CHECK-LABEL: saxpy:
// CHECK: global_load_dword
// CHECK: v_fma{{c?}}_f32
// CHECK: global_store_dword
func.func @saxpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: 256>} {
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

// Shared memory is LDS, barrier s_barrier (two wavefronts), subgroup_reduce
// a butterfly of ds_bpermute over the 64-lane wavefront (6 steps).
// CHECK-LABEL: reduce:
// CHECK: ds_write_b32
// CHECK: s_barrier
// CHECK-COUNT-6: ds_bpermute_b32
// CHECK: .amdhsa_group_segment_fixed_size 512
// NOTES: .group_segment_fixed_size: 512
// NOTES: .name: reduce
// NOTES: .vgpr_count:
// NOTES: .wavefront_size: 64
func.func @reduce(%out: memref<1xf32>, %in: memref<?xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>} {
  %shared = tessera_tile.shared_alloc : memref<128xf32, 3>
  %lane = tessera_tile.lane_id 0 : index
  %t = tessera_tile.tile_id : index
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %base = arith.muli %t, %c128 : index
  %i = arith.addi %base, %lane : index
  %v = memref.load %in[%i] : memref<?xf32>
  memref.store %v, %shared[%lane] : memref<128xf32, 3>
  tessera_tile.barrier
  %j = arith.subi %c128, %lane : index
  %k = arith.subi %j, %c0 : index
  %c1 = arith.constant 1 : index
  %m = arith.subi %k, %c1 : index
  %w = memref.load %shared[%m] : memref<128xf32, 3>
  %s = tessera_tile.subgroup_reduce add %w : f32
  %old = tessera_tile.atomic_rmw add %s, %out[%c0] scope = device : f32, memref<1xf32>
  return
}

// exp comes from ROCm's device libraries (ocml), linked and inlined.
// CHECK-LABEL: softexp:
// CHECK-NOT: s_swappc
// CHECK: v_exp_f32
// CHECK: s_endpgm
func.func @softexp(%y: memref<256xf32>, %x: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 256>} {
  %lane = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%lane] : memref<256xf32>
  %e = tessera_tile.math exp(%v) : f32
  memref.store %e, %y[%lane] : memref<256xf32>
  return
}
