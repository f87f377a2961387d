// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN

// The serialized module declares exactly what it uses:
// BIN-DAG: OpCapability Int8{{$}}
// BIN-DAG: OpCapability Int16{{$}}
// BIN-DAG: OpCapability Int64{{$}}
// BIN-DAG: OpCapability Int64Atomics{{$}}
// BIN-DAG: OpCapability Float16{{$}}
// BIN-DAG: OpCapability Float64{{$}}
// BIN-DAG: OpCapability StorageBuffer16BitAccess{{$}}
// BIN-DAG: OpCapability StoragePushConstant16{{$}}
// BIN-DAG: OpCapability StorageBuffer8BitAccess{{$}}
// BIN-DAG: OpExtension "SPV_KHR_8bit_storage"
// BIN-DAG: OpExtension "SPV_KHR_16bit_storage"

// Non-32-bit scalars in arithmetic, storage buffers and push constants.
// The target environment allows Int8/16/64, Float16/64 and 8/16-bit storage;
// spirv-update-vce records exactly what the module uses, and the Vulkan
// plugin checks each capability against the device when it loads the
// module (shaderInt64, shaderFloat16, storageBuffer16BitAccess, ...).
// CHECK: spirv.module @__spv__mixed Logical GLSL450 requires #spirv.vce<v1.0,
// Scalars at naturally aligned offsets: i64 at 0, f16 at 8, f64 at 16.
// CHECK-DAG: spirv.GlobalVariable @__tessera_push_constants : !spirv.ptr<!spirv.struct<(i64 [0], f16 [8], f64 [16])>, PushConstant>
// CHECK-DAG: bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x i64, stride=8> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f16, stride=2> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 2) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f64, stride=8> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 3) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x i8, stride=1> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 4) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x i16, stride=2> [0])>, StorageBuffer>
// CHECK: spirv.IMul %{{.*}}, %{{.*}} : i64
// CHECK: spirv.AtomicIAdd "Device" "AcquireRelease|UniformMemory" %{{.*}}, %{{.*}} : !spirv.ptr<i64, StorageBuffer>
// CHECK: spirv.GL.Fma %{{.*}}, %{{.*}}, %{{.*}} : f16
// CHECK: spirv.FAdd %{{.*}}, %{{.*}} : f64
// CHECK: spirv.IAdd %{{.*}}, %{{.*}} : i8
// CHECK: spirv.IAdd %{{.*}}, %{{.*}} : i16
func.func @mixed(%k: i64, %h: f16, %d: f64, %xl: memref<64xi64>, %xh: memref<64xf16>,
                 %xd: memref<64xf64>, %xb: memref<64xi8>, %xs: memref<64xi16>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %b1 = arith.constant 1 : i8
  %s1 = arith.constant 1 : i16
  %l = tessera_tile.lane_id 0 : index
  %a = memref.load %xl[%l] : memref<64xi64>
  %am = arith.muli %a, %k : i64
  memref.store %am, %xl[%l] : memref<64xi64>
  %old = tessera_tile.atomic_rmw add %k, %xl[%c0] scope = device : i64, memref<64xi64>
  %hv = tessera_tile.load %xh[%l] : memref<64xf16>, vector<1xf16>
  %hb = vector.broadcast %h : f16 to vector<1xf16>
  %hr = tessera_tile.math fma(%hv, %hb, %hb) : vector<1xf16>
  tessera_tile.store %hr, %xh[%l] : vector<1xf16>, memref<64xf16>
  %dv = memref.load %xd[%l] : memref<64xf64>
  %ds = arith.addf %dv, %d : f64
  memref.store %ds, %xd[%l] : memref<64xf64>
  %bv = memref.load %xb[%l] : memref<64xi8>
  %bs = arith.addi %bv, %b1 : i8
  memref.store %bs, %xb[%l] : memref<64xi8>
  %sv = memref.load %xs[%l] : memref<64xi16>
  %ss = arith.addi %sv, %s1 : i16
  memref.store %ss, %xs[%l] : memref<64xi16>
  return
}
