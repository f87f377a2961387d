// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @mma(%a: vector<16x8xf16>, %b: vector<16x16xf16>, %c: vector<16x16xf32>) {
  // expected-error @+1 {{fragment shapes are incompatible: a is 16x8, b is 16x16 (K differs)}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<16x16xf16>, vector<16x16xf32>
  return
}

// -----

func.func @mma_acc(%a: vector<16x8xf16>, %b: vector<8x16xf16>, %c: vector<16x8xf32>) {
  // expected-error @+1 {{accumulator must be 16x16, got 16x8}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<8x16xf16>, vector<16x8xf32>
  return
}

// -----

func.func @too_much_shared() attributes {tessera_tile.group_size = array<i64: 64>} {
  %a = tessera_tile.shared_alloc : memref<16384xf32, 3>
  // expected-error @+1 {{kernel needs 65540 bytes of shared memory, more than the limit of 65536 bytes}}
  %b = tessera_tile.shared_alloc : memref<1xf32, 3>
  return
}

// -----

func.func @limit_attr() attributes {tessera_tile.max_shared_memory = 1024 : i64} {
  // expected-error @+1 {{kernel needs 4096 bytes of shared memory, more than the limit of 1024 bytes}}
  %a = tessera_tile.shared_alloc : memref<1024xf32, 3>
  return
}

// -----

func.func @not_shared() {
  // expected-error @+1 {{result must be in shared memory}}
  %a = tessera_tile.shared_alloc : memref<16xf32>
  return
}

// -----

func.func @swizzle() {
  // expected-error @+1 {{swizzle must be 0, 32, 64 or 128 bytes, got 48}}
  %a = tessera_tile.shared_alloc swizzle = 48 : memref<16xf32, 3>
  return
}

// -----

func.func @cp_bytes(%g: memref<64xf32>, %s: memref<64xf32, 3>, %i: index) {
  // expected-error @+1 {{copies 4, 8 or 16 bytes per lane, got 12}}
  tessera_tile.cp_async %g[%i], %s[%i] elements = 3 : memref<64xf32>, memref<64xf32, 3>
  return
}

// -----

func.func @dim() {
  // expected-error @+1 {{dim must be 0, 1 or 2, got 3}}
  %l = tessera_tile.lane_id 3 : index
  return
}

// -----

// expected-error @+1 {{group of 2048 lanes exceeds the limit of 1024}}
func.func @group() attributes {tessera_tile.group_size = array<i64: 2048>} {
  return
}

// -----

func.func @math(%a: f32) {
  // expected-error @+1 {{fma takes 3 operand(s), got 2}}
  %r = tessera_tile.math fma(%a, %a) : f32
  return
}

// -----

// expected-error @+1 {{tessera_tile.grid entries must be positive}}
func.func @grid() attributes {tessera_tile.grid = array<i64: 4, 0>} {
  return
}

// -----

// expected-error @+1 {{tessera_tile.grid entry 4294967296 is larger than 4294967295, the most a launch can carry (TsDim3 is 32-bit)}}
func.func @grid_too_large() attributes {tessera_tile.grid = array<i64: 4294967296>} {
  return
}

// -----

// expected-error @+1 {{tessera_tile.group_size must be array<i64: X[, Y[, Z]]>}}
func.func @group4() attributes {tessera_tile.group_size = array<i64: 2, 2, 2, 2>} {
  return
}

// -----

// expected-error @+1 {{unknown tessera_tile attribute 'tessera_tile.lanes'}}
func.func @unknown_attr() attributes {tessera_tile.lanes = 4 : i64} {
  return
}

// -----

func.func @cp_target(%g: memref<64xf32>, %h: memref<64xf32>, %i: index) {
  // expected-error @+1 {{target must be shared memory}}
  tessera_tile.cp_async %g[%i], %h[%i] elements = 4 : memref<64xf32>, memref<64xf32>
  return
}

// -----

func.func @cp_source(%g: memref<64xf32, 3>, %s: memref<64xf32, 3>, %i: index) {
  // expected-error @+1 {{source must be global memory}}
  tessera_tile.cp_async %g[%i], %s[%i] elements = 4 : memref<64xf32, 3>, memref<64xf32, 3>
  return
}

// -----

func.func @cp_types(%g: memref<64xf16>, %s: memref<64xf32, 3>, %i: index) {
  // expected-error @+1 {{source and target element types differ}}
  tessera_tile.cp_async %g[%i], %s[%i] elements = 4 : memref<64xf16>, memref<64xf32, 3>
  return
}

// -----

func.func @cp_indices(%g: memref<8x8xf32>, %s: memref<64xf32, 3>, %i: index) {
  // expected-error @+1 {{source needs 2 indices, got 1}}
  tessera_tile.cp_async %g[%i], %s[%i] elements = 4 : memref<8x8xf32>, memref<64xf32, 3>
  return
}

// -----

func.func @wait() {
  // expected-error @+1 {{pending must be >= 0}}
  tessera_tile.cp_async_wait -1
  return
}

// -----

func.func @mma_types(%a: vector<16x8xf16>, %b: vector<8x16xbf16>, %c: vector<16x16xf32>) {
  // expected-error @+1 {{a and b element types differ}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<8x16xbf16>, vector<16x16xf32>
  return
}

// -----

func.func @mma_acc_type(%a: vector<16x8xf32>, %b: vector<8x16xf32>, %c: vector<16x16xf16>) {
  // expected-error @+1 {{'f16' cannot accumulate 'f32'}}
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf32>, vector<8x16xf32>, vector<16x16xf16>
  return
}

// -----

func.func @dot_acc(%a: vector<8xi8>, %acc: f32) {
  // expected-error @+1 {{'f32' cannot accumulate 'i8'}}
  %d = tessera_tile.dot %a, %a, %acc : vector<8xi8>, f32
  return
}

// -----

func.func @load_type(%m: memref<64xf32>, %i: index) {
  // expected-error @+1 {{vector element type 'f16' differs from memref element type 'f32'}}
  %v = tessera_tile.load %m[%i] : memref<64xf32>, vector<8xf16>
  return
}

// -----

func.func @store_indices(%v: vector<8xf32>, %m: memref<8x8xf32>, %i: index) {
  // expected-error @+1 {{memref needs 2 indices, got 1}}
  tessera_tile.store %v, %m[%i] : vector<8xf32>, memref<8x8xf32>
  return
}

// -----

func.func @atomic_type(%v: i32, %m: memref<16xf32>, %i: index) {
  // expected-error @+1 {{value and result must have the element type 'f32'}}
  %o = tessera_tile.atomic_rmw add %v, %m[%i] scope = group : i32, memref<16xf32>
  return
}

// -----

func.func @atomic_scope(%v: f32, %m: memref<16xf32>, %i: index) {
  // expected-error @+1 {{expected}}
  %o = tessera_tile.atomic_rmw add %v, %m[%i] scope = warp : f32, memref<16xf32>
  return
}

// -----

func.func @math_unknown(%a: f32) {
  // expected-error @+1 {{unknown math function 'sin'}}
  %r = tessera_tile.math sin(%a) : f32
  return
}

// -----

func.func @subgroup_mma_m(%a: memref<2048xi16, 3>, %b: memref<2048xi16, 3>, %i: index, %c: vector<8xf32>) {
  // expected-error @+1 {{m must be a positive multiple of 16 and n of 8, got m = 24, n = 8}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 24 : i64, n = 8 : i64, lda = 16 : i64, ldb = 8 : i64, operand_type = bf16} : memref<2048xi16, 3>, memref<2048xi16, 3>, vector<8xf32>
  return
}

// -----

func.func @subgroup_mma_type(%a: memref<2048xi16, 3>, %b: memref<2048xi16, 3>, %i: index, %c: vector<4xf32>) {
  // expected-error @+1 {{operand_type must be bf16, f16 or i8, not 'f32'}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 8 : i64, lda = 16 : i64, ldb = 8 : i64, operand_type = f32} : memref<2048xi16, 3>, memref<2048xi16, 3>, vector<4xf32>
  return
}

// -----

func.func @subgroup_mma_global(%a: memref<2048xi16>, %b: memref<2048xi16, 3>, %i: index, %c: vector<4xf32>) {
  // expected-error @+1 {{a must be shared memory (space 3)}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 8 : i64, lda = 16 : i64, ldb = 8 : i64, operand_type = bf16} : memref<2048xi16>, memref<2048xi16, 3>, vector<4xf32>
  return
}

// -----

func.func @subgroup_mma_stride(%a: memref<2048xf16, 3>, %b: memref<2048xf16, 3>, %i: index, %c: vector<4xf32>) {
  // expected-error @+1 {{lda (20) must be >= 16 and ldb (8) >= n (8), both multiples of 8}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 8 : i64, lda = 20 : i64, ldb = 8 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16, 3>, vector<4xf32>
  return
}

// -----

func.func @subgroup_mma_elements(%a: memref<2048xf32, 3>, %b: memref<2048xi16, 3>, %i: index, %c: vector<4xf32>) {
  // expected-error @+1 {{a holds 'f32'; it must hold 'f16' or its bits (i16)}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 8 : i64, lda = 16 : i64, ldb = 8 : i64, operand_type = f16} : memref<2048xf32, 3>, memref<2048xi16, 3>, vector<4xf32>
  return
}

// -----

func.func @wave32_mma_shape(%a: memref<2048xf16, 3>, %b: memref<2048xf16, 3>, %i: index, %c: vector<12xf32>) {
  // expected-error @+1 {{m and n must be positive multiples of 16, got m = 24, n = 16}}
  %r = tessera_tile.wave32_mma %a[%i], %b[%i], %c {m = 24 : i64, n = 16 : i64, lda = 16 : i64, ldb = 16 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16, 3>, vector<12xf32>
  return
}

// -----

func.func @wave32_mma_elements(%a: memref<2048xf16, 3>, %b: memref<2048xf16, 3>, %i: index, %c: vector<16xf32>) {
  // expected-error @+1 {{a 16x16 tile is 8 f32 per lane, the accumulator has 16}}
  %r = tessera_tile.wave32_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 16 : i64, lda = 16 : i64, ldb = 16 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16, 3>, vector<16xf32>
  return
}

// -----

func.func @wave32_mma_i8_acc(%a: memref<2048xi8, 3>, %b: memref<2048xi8, 3>, %i: index, %c: vector<8xf32>) {
  // expected-error @+1 {{i8 operands accumulate in i32, not 'f32'}}
  %r = tessera_tile.wave32_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 16 : i64, lda = 16 : i64, ldb = 16 : i64, operand_type = i8} : memref<2048xi8, 3>, memref<2048xi8, 3>, vector<8xf32>
  return
}

// -----

func.func @wave32_mma_i8_elements(%a: memref<2048xi8, 3>, %b: memref<2048xi8, 3>, %i: index, %c: vector<16xi32>) {
  // expected-error @+1 {{a 16x16 tile is 8 i32 per lane, the accumulator has 16}}
  %r = tessera_tile.wave32_mma %a[%i], %b[%i], %c {m = 16 : i64, n = 16 : i64, lda = 16 : i64, ldb = 16 : i64, operand_type = i8} : memref<2048xi8, 3>, memref<2048xi8, 3>, vector<16xi32>
  return
}

// -----

func.func @wavefront_mma_shape(%a: memref<2048xi16, 3>, %b: memref<2048xi16, 3>, %i: index, %c: vector<24xf32>) {
  // expected-error @+1 {{m and n must be positive multiples of 32, got m = 48, n = 32}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 48 : i64, n = 32 : i64, lda = 8 : i64, ldb = 32 : i64, operand_type = bf16} : memref<2048xi16, 3>, memref<2048xi16, 3>, vector<24xf32>
  return
}

// -----

func.func @wavefront_mma_stride(%a: memref<2048xf16, 3>, %b: memref<2048xf16, 3>, %i: index, %c: vector<16xf32>) {
  // expected-error @+1 {{lda (10) must be >= 8 and ldb (32) >= n (32), both multiples of 4}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 32 : i64, n = 32 : i64, lda = 10 : i64, ldb = 32 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16, 3>, vector<16xf32>
  return
}

// -----

func.func @wavefront_mma_elements(%a: memref<2048xf16, 3>, %b: memref<2048xf16, 3>, %i: index, %c: vector<32xf32>) {
  // expected-error @+1 {{a 32x32 tile is 16 f32 per lane, the accumulator has 32}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 32 : i64, n = 32 : i64, lda = 8 : i64, ldb = 32 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16, 3>, vector<32xf32>
  return
}

// -----

func.func @wavefront_mma_global(%a: memref<2048xf16, 3>, %b: memref<2048xf16>, %i: index, %c: vector<16xf32>) {
  // expected-error @+1 {{b must be shared memory (space 3)}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 32 : i64, n = 32 : i64, lda = 8 : i64, ldb = 32 : i64, operand_type = f16} : memref<2048xf16, 3>, memref<2048xf16>, vector<16xf32>
  return
}

// -----

func.func @subgroup_mma_acc(%a: memref<4096xi16, 3>, %b: memref<4096xi16, 3>, %i: index, %c: vector<16xf32>) {
  // expected-error @+1 {{a 64x32 tile is 64 f32 per lane, the accumulator has 16}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 40 : i64, operand_type = bf16} : memref<4096xi16, 3>, memref<4096xi16, 3>, vector<16xf32>
  return
}

// -----

func.func @alignment() {
  // expected-error @+1 {{alignment must be 0 or a power of two from the element's 4 bytes to 1024, got 2}}
  %a = tessera_tile.shared_alloc alignment = 2 : memref<16xf32, 3>
  return
}

// -----

func.func @alignment_big() {
  // expected-error @+1 {{alignment must be 0 or a power of two from the element's 2 bytes to 1024, got 2048}}
  %a = tessera_tile.shared_alloc alignment = 2048 : memref<16xi16, 3>
  return
}

// -----

func.func @warpgroup_mma_n(%a: memref<8192xi16, 3>, %b: memref<8192xi16, 3>, %i: index, %c: vector<48xf32>) {
  // expected-error @+1 {{n must be 64, 128, 192 or 256, got 96}}
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 96 : i64, k = 64 : i64, b_block_stride = 4096 : i64, operand_type = bf16} : memref<8192xi16, 3>, memref<8192xi16, 3>, vector<48xf32>
  return
}

// -----

func.func @warpgroup_mma_k(%a: memref<8192xi16, 3>, %b: memref<8192xi16, 3>, %i: index, %c: vector<32xf32>) {
  // expected-error @+1 {{k must be 16, 32, 48 or 64, got 24}}
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 64 : i64, k = 24 : i64, b_block_stride = 4096 : i64, operand_type = bf16} : memref<8192xi16, 3>, memref<8192xi16, 3>, vector<32xf32>
  return
}

// -----

func.func @warpgroup_mma_stride(%a: memref<8192xi16, 3>, %b: memref<8192xi16, 3>, %i: index, %c: vector<32xf32>) {
  // expected-error @+1 {{b_block_stride (2048) must be a multiple of 512 (1024 bytes) and at least 64*k = 4096 (a block of k rows of 64 columns)}}
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 64 : i64, k = 64 : i64, b_block_stride = 2048 : i64, operand_type = bf16} : memref<8192xi16, 3>, memref<8192xi16, 3>, vector<32xf32>
  return
}

// -----

func.func @warpgroup_mma_acc(%a: memref<8192xi16, 3>, %b: memref<8192xi16, 3>, %i: index, %c: vector<64xf32>) {
  // expected-error @+1 {{a 64x64 tile is 32 f32 per lane, the accumulator has 64}}
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 64 : i64, k = 64 : i64, b_block_stride = 4096 : i64, operand_type = f16} : memref<8192xi16, 3>, memref<8192xi16, 3>, vector<64xf32>
  return
}

// -----

func.func @warpgroup_mma_global(%a: memref<8192xi16, 3>, %b: memref<8192xf16>, %i: index, %c: vector<32xf32>) {
  // expected-error @+1 {{b must be shared memory (space 3)}}
  %r = tessera_tile.warpgroup_mma %a[%i], %b[%i], %c {n = 64 : i64, k = 64 : i64, b_block_stride = 4096 : i64, operand_type = f16} : memref<8192xi16, 3>, memref<8192xf16>, vector<32xf32>
  return
}

// -----

func.func @tile_load_cols(%g: memref<262144xbf16>, %t: memref<16384xbf16, 3>, %i: index) {
  // expected-error @+1 {{cols must be 64 (one 128-byte swizzled row), got 32}}
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %i {rows = 128 : i64, cols = 32 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<16384xbf16, 3>
  return
}

// -----

func.func @tile_load_view(%g: memref<262144xbf16>, %t: memref<16384xbf16, 3>, %i: index) {
  // expected-error @+1 {{the source (262144 elements) must be source_rows (256) >= rows x ld (512) elements}}
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %i {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 256 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<16384xbf16, 3>
  return
}

// -----

func.func @tile_load_types(%g: memref<262144xf32>, %t: memref<16384xbf16, 3>, %i: index) {
  // expected-error @+1 {{copies 16-bit elements between buffers of one type; source holds 'f32', target 'bf16'}}
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %i {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xf32>, memref<16384xbf16, 3>
  return
}

// -----

func.func @tile_load_small_target(%g: memref<262144xbf16>, %t: memref<4096xbf16, 3>, %i: index) {
  // expected-error @+1 {{the target holds 4096 elements; the box is 8192}}
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %i {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<4096xbf16, 3>
  return
}

// -----

func.func @tile_load_global_target(%g: memref<262144xbf16>, %t: memref<16384xbf16>, %i: index) {
  // expected-error @+1 {{target must be a static 1-D shared buffer (space 3)}}
  tessera_tile.tile_load_async %g[%i, %i], %t[%i] stage %i {rows = 128 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64} : memref<262144xbf16>, memref<16384xbf16>
  return
}

// -----

func.func @acquire_releasers(%s: index) {
  // expected-error @+1 {{releasers must be a multiple of 32 (whole subgroups release a stage) in 32..1024, got 100}}
  tessera_tile.tile_load_acquire stage %s phase %s {releasers = 100 : i64, stages = 2 : i64}
  return
}

// -----

func.func @release_stages(%s: index) {
  // expected-error @+1 {{stages must be at least 1}}
  tessera_tile.tile_load_release stage %s {stages = 0 : i64}
  return
}

// -----

func.func @register_budget() {
  // expected-error @+1 {{registers must be a multiple of 8 in 24..256, got 20}}
  tessera_tile.set_max_registers {registers = 20 : i64}
  return
}

// -----

func.func @mma_wait_pending(%acc: vector<64xf32>) -> vector<64xf32> {
  // expected-error @+1 {{pending must be 0..7 (wgmma groups in flight), got 8}}
  %w = tessera_tile.warpgroup_mma_wait %acc {pending = 8 : i64} : vector<64xf32>
  return %w : vector<64xf32>
}

// -----

func.func @subgroup_mma_f32(%a: memref<10240xf32, 3>, %b: memref<8704xf32, 3>, %i: index, %c: vector<64xf32>) {
  // expected-error @+1 {{operand_type must be bf16, f16 or i8, not 'f32'}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 136 : i64, operand_type = f32} : memref<10240xf32, 3>, memref<8704xf32, 3>, vector<64xf32>
  return
}

// -----

func.func @wavefront_mma_f32_bits(%a: memref<4096xi16, 3>, %b: memref<4096xi16, 3>, %i: index, %c: vector<64xf32>) {
  // expected-error @+1 {{a holds 'i16'; it must hold 'f32'}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 64 : i64, lda = 64 : i64, ldb = 64 : i64, operand_type = f32} : memref<4096xi16, 3>, memref<4096xi16, 3>, vector<64xf32>
  return
}

// -----

func.func @wavefront_mma_i8_f32_acc(%a: memref<4096xi8, 3>, %b: memref<4096xi8, 3>, %i: index, %c: vector<64xf32>) {
  // expected-error @+1 {{i8 operands accumulate in i32, not 'f32'}}
  %r = tessera_tile.wavefront_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 64 : i64, lda = 64 : i64, ldb = 64 : i64, operand_type = i8} : memref<4096xi8, 3>, memref<4096xi8, 3>, vector<64xf32>
  return
}

// -----

func.func @subgroup_mma_i8_f32_acc(%a: memref<4096xi8, 3>, %b: memref<4096xi8, 3>, %i: index, %c: vector<64xf32>) {
  // expected-error @+1 {{i8 operands accumulate in i32, not 'f32'}}
  %r = tessera_tile.subgroup_mma %a[%i], %b[%i], %c {m = 64 : i64, n = 32 : i64, lda = 48 : i64, ldb = 48 : i64, operand_type = i8} : memref<4096xi8, 3>, memref<4096xi8, 3>, vector<64xf32>
  return
}

// -----

// A lane vector of 2^20 elements made the GPU compiles run for minutes and
// gigabytes (the lowerings unroll it).
func.func @lane_vector_too_long(%x: memref<1048576xf32>, %i: index) {
  // expected-error @+1 {{moves a 'vector<1048576xf32>' per lane; a lane moves at most 1024 elements at once}}
  %v = tessera_tile.load %x[%i] : memref<1048576xf32>, vector<1048576xf32>
  return
}
