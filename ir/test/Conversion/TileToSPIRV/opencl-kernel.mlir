// RUN: tessera-opt %s --tessera-tile-to-spirv="client-api=opencl" --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env opencl2.2 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN
// RUN: not tessera-opt %s --tessera-tile-to-spirv="client-api=metal" 2>&1 | FileCheck %s --check-prefix=BAD

// The OpenCL Kernel flavour of the SPIR-V lowering (the level_zero
// plugin's compiler): physical 64-bit addressing, the OpenCL memory model,
// buffers and scalars as entry-point parameters (no StorageBuffer bindings,
// no push constants), 64-bit index arithmetic and builtins, Workgroup
// variables for shared memory, and atomics on CrossWorkgroup memory.
// CHECK: spirv.module @__spv__scaled_count Physical64 OpenCL requires #spirv.vce<v1.0, [{{.*}}Kernel{{.*}}]
// CHECK-NOT: PushConstant
// CHECK-NOT: StorageBuffer
// CHECK: built_in("LocalInvocationId") : !spirv.ptr<vector<3xi64>, Input>
// CHECK: spirv.func @scaled_count(%{{.*}}: !spirv.ptr<f32, CrossWorkgroup>, %{{.*}}: !spirv.ptr<i32, CrossWorkgroup>, %{{.*}}: f32)
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>
// CHECK: spirv.AtomicIAdd "Device" "AcquireRelease|CrossWorkgroupMemory"
// CHECK: spirv.EntryPoint "Kernel" @scaled_count
// CHECK: spirv.ExecutionMode @scaled_count "LocalSize", 64, 1, 1
// BIN: OpMemoryModel Physical64 OpenCL
// BIN: OpEntryPoint Kernel
// BAD: client-api must be 'vulkan' or 'opencl', not 'metal'
func.func @scaled_count(%x: memref<?xf32>, %count: memref<?xi32>, %s: f32)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %shared = tessera_tile.shared_alloc : memref<64xf32, 3>
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %v = memref.load %x[%i] : memref<?xf32>
  %y = arith.mulf %v, %s : f32
  memref.store %y, %shared[%lane] : memref<64xf32, 3>
  tessera_tile.barrier
  %r = memref.load %shared[%lane] : memref<64xf32, 3>
  memref.store %r, %x[%i] : memref<?xf32>
  %o = tessera_tile.atomic_rmw add %one, %count[%c0] scope = device : i32, memref<?xi32>
  return
}
