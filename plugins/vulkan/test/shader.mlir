// The vulkan compiler: Tile IR -> SPIR-V of the Vulkan execution model
// (Shader capability, logical addressing, buffers as StorageBuffer blocks,
// scalar arguments in one PushConstant block). Checked by the
// disassembler and by SPIRV-Tools' validator for Vulkan 1.1.
// RUN: tessera-compile %s --function saxpy --target vulkan --emit spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s
// RUN: tessera-compile %s --function shuffle_down --target vulkan --emit spirv-asm -o %t.shuffle.s
// RUN: FileCheck %s --check-prefix=SHUFFLE < %t.shuffle.s
// RUN: tessera-compile %s --function fmax --target vulkan --emit spirv-asm -o %t.fmax.s
// RUN: FileCheck %s --check-prefix=FMAX < %t.fmax.s

// CHECK: OpCapability Shader
// CHECK-NOT: OpCapability Kernel
// CHECK: OpMemoryModel Logical GLSL450
// CHECK: OpEntryPoint GLCompute %{{.*}} "saxpy"
// CHECK: OpExecutionMode %{{.*}} LocalSize 64 1 1
// CHECK-DAG: OpDecorate %{{.*}} Block
// CHECK-DAG: OpTypePointer PushConstant
// CHECK-DAG: OpTypePointer StorageBuffer
func.func @saxpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i32)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %t, %c64 : index
  %i = arith.addi %base, %lane : index
  %ni = arith.index_cast %n : i32 to index
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

// A shuffle down: the subgroup-local lane id and size decide which lanes
// keep their own value (Tessera's out-of-range rule).
// SHUFFLE-DAG: BuiltIn SubgroupLocalInvocationId
// SHUFFLE-DAG: BuiltIn SubgroupSize
// SHUFFLE: OpGroupNonUniformShuffleDown
// SHUFFLE: OpSelect
func.func @shuffle_down(%x: memref<64xf32>, %o: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %lane = tessera_tile.lane_id 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %x[%lane] : memref<64xf32>
  %s = tessera_tile.shuffle down %v, %c1 : f32
  memref.store %s, %o[%lane] : memref<64xf32>
  return
}

// Float atomic max has no SPIR-V op MLIR 16 emits: the buffer is retyped
// to its integer bits and the max is a compare-exchange loop.
// FMAX: OpAtomicCompareExchange %uint
// FMAX-NOT: OpAtomicFMaxEXT
func.func @fmax(%m: memref<1xf32>, %x: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %lane = tessera_tile.lane_id 0 : index
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%lane] : memref<64xf32>
  %o = tessera_tile.atomic_rmw max %v, %m[%c0] scope = device : f32, memref<1xf32>
  return
}
