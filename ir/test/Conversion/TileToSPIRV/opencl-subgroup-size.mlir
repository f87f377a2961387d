// RUN: tessera-opt %s --tessera-tile-to-spirv="client-api=opencl" --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env opencl2.2 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN

// In an OpenCL Kernel module, index arithmetic is 64-bit but SubgroupSize
// is a 32-bit builtin (SPIR-V's BuiltIn rules; OpenCL's get_sub_group_size
// returns a uint): it is read as i32 and widened, not declared as i64 (MLIR
// 16's pattern did, and the module read a u64 where drivers provide a u32;
// PoCL's link of the translated kernel failed on it).
// CHECK: built_in("SubgroupSize") : !spirv.ptr<i32, Input>
// CHECK: spirv.UConvert %{{.*}} : i32 to i64
// BIN: OpDecorate %[[SIZE:.*]] BuiltIn SubgroupSize
// BIN: %[[SIZE]] = OpVariable %_ptr_Input_uint Input
func.func @subgroup_count(%out: memref<?xi64>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %n = tessera_tile.subgroup_size : index
  %v = arith.index_cast %n : index to i64
  memref.store %v, %out[%i] : memref<?xi64>
  return
}
