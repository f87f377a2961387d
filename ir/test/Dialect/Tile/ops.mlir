// RUN: tessera-opt %s | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: tessera_tile.group_size = array<i64: 128>
func.func @kernel(%g: memref<1024xf32>, %o: memref<16xf32>, %fa: vector<16x8xf16>, %fb: vector<8x16xf16>, %fc: vector<16x16xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>, tessera_tile.max_shared_memory = 49152 : i64} {
  // CHECK: tessera_tile.group_id 0 : index
  %v0 = arith.constant 0.0 : f32
  %gid = tessera_tile.group_id 0 : index
  %gn = tessera_tile.group_count 1 : index
  %lid = tessera_tile.lane_id 0 : index
  %ln = tessera_tile.lane_count 0 : index
  %t = tessera_tile.tile_id : index
  %sg = tessera_tile.subgroup_size : index
  // CHECK: tessera_tile.shared_alloc swizzle = 128 : memref<64x64xf32, 3>
  %s = tessera_tile.shared_alloc swizzle = 128 : memref<64x64xf32, 3>
  %s1 = tessera_tile.shared_alloc : memref<256xf32, 3>
  // CHECK: tessera_tile.cp_async %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] elements = 4
  tessera_tile.cp_async %g[%lid], %s1[%lid] elements = 4 : memref<1024xf32>, memref<256xf32, 3>
  tessera_tile.cp_async_commit
  // CHECK: tessera_tile.cp_async_wait 0
  tessera_tile.cp_async_wait 0
  tessera_tile.barrier
  // CHECK: tessera_tile.mma
  %d = tessera_tile.mma %fa, %fb, %fc : vector<16x8xf16>, vector<8x16xf16>, vector<16x16xf32>
  %v = tessera_tile.load %g[%lid] : memref<1024xf32>, vector<8xf32>
  // CHECK: tessera_tile.dot
  %dt = tessera_tile.dot %v, %v, %v0 : vector<8xf32>, f32
  tessera_tile.store %v, %g[%lid] : vector<8xf32>, memref<1024xf32>
  %x = memref.load %g[%lid] : memref<1024xf32>
  // CHECK: tessera_tile.shuffle xor
  %sh = tessera_tile.shuffle xor %x, %ln : f32
  // CHECK: tessera_tile.subgroup_reduce add
  %r = tessera_tile.subgroup_reduce add %sh : f32
  // CHECK: tessera_tile.atomic_rmw add {{.*}} scope = device
  %old = tessera_tile.atomic_rmw add %r, %o[%gid] scope = device : f32, memref<16xf32>
  %old2 = tessera_tile.atomic_rmw max %r, %o[%gid] scope = mesh : f32, memref<16xf32>
  // CHECK: tessera_tile.math exp(%{{.*}}) : f32
  %e = tessera_tile.math exp(%r) : f32
  // CHECK: tessera_tile.math fma(%{{.*}}, %{{.*}}, %{{.*}}) : f32
  %f = tessera_tile.math fma(%e, %e, %r) : f32
  return
}

// CHECK-LABEL: func.func @warpgroup_mma
func.func @warpgroup_mma(%i: index, %c: vector<64xf32>) -> vector<64xf32> {
  // CHECK: tessera_tile.shared_alloc alignment = 1024 : memref<8192xi16, 3>
  %a = tessera_tile.shared_alloc alignment = 1024 : memref<8192xi16, 3>
  // CHECK: tessera_tile.shared_alloc swizzle = 128 alignment = 1024 : memref<16384xbf16, 3>
  %b = tessera_tile.shared_alloc swizzle = 128 alignment = 1024 : memref<16384xbf16, 3>
  // CHECK: tessera_tile.warpgroup_mma %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], %{{.*}} {b_block_stride = 4096 : i64, k = 64 : i64, n = 128 : i64, operand_type = bf16} : memref<8192xi16, 3>, memref<16384xbf16, 3>, vector<64xf32>
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 128 : i64, k = 64 : i64, b_block_stride = 4096 : i64, operand_type = bf16} : memref<8192xi16, 3>, memref<16384xbf16, 3>, vector<64xf32>
  return %r : vector<64xf32>
}

// CHECK-LABEL: func.func @tile_load
func.func @tile_load(%g: memref<262144xbf16>, %i: index, %s: index, %p: index, %acc: vector<64xf32>) {
  %t = tessera_tile.shared_alloc alignment = 1024 : memref<16384xbf16, 3>
  // CHECK: tessera_tile.tile_load_async %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}] stage %{{.*}} {cols = 64 : i64, ld = 512 : i64, rows = 128 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<16384xbf16, 3>
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %s {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<16384xbf16, 3>
  // CHECK: tessera_tile.tile_load_commit stage %{{.*}} {stages = 2 : i64}
  tessera_tile.tile_load_commit stage %s {stages = 2 : i64}
  // CHECK: tessera_tile.tile_load_wait stage %{{.*}} phase %{{.*}} {stages = 2 : i64}
  tessera_tile.tile_load_wait stage %s phase %p {stages = 2 : i64}
  // A warp-specialized pipeline: one lane copies, readers release.
  // CHECK: tessera_tile.tile_load_acquire stage %{{.*}} phase %{{.*}} {releasers = 256 : i64, stages = 2 : i64}
  tessera_tile.tile_load_acquire stage %s phase %p {releasers = 256 : i64, stages = 2 : i64}
  // CHECK: tessera_tile.tile_load_async {{.*}} single_lane
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %s {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64, single_lane} : memref<262144xbf16>, memref<16384xbf16, 3>
  // CHECK: tessera_tile.tile_load_commit stage %{{.*}} {single_lane, stages = 2 : i64}
  tessera_tile.tile_load_commit stage %s {stages = 2 : i64, single_lane}
  // CHECK: tessera_tile.tile_load_release stage %{{.*}} {stages = 2 : i64}
  tessera_tile.tile_load_release stage %s {stages = 2 : i64}
  // CHECK: tessera_tile.set_max_registers {registers = 232 : i64}
  tessera_tile.set_max_registers {registers = 232 : i64}
  // CHECK: tessera_tile.round_to_bf16 %{{.*}}
  %f = arith.constant 1.5 : f32
  %bits = tessera_tile.round_to_bf16 %f
  // CHECK: tessera_tile.warpgroup_mma_wait %{{.*}} {pending = 0 : i64} : vector<64xf32>
  %w = tessera_tile.warpgroup_mma_wait %acc {pending = 0 : i64} : vector<64xf32>
  return
}

// CHECK-LABEL: func.func @subgroup_mma
func.func @subgroup_mma(%a: memref<10240xi16, 3>, %b: memref<8704xf16, 3>, %i: index, %c: vector<64xf32>) -> vector<64xf32> {
  // CHECK: tessera_tile.subgroup_mma %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], %{{.*}} {lda = 40 : i64, ldb = 136 : i64, m = 64 : i64, n = 32 : i64, operand_type = f16} : memref<10240xi16, 3>, memref<8704xf16, 3>, vector<64xf32>
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 136 : i64, operand_type = f16} : memref<10240xi16, 3>, memref<8704xf16, 3>, vector<64xf32>
  return %r : vector<64xf32>
}

// CHECK-LABEL: func.func @wave32_mma
func.func @wave32_mma(%a: memref<5120xf16, 3>, %b: memref<2560xi16, 3>, %i: index, %c: vector<64xf32>) -> vector<64xf32> {
  // CHECK: tessera_tile.wave32_mma %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], %{{.*}} {lda = 40 : i64, ldb = 40 : i64, m = 64 : i64, n = 32 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<2560xi16, 3>, vector<64xf32>
  %r = tessera_tile.wave32_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 40 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<2560xi16, 3>, vector<64xf32>
  return %r : vector<64xf32>
}

// CHECK-LABEL: func.func @wavefront_mma
func.func @wavefront_mma(%a: memref<5120xi16, 3>, %b: memref<4608xbf16, 3>, %i: index, %c: vector<64xf32>) -> vector<64xf32> {
  // CHECK: tessera_tile.wavefront_mma %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], %{{.*}} {lda = 40 : i64, ldb = 72 : i64, m = 64 : i64, n = 64 : i64, operand_type = bf16} : memref<5120xi16, 3>, memref<4608xbf16, 3>, vector<64xf32>
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 64 : i64, lda = 40 : i64, ldb = 72 : i64, operand_type = bf16} : memref<5120xi16, 3>, memref<4608xbf16, 3>, vector<64xf32>
  return %r : vector<64xf32>
}
