// The warpgroup attention kernel (mma=wgmma, bf16) as Tile IR: one kernel
// of two warpgroups per 128 queries, the query block and each key block
// by tile_load_async, S and O by warpgroup_mma, quad shuffles, exp2.
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={mma=wgmma}" | FileCheck %s
// It also lowers to SPIR-V (exp2 as exp of x ln 2: MLIR 16 converts no
// exp2), valid for Vulkan; a device runs it if it has the 112 KiB of shared
// memory.
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={mma=wgmma}" --tessera-strip-launch-plans=keep=attention_k0_attention --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// CHECK-LABEL: func.func @attention(
// CHECK: call @attention_k0_attention(%arg0, %arg1, %arg2, %arg3) {tessera.grid = array<i64: 2, 2, 1>}
// CHECK-LABEL: func.func @attention_k0_attention(
// CHECK-SAME: tessera_tile.grid = array<i64: 2, 2, 1>, tessera_tile.group_size = array<i64: 256>, tessera_tile.max_shared_memory = 115712 : i64
// CHECK-COUNT-3: tessera_tile.shared_alloc alignment = 1024
// CHECK: tessera_tile.tile_load_async
// CHECK: tessera_tile.tile_load_wait
// CHECK: scf.for
// CHECK: tessera_tile.barrier
// CHECK: tessera_tile.warpgroup_mma {{.*}}b_block_stride = 4096 : i64, k = 64 : i64, n = 128 : i64
// CHECK-COUNT-2: tessera_tile.shuffle xor
// CHECK: math.exp2
// CHECK: tessera_tile.round_to_bf16
// CHECK: tessera_tile.barrier
// CHECK-COUNT-2: tessera_tile.warpgroup_mma {{.*}}b_block_stride = 4096 : i64, k = 64 : i64, n = 64 : i64
func.func @attention(%q: tensor<2x256x64xbf16>, %kt: tensor<2x64x256xbf16>, %v: tensor<2x256x64xbf16>) -> tensor<2x256x64xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x256x64xbf16>, tensor<2x64x256xbf16> -> tensor<2x256x256xbf16>
  %scale = arith.constant dense<0.125> : tensor<2x256x256xbf16>
  %s = tessera_graph.mul %s0, %scale : tensor<2x256x256xbf16>, tensor<2x256x256xbf16>
  %p = tessera_graph.softmax %s dim = 2 : tensor<2x256x256xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<2x256x256xbf16>, tensor<2x256x64xbf16> -> tensor<2x256x64xbf16>
  return %o : tensor<2x256x64xbf16>
}
