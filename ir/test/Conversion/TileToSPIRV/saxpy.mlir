// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// examples/saxpy.mlir: the scalar `a` is the push-constant block's member 0,
// the buffers are bindings 0 and 1 of set 0, the vector<8xf32> is
// scalarized (SPIR-V vectors have at most 4 components) and its loads and
// stores regrouped into vec4s (every access to both buffers is an aligned
// quad: the buffers' element type becomes vector<4xf32>), the group size
// is the entry point's LocalSize and the VCE triple is the minimal one.
// CHECK: spirv.module @__spv__saxpy Logical GLSL450 requires #spirv.vce<v1.0, [Shader, SignedZeroInfNanPreserve], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_float_controls]>
// CHECK-DAG: spirv.GlobalVariable @__tessera_push_constants : !spirv.ptr<!spirv.struct<(f32 [0])>, PushConstant>
// CHECK-DAG: spirv.GlobalVariable @__builtin_var_LocalInvocationId__ built_in("LocalInvocationId")
// CHECK-DAG: spirv.GlobalVariable @__builtin_var_WorkgroupId__ built_in("WorkgroupId")
// CHECK-DAG: spirv.GlobalVariable @[[X:.*]] bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<16384 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @[[Y:.*]] bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<16384 x vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK: spirv.func @saxpy() "None"
// CHECK: %[[PC:.*]] = spirv.AccessChain %{{.*}}[%{{.*}}] : !spirv.ptr<!spirv.struct<(f32 [0])>, PushConstant>, i32
// CHECK: %[[A:.*]] = spirv.Load "PushConstant" %[[PC]] : f32
// CHECK-COUNT-4: spirv.Load "StorageBuffer" %{{.*}} : vector<4xf32>
// CHECK-NOT: spirv.Load "StorageBuffer"
// CHECK: spirv.GL.Fma %[[A]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-2: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT: spirv.Store "StorageBuffer"
// CHECK-NOT: vector<8xf32>
// CHECK: spirv.EntryPoint "GLCompute" @saxpy
// IEEE inf/NaN/signed zeros for f32 (tessera-spirv-preserve-inf-nan).
// CHECK-DAG: spirv.ExecutionMode @saxpy "SignedZeroInfNanPreserve", 32
// CHECK-DAG: spirv.ExecutionMode @saxpy "LocalSize", 128, 1, 1
func.func @saxpy(%a: f32, %x: memref<65536xf32>, %y: memref<65536xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>, tessera_tile.grid = array<i64: 64>} {
  %c8 = arith.constant 8 : index
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %base = arith.muli %g, %n : index
  %lane = arith.addi %base, %l : index
  %i = arith.muli %lane, %c8 : index
  %xv = tessera_tile.load %x[%i] : memref<65536xf32>, vector<8xf32>
  %yv = tessera_tile.load %y[%i] : memref<65536xf32>, vector<8xf32>
  %av = vector.broadcast %a : f32 to vector<8xf32>
  %r = tessera_tile.math fma(%av, %xv, %yv) : vector<8xf32>
  tessera_tile.store %r, %y[%i] : vector<8xf32>, memref<65536xf32>
  return
}
