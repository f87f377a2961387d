// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @micro(%x: tensor<96x64xf32>) -> tensor<96x64xf32> {
  // expected-error @+1 {{micro tile [5, 16] does not divide the cache tile [96, 256]}}
  %y = tessera_schedule.tile (%x) tile_sizes = [96, 256, 256] micro_tile = [5, 16] {
  ^bb0(%a: tensor<96x64xf32>):
    tessera_schedule.yield %a : tensor<96x64xf32>
  } : (tensor<96x64xf32>) -> tensor<96x64xf32>
  return %y : tensor<96x64xf32>
}

// -----

func.func @no_pipeline(%a: memref<512xf32>, %k: index) {
  // expected-error @+1 {{double_buffer needs an enclosing tessera_schedule.pipeline}}
  %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
  return
}

// -----

func.func @divide(%a: memref<500xf32>, %k: index) {
  // expected-error @+1 {{tile dimension 0 (64) does not divide the source dimension (500)}}
  %t = tessera_schedule.prefetch %a[%k] scope = "shared" : memref<500xf32> -> memref<64xf32, 3>
  return
}

// -----

func.func @copy(%a: memref<64xf32>, %b: memref<32xf32>) {
  // expected-error @+1 {{must have the same shape and element type}}
  tessera_schedule.copy %a, %b : memref<64xf32>, memref<32xf32>
  return
}
