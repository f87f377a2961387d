// RUN: tessera-opt %s | tessera-opt | FileCheck %s

// CHECK: tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 4]
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 4]

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%a: tensor<64x32xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = ["tp"], reduce = []>},
                   %b: tensor<32x16xf32>, %bias: tensor<16xf32>, %h: tensor<64x32xbf16>, %q: tensor<64x32xf8E4M3FN>, %qb: tensor<32x16xf8E4M3FN>) {
  // CHECK: tessera_graph.matmul %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %c = tessera_graph.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  // CHECK: tessera_graph.matmul {{.*}} -> tensor<64x16xf32>
  %c8 = tessera_graph.matmul %q, %qb : tensor<64x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<64x16xf32>
  // The accumulator as a stated policy.
  // CHECK: tessera_graph.matmul %{{.*}}, %{{.*}} {accum = f32} : tensor<64x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<64x16xf32>
  %c8a = tessera_graph.matmul %q, %qb {accum = f32} : tensor<64x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<64x16xf32>
  // fp8 e5m2 (gradients) times e4m3 (weights), f32 accumulation; casts to e5m2.
  // CHECK: tessera_graph.matmul %{{.*}}, %{{.*}} {accum = f32} : tensor<64x32xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<64x16xf32>
  %g5 = tessera_graph.cast %a : tensor<64x32xf32> -> tensor<64x32xf8E5M2>
  %c85 = tessera_graph.matmul %g5, %qb {accum = f32} : tensor<64x32xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<64x16xf32>
  // CHECK: tessera_graph.cast %{{.*}} {rounding = "stochastic", seed = 3 : i64} : tensor<64x32xf32> -> tensor<64x32xf8E5M2>
  %sr5 = tessera_graph.cast %a {rounding = "stochastic", seed = 3} : tensor<64x32xf32> -> tensor<64x32xf8E5M2>
  // CHECK: tessera_graph.cast %{{.*}} {rounding = "stochastic", seed = 42 : i64} : tensor<64x32xf32> -> tensor<64x32xbf16>
  %sr = tessera_graph.cast %a {rounding = "stochastic", seed = 42} : tensor<64x32xf32> -> tensor<64x32xbf16>
  // An SPMD part keyed by its global index: the device's position and the
  // global strides.
  // CHECK: %[[POS:.*]] = tessera_graph.mesh_position @mesh : tensor<1xi32>
  %pos = tessera_graph.mesh_position @mesh : tensor<1xi32>
  // CHECK: tessera_graph.cast %{{.*}}, %[[POS]] {global_strides = array<i64: 32, 1>, mesh_offsets = array<i64: 2048, 0>, mesh_shape = array<i64: 2, 4>, rounding = "stochastic", seed = 42 : i64} : tensor<64x32xf32>, tensor<1xi32> -> tensor<64x32xbf16>
  %srg = tessera_graph.cast %a, %pos {rounding = "stochastic", seed = 42, global_strides = array<i64: 32, 1>, mesh_shape = array<i64: 2, 4>, mesh_offsets = array<i64: 2048, 0>} : tensor<64x32xf32>, tensor<1xi32> -> tensor<64x32xbf16>
  // CHECK: tessera_graph.reduce sum %{{.*}} dims = [0] order = pairwise {accum = f32} : tensor<64x32xbf16> -> tensor<32xbf16>
  %hs = tessera_graph.reduce sum %h dims = [0] order = pairwise {accum = f32} : tensor<64x32xbf16> -> tensor<32xbf16>
  // CHECK: tessera_graph.add
  %d = tessera_graph.add %c, %bias : tensor<64x16xf32>, tensor<16xf32>
  %e = tessera_graph.sub %d, %c : tensor<64x16xf32>, tensor<64x16xf32>
  %f = tessera_graph.mul %e, %bias : tensor<64x16xf32>, tensor<16xf32>
  %g = tessera_graph.div %f, %c : tensor<64x16xf32>, tensor<64x16xf32>
  %m = tessera_graph.max %g, %c : tensor<64x16xf32>, tensor<64x16xf32>
  // CHECK: tessera_graph.exp
  %x = tessera_graph.exp %m : tensor<64x16xf32>
  %r = tessera_graph.relu %x : tensor<64x16xf32>
  %ge = tessera_graph.gelu %r : tensor<64x16xf32>
  // CHECK: tessera_graph.cast %{{.*}} : tensor<64x32xbf16> -> tensor<64x32xf32>
  %ca = tessera_graph.cast %h : tensor<64x32xbf16> -> tensor<64x32xf32>
  // CHECK: tessera_graph.reduce sum %{{.*}} dims = [1] order = pairwise
  %s = tessera_graph.reduce sum %ge dims = [1] order = pairwise : tensor<64x16xf32> -> tensor<64xf32>
  // CHECK: tessera_graph.reduce max %{{.*}} order = sequential
  %s2 = tessera_graph.reduce max %ge dims = [0, 1] order = sequential : tensor<64x16xf32> -> tensor<f32>
  // CHECK: tessera_graph.softmax %{{.*}} dim = 1
  %p = tessera_graph.softmax %ge dim = 1 : tensor<64x16xf32>
  // CHECK: tensor<64x16xf32, #tessera_graph.layout<blocked<16, 16>>>
  %l1 = tessera_graph.convert_layout %p : tensor<64x16xf32> -> tensor<64x16xf32, #tessera_graph.layout<blocked<16, 16>>>
  // CHECK: #tessera_graph.layout<tiled<[16, 8], [4, 4]>>
  %l2 = tessera_graph.convert_layout %p : tensor<64x16xf32> -> tensor<64x16xf32, #tessera_graph.layout<tiled<[16, 8], [4, 4]>>>
  // CHECK: #tessera_graph.layout<col_major>
  %l3 = tessera_graph.convert_layout %p : tensor<64x16xf32> -> tensor<64x16xf32, #tessera_graph.layout<col_major>>
  // CHECK: #tessera_graph.layout<interleaved<4>>
  %l4 = tessera_graph.convert_layout %p : tensor<64x16xf32> -> tensor<64x16xf32, #tessera_graph.layout<interleaved<4>>>
  // CHECK: tessera_graph.all_reduce sum %{{.*}} over @mesh ["tp"]
  %ar = tessera_graph.all_reduce sum %s over @mesh ["tp"] : tensor<64xf32> -> tensor<64xf32>
  // CHECK: tessera_graph.broadcast %{{.*}} over @mesh ["dp"] root = 1
  %bc = tessera_graph.broadcast %s over @mesh ["dp"] root = 1 : tensor<64xf32> -> tensor<64xf32>
  // CHECK: tessera_graph.all_gather {{.*}} dim = 0 : tensor<64x16xf32> -> tensor<256x16xf32>
  %ag = tessera_graph.all_gather %p over @mesh ["tp"] dim = 0 : tensor<64x16xf32> -> tensor<256x16xf32>
  // CHECK: tessera_graph.reduce_scatter sum {{.*}} -> tensor<16x16xf32>
  %rs = tessera_graph.reduce_scatter sum %p over @mesh ["tp"] dim = 0 : tensor<64x16xf32> -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func @elementwise_and_norms
func.func @elementwise_and_norms(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>, %r: tensor<1x8xf32>, %g: tensor<8xf32>, %i: tensor<4x8xi32>) {
  // CHECK: tessera_graph.sub %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>{{$}}
  %a = tessera_graph.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32>
  // CHECK: tessera_graph.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %b = tessera_graph.add %m, %r : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  // CHECK: tessera_graph.min
  %c = tessera_graph.min %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: tessera_graph.pow
  %d = tessera_graph.pow %a, %g : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: tessera_graph.neg
  %e0 = tessera_graph.neg %x : tensor<4x8xf32>
  // CHECK: tessera_graph.abs
  %e1 = tessera_graph.abs %i : tensor<4x8xi32>
  // CHECK: tessera_graph.sqrt
  %e2 = tessera_graph.sqrt %x : tensor<4x8xf32>
  // CHECK: tessera_graph.rsqrt
  %e3 = tessera_graph.rsqrt %x : tensor<4x8xf32>
  // CHECK: tessera_graph.log
  %e4 = tessera_graph.log %x : tensor<4x8xf32>
  // CHECK: tessera_graph.tanh
  %e5 = tessera_graph.tanh %x : tensor<4x8xf32>
  // CHECK: tessera_graph.sigmoid
  %e6 = tessera_graph.sigmoid %x : tensor<4x8xf32>
  // CHECK: tessera_graph.erf
  %e7 = tessera_graph.erf %x : tensor<4x8xf32>
  // CHECK: tessera_graph.silu
  %e8 = tessera_graph.silu %x : tensor<4x8xf32>
  // CHECK: tessera_graph.gelu %{{.*}} : tensor<4x8xf32>
  %e9 = tessera_graph.gelu %x : tensor<4x8xf32>
  // CHECK: tessera_graph.gelu %{{.*}} {approximate = "none"} : tensor<4x8xf32>
  %e10 = tessera_graph.gelu %x {approximate = "none"} : tensor<4x8xf32>
  // CHECK: tessera_graph.reduce mean %{{.*}} dims = [1] order = pairwise : tensor<4x8xf32> -> tensor<4x1xf32>
  %f = tessera_graph.reduce mean %x dims = [1] order = pairwise : tensor<4x8xf32> -> tensor<4x1xf32>
  // CHECK: tessera_graph.reduce min %{{.*}} dims = [0, 1] order = sequential : tensor<4x8xi32> -> tensor<i32>
  %h = tessera_graph.reduce min %i dims = [0, 1] order = sequential : tensor<4x8xi32> -> tensor<i32>
  // CHECK: tessera_graph.layernorm %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %ln = tessera_graph.layernorm %x, %g, %g : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: tessera_graph.rmsnorm %{{.*}}, %{{.*}} {epsilon = {{.*}} : f32} : tensor<4x8xf32>, tensor<8xf32>
  %rn = tessera_graph.rmsnorm %x, %g {epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// CHECK-LABEL: func @shape_ops
func.func @shape_ops(%x: tensor<16x96xf32>, %v: tensor<4xf32>) {
  // CHECK: tessera_graph.reshape %{{.*}} : tensor<16x96xf32> -> tensor<16x4x24xf32>
  %r = tessera_graph.reshape %x : tensor<16x96xf32> -> tensor<16x4x24xf32>
  // CHECK: tessera_graph.transpose %{{.*}} perm = [1, 0, 2] : tensor<16x4x24xf32> -> tensor<4x16x24xf32>
  %t = tessera_graph.transpose %r perm = [1, 0, 2] : tensor<16x4x24xf32> -> tensor<4x16x24xf32>
  // CHECK: tessera_graph.slice %{{.*}} offsets = [1, 3] strides = [2, 8] : tensor<16x96xf32> -> tensor<8x12xf32>
  %s = tessera_graph.slice %x offsets = [1, 3] strides = [2, 8] : tensor<16x96xf32> -> tensor<8x12xf32>
  // CHECK: tessera_graph.broadcast_in_dim %{{.*}} dims = [0] : tensor<4xf32> -> tensor<4x3x5xf32>
  %b = tessera_graph.broadcast_in_dim %v dims = [0] : tensor<4xf32> -> tensor<4x3x5xf32>
  // CHECK: tessera_graph.gather %{{.*}}, %{{.*}} : tensor<16x96xf32>, tensor<3x16xi32> -> tensor<3x16x96xf32>
  %ids = tessera_graph.iota dim = 1 : tensor<3x16xi32>
  %g = tessera_graph.gather %x, %ids : tensor<16x96xf32>, tensor<3x16xi32> -> tensor<3x16x96xf32>
  // CHECK: tessera_graph.iota dim = 1 : tensor<3x16xi32>
  %i = tessera_graph.iota dim = 1 : tensor<3x16xi32>
  // CHECK: tessera_graph.concat %{{.*}}, %{{.*}} dim = 0 : tensor<16x96xf32>, tensor<16x96xf32> -> tensor<32x96xf32>
  %cc = tessera_graph.concat %x, %x dim = 0 : tensor<16x96xf32>, tensor<16x96xf32> -> tensor<32x96xf32>
  // CHECK: tessera_graph.pad %{{.*}} low = [1, 0] high = [0, 2] value = -1.500000e+00 : tensor<16x96xf32> -> tensor<17x98xf32>
  %pd = tessera_graph.pad %x low = [1, 0] high = [0, 2] value = -1.5 : tensor<16x96xf32> -> tensor<17x98xf32>
  // CHECK: tessera_graph.argmax %{{.*}} dim = 1 : tensor<16x96xf32> -> tensor<16xi32>
  %am = tessera_graph.argmax %x dim = 1 : tensor<16x96xf32> -> tensor<16xi32>
  return
}


// CHECK-LABEL: func @compare_select
func.func @compare_select(%x: tensor<4x8xf32>, %r: tensor<8xf32>, %i: tensor<4x8xi32>, %j: tensor<4x1xi32>,
                          %h: tensor<4x8xbf16>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  // CHECK: tessera_graph.compare lt %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %c0 = tessera_graph.compare lt %x, %r : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  // CHECK: tessera_graph.compare eq
  %c1 = tessera_graph.compare eq %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: tessera_graph.compare ne
  %c2 = tessera_graph.compare ne %i, %j : tensor<4x8xi32>, tensor<4x1xi32> -> tensor<4x8xi1>
  // CHECK: tessera_graph.compare le
  %c3 = tessera_graph.compare le %h, %h : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xi1>
  // CHECK: tessera_graph.compare gt
  %c4 = tessera_graph.compare gt %i, %j : tensor<4x8xi32>, tensor<4x1xi32> -> tensor<4x8xi1>
  // CHECK: tessera_graph.compare ge
  %c5 = tessera_graph.compare ge %r, %x : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // i1 operands: eq and ne
  // CHECK: tessera_graph.compare ne %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %c6 = tessera_graph.compare ne %c0, %c1 : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  // CHECK: tessera_graph.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>{{$}}
  %y = tessera_graph.select %c0, %x, %r : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  // CHECK: tessera_graph.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %z = tessera_graph.select %c2, %s, %y : tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: tessera_graph.select {{.*}} : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>{{$}}
  %w = tessera_graph.select %c3, %c4, %c5 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
  // casts to and from i1
  // CHECK: tessera_graph.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xf32>
  %f = tessera_graph.cast %w : tensor<4x8xi1> -> tensor<4x8xf32>
  // CHECK: tessera_graph.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xi1>
  %b = tessera_graph.cast %i : tensor<4x8xi32> -> tensor<4x8xi1>
  // data movement keeps i1
  // CHECK: tessera_graph.transpose %{{.*}} perm = [1, 0] : tensor<4x8xi1> -> tensor<8x4xi1>
  %t = tessera_graph.transpose %b perm = [1, 0] : tensor<4x8xi1> -> tensor<8x4xi1>
  %v = tessera_graph.add %z, %f : tensor<4x8xf32>, tensor<4x8xf32>
  return %v, %c6 : tensor<4x8xf32>, tensor<4x8xi1>
}

// int8 storage: quantize per tensor and per channel, dequantize of i8 and
// of an i8 x i8 -> i32 matmul's accumulator.
// CHECK-LABEL: func.func @quantization
func.func @quantization(%x: tensor<4x8xf32>, %s: tensor<1xf32>, %w: tensor<8x6xf32>, %ws: tensor<6xf32>)
    -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  // CHECK: tessera_graph.quantize %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xi8>
  %q = tessera_graph.quantize %x, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xi8>
  // CHECK: tessera_graph.quantize %{{.*}}, %{{.*}} axis = 1 : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xi8>
  %w8 = tessera_graph.quantize %w, %ws axis = 1 : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xi8>
  // CHECK: tessera_graph.dequantize %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<1xf32> -> tensor<4x8xf32>
  %d = tessera_graph.dequantize %q, %s : tensor<4x8xi8>, tensor<1xf32> -> tensor<4x8xf32>
  %acc = tessera_graph.matmul %q, %w8 : tensor<4x8xi8>, tensor<8x6xi8> -> tensor<4x6xi32>
  // CHECK: tessera_graph.dequantize %{{.*}}, %{{.*}} axis = 1 : tensor<4x6xi32>, tensor<6xf32> -> tensor<4x6xf32>
  %y = tessera_graph.dequantize %acc, %ws axis = 1 : tensor<4x6xi32>, tensor<6xf32> -> tensor<4x6xf32>
  return %d, %y : tensor<4x8xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<2x64x16xf32>, %kt: tensor<2x16x80xf32>, %v: tensor<2x80x8xf32>,
                          %o: tensor<2x64x8xf32>, %do: tensor<2x64x8xf32>)
    -> (tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = tessera_graph.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 causal : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>, tensor<2x64x8xf32>, tensor<2x64x8xf32>
  %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.25 causal
      : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>, tensor<2x64x8xf32>, tensor<2x64x8xf32>
  return %dq, %dkt, %dv : tensor<2x64x16xf32>, tensor<2x16x80xf32>, tensor<2x80x8xf32>
}
