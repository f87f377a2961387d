// The level_zero compiler: Tile IR -> SPIR-V of the OpenCL execution model
// (Kernel capability, physical addressing), what Intel's drivers take
// through zeModuleCreate. Checked by the disassembler and by SPIRV-Tools'
// validator for OpenCL 2.2 here (the plugin validates too).
// RUN: tessera-compile %s --function saxpy --target level_zero --emit spirv -o %t.spv
// RUN: spirv-val --target-env opencl2.2 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s
// RUN: tessera-compile %s --function reduce --target level_zero --emit spirv-asm -o %t.reduce.s
// RUN: FileCheck %s --check-prefix=REDUCE < %t.reduce.s
// The compare-exchange form of f32 atomic add for a device without
// SPV_EXT_shader_atomic_float_add:
// RUN: tessera-compile %s --function histogram --target level_zero --compile-option float_atomic_add=cas --emit spirv-asm -o %t.cas.s
// RUN: FileCheck %s --check-prefix=CAS < %t.cas.s
// RUN: tessera-compile %s --function histogram --target level_zero --emit spirv-asm -o %t.native.s
// RUN: FileCheck %s --check-prefix=NATIVE < %t.native.s

// CHECK-DAG: OpCapability Kernel
// CHECK-DAG: OpCapability Addresses
// CHECK-NOT: OpCapability Shader
// CHECK: OpMemoryModel Physical64 OpenCL
// CHECK: OpEntryPoint Kernel %{{.*}} "saxpy"
// CHECK: OpFMul %float
// CHECK: OpFAdd %float
func.func @saxpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %t, %c64 : index
  %i = arith.addi %base, %lane : index
  %ni = arith.index_cast %n : i64 to index
  %in = arith.cmpi ult, %i, %ni : index
  scf.if %in {
    %xv = memref.load %x[%i] : memref<?xf32>
    %yv = memref.load %y[%i] : memref<?xf32>
    %p = arith.mulf %a, %xv : f32
    %s = arith.addf %p, %yv : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
  return
}

// A subgroup reduction: OpGroupNonUniformFAdd over the subgroup, the
// GroupNonUniformArithmetic capability.
// REDUCE: OpCapability GroupNonUniformArithmetic
// REDUCE: OpGroupNonUniformFAdd %float %uint_3 Reduce
func.func @reduce(%x: memref<64xf32>, %o: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %lane = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%lane] : memref<64xf32>
  %s = tessera_tile.subgroup_reduce add %v : f32
  memref.store %s, %o[%lane] : memref<64xf32>
  return
}

// CAS: OpAtomicCompareExchange
// CAS-NOT: OpAtomicFAddEXT
// NATIVE: OpCapability AtomicFloat32AddEXT
// NATIVE: OpAtomicFAddEXT
func.func @histogram(%h: memref<16xf32>, %x: memref<64xi32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %lane = tessera_tile.lane_id 0 : index
  %b = memref.load %x[%lane] : memref<64xi32>
  %bi = arith.index_cast %b : i32 to index
  %one = arith.constant 1.0 : f32
  %o = tessera_tile.atomic_rmw add %one, %h[%bi] scope = device : f32, memref<16xf32>
  return
}
