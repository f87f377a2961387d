// The data-movement ops of Graph IR (docs/ir.md): splitting a [tokens,
// hidden] activation into attention heads (reshape + transpose), a strided
// slice, broadcast_in_dim into any dims, and an additive causal mask built
// from iota (0 where key <= query, -1e9 above the diagonal). Each shape op
// copies bits; verified exactly against the reference interpreter:
//
//   tessera-run examples/shapes.mlir --tolerance 0
//   TESSERA_BACKEND=vulkan tessera-run examples/shapes.mlir --tolerance 0
func.func @shapes(%x: tensor<16x96xf32>, %v: tensor<4xf32>, %h: tensor<16x96xbf16>)
    -> (tensor<4x16x24xf32>, tensor<8x12xf32>, tensor<4x3x5xf32>, tensor<16x16xf32>, tensor<24x4x16xbf16>, tensor<3x16xi32>) {
  %r = tessera_graph.reshape %x : tensor<16x96xf32> -> tensor<16x4x24xf32>
  %heads = tessera_graph.transpose %r perm = [1, 0, 2] : tensor<16x4x24xf32> -> tensor<4x16x24xf32>
  %s = tessera_graph.slice %x offsets = [1, 3] strides = [2, 8] : tensor<16x96xf32> -> tensor<8x12xf32>
  %b = tessera_graph.broadcast_in_dim %v dims = [0] : tensor<4xf32> -> tensor<4x3x5xf32>
  // causal mask: min(relu(key - query), 1) * -1e9
  %q = tessera_graph.iota dim = 0 : tensor<16x16xf32>
  %k = tessera_graph.iota dim = 1 : tensor<16x16xf32>
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  %big = arith.constant dense<-1.0e9> : tensor<16x16xf32>
  %d = tessera_graph.sub %k, %q : tensor<16x16xf32>, tensor<16x16xf32>
  %p = tessera_graph.relu %d : tensor<16x16xf32>
  %m = tessera_graph.min %p, %one : tensor<16x16xf32>, tensor<16x16xf32>
  %mask = tessera_graph.mul %m, %big : tensor<16x16xf32>, tensor<16x16xf32>
  // bf16 moves bit for bit; a permutation of three dims
  %hr = tessera_graph.reshape %h : tensor<16x96xbf16> -> tensor<16x4x24xbf16>
  %ht = tessera_graph.transpose %hr perm = [2, 1, 0] : tensor<16x4x24xbf16> -> tensor<24x4x16xbf16>
  %io = tessera_graph.iota dim = 1 : tensor<3x16xi32>
  return %heads, %s, %b, %mask, %ht, %io : tensor<4x16x24xf32>, tensor<8x12xf32>, tensor<4x3x5xf32>,
      tensor<16x16xf32>, tensor<24x4x16xbf16>, tensor<3x16xi32>
}

// bf16 through a layout conversion and back on the cpu: the copy goes
// through f32 (LLVM 16 crashed on a bare bf16 load + store).
func.func @bf16_layout(%h: tensor<16x96xbf16>) -> tensor<16x96xbf16> {
  %c = tessera_graph.convert_layout %h : tensor<16x96xbf16> -> tensor<16x96xbf16, #tessera_graph.layout<col_major>>
  %r = tessera_graph.convert_layout %c : tensor<16x96xbf16, #tessera_graph.layout<col_major>> -> tensor<16x96xbf16>
  return %r : tensor<16x96xbf16>
}

// An embedding lookup: rows of a [V, D] table by i32 token ids. tessera-run's
// random i32 inputs lie in [-8, 8], so with V = 6 rows some ids are out of
// range: they are clamped to rows 0 and 5 (docs/ir.md), never read outside.
func.func @embedding(%wte: tensor<6x32xf32>, %tokens: tensor<4x16xi32>, %wpe: tensor<16x32xf32>) -> tensor<4x16x32xf32> {
  %e = tessera_graph.gather %wte, %tokens : tensor<6x32xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  %x = tessera_graph.add %e, %wpe : tensor<4x16x32xf32>, tensor<16x32xf32>
  return %x : tensor<4x16x32xf32>
}

// concat along any dim, pad with a constant on both sides, and argmax (the
// first strictly greatest; i32) along the last and a middle dim, in f32 and
// bf16.
func.func @concat_pad_argmax(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>, %c: tensor<2x8xf32>, %h: tensor<4x8xbf16>, %t: tensor<3x5x7xf32>)
    -> (tensor<4x11xf32>, tensor<6x8xf32>, tensor<7x10xf32>, tensor<4x11xbf16>, tensor<4xi32>, tensor<3x7xi32>, tensor<4xi32>) {
  %ab = tessera_graph.concat %a, %b dim = 1 : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x11xf32>
  %ac = tessera_graph.concat %a, %c dim = 0 : tensor<4x8xf32>, tensor<2x8xf32> -> tensor<6x8xf32>
  %p = tessera_graph.pad %a low = [1, 0] high = [2, 2] value = -2.5 : tensor<4x8xf32> -> tensor<7x10xf32>
  %hb = tessera_graph.cast %b : tensor<4x3xf32> -> tensor<4x3xbf16>
  %hh = tessera_graph.concat %h, %hb dim = 1 : tensor<4x8xbf16>, tensor<4x3xbf16> -> tensor<4x11xbf16>
  %m = tessera_graph.argmax %ab dim = 1 : tensor<4x11xf32> -> tensor<4xi32>
  %m3 = tessera_graph.argmax %t dim = 1 : tensor<3x5x7xf32> -> tensor<3x7xi32>
  %mh = tessera_graph.argmax %h dim = 1 : tensor<4x8xbf16> -> tensor<4xi32>
  return %ab, %ac, %p, %hh, %m, %m3, %mh : tensor<4x11xf32>, tensor<6x8xf32>, tensor<7x10xf32>, tensor<4x11xbf16>,
      tensor<4xi32>, tensor<3x7xi32>, tensor<4xi32>
}
