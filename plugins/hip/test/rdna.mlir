// RDNA3 (gfx1100) runs 32-lane wavefronts: the butterfly has 5 steps and
// the kernel descriptor says wave32.
// RUN: tessera-compile %s --target hip:gfx1100 --emit asm -o %t.s
// RUN: FileCheck %s < %t.s
// CHECK: .amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
// CHECK-COUNT-5: ds_bpermute_b32
// CHECK: .amdhsa_wavefront_size32 1
func.func @wave_sum(%out: memref<64xi32>, %in: memref<64xi32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %lane = tessera_tile.lane_id 0 : index
  %v = memref.load %in[%lane] : memref<64xi32>
  %s = tessera_tile.subgroup_reduce add %v : i32
  memref.store %s, %out[%lane] : memref<64xi32>
  return
}
