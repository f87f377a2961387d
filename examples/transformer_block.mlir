// A pre-norm GPT-2 decoder block at GPT-2 small's sizes (sequence 256,
// hidden 768, 12 heads of 64, MLP 3072), written with Graph IR ops only:
//
//   x1 = x + Wo . attention(causal, heads(Wqkv . layernorm(x)))
//   y  = x1 + W2 . gelu(W1 . layernorm(x1))
//
// @transformer_block_bf16 is the same block on bf16 storage: matmuls
// accumulate in f32 and round once, norms and softmax compute in f32, every
// op's result is rounded to bf16 (docs/ir.md, "Element types").
//
// @embedded_block (at the end) puts token and position embeddings before
// the f32 block.
//
// Every op is checked against the reference interpreter:
//   tessera-run examples/transformer_block.mlir --iterations 3
//   tessera-run examples/transformer_block.mlir --kernel transformer_block_bf16
//   TESSERA_BACKEND=vulkan tessera-run examples/transformer_block.mlir --iterations 1
func.func @transformer_block(%x: tensor<256x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %w_qkv: tensor<768x2304xf32>, %b_qkv: tensor<2304xf32>,
    %w_o: tensor<768x768xf32>, %b_o: tensor<768xf32>,
    %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>,
    %w_1: tensor<768x3072xf32>, %b_1: tensor<3072xf32>,
    %w_2: tensor<3072x768xf32>, %b_2: tensor<768xf32>) -> tensor<256x768xf32> {
  // attention
  %h = tessera_graph.layernorm %x, %ln1_g, %ln1_b : tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>
  %qkv0 = tessera_graph.matmul %h, %w_qkv : tensor<256x768xf32>, tensor<768x2304xf32> -> tensor<256x2304xf32>
  %qkv = tessera_graph.add %qkv0, %b_qkv : tensor<256x2304xf32>, tensor<2304xf32>
  %q2 = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<256x2304xf32> -> tensor<256x768xf32>
  %k2 = tessera_graph.slice %qkv offsets = [0, 768] strides = [1, 1] : tensor<256x2304xf32> -> tensor<256x768xf32>
  %v2 = tessera_graph.slice %qkv offsets = [0, 1536] strides = [1, 1] : tensor<256x2304xf32> -> tensor<256x768xf32>
  %q3 = tessera_graph.reshape %q2 : tensor<256x768xf32> -> tensor<256x12x64xf32>
  %k3 = tessera_graph.reshape %k2 : tensor<256x768xf32> -> tensor<256x12x64xf32>
  %v3 = tessera_graph.reshape %v2 : tensor<256x768xf32> -> tensor<256x12x64xf32>
  %q = tessera_graph.transpose %q3 perm = [1, 0, 2] : tensor<256x12x64xf32> -> tensor<12x256x64xf32>
  %kt = tessera_graph.transpose %k3 perm = [1, 2, 0] : tensor<256x12x64xf32> -> tensor<12x64x256xf32>
  %v = tessera_graph.transpose %v3 perm = [1, 0, 2] : tensor<256x12x64xf32> -> tensor<12x256x64xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<12x256x64xf32>, tensor<12x64x256xf32> -> tensor<12x256x256xf32>
  %scale = arith.constant dense<0.125> : tensor<12x256x256xf32>
  %s1 = tessera_graph.mul %s0, %scale : tensor<12x256x256xf32>, tensor<12x256x256xf32>
  // causal mask: -1e9 where key > query
  %qi = tessera_graph.iota dim = 0 : tensor<256x256xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<256x256xf32>
  %one = arith.constant dense<1.0> : tensor<256x256xf32>
  %big = arith.constant dense<-1.0e9> : tensor<256x256xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<256x256xf32>, tensor<256x256xf32>
  %above = tessera_graph.relu %d : tensor<256x256xf32>
  %m = tessera_graph.min %above, %one : tensor<256x256xf32>, tensor<256x256xf32>
  %mask = tessera_graph.mul %m, %big : tensor<256x256xf32>, tensor<256x256xf32>
  %s2 = tessera_graph.add %s1, %mask : tensor<12x256x256xf32>, tensor<256x256xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<12x256x256xf32>
  %o = tessera_graph.matmul %p, %v : tensor<12x256x256xf32>, tensor<12x256x64xf32> -> tensor<12x256x64xf32>
  %o3 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<12x256x64xf32> -> tensor<256x12x64xf32>
  %o2 = tessera_graph.reshape %o3 : tensor<256x12x64xf32> -> tensor<256x768xf32>
  %a0 = tessera_graph.matmul %o2, %w_o : tensor<256x768xf32>, tensor<768x768xf32> -> tensor<256x768xf32>
  %a = tessera_graph.add %a0, %b_o : tensor<256x768xf32>, tensor<768xf32>
  %x1 = tessera_graph.add %x, %a : tensor<256x768xf32>, tensor<256x768xf32>
  // MLP
  %h2 = tessera_graph.layernorm %x1, %ln2_g, %ln2_b : tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>
  %f0 = tessera_graph.matmul %h2, %w_1 : tensor<256x768xf32>, tensor<768x3072xf32> -> tensor<256x3072xf32>
  %f1 = tessera_graph.add %f0, %b_1 : tensor<256x3072xf32>, tensor<3072xf32>
  %f2 = tessera_graph.gelu %f1 : tensor<256x3072xf32>
  %f3 = tessera_graph.matmul %f2, %w_2 : tensor<256x3072xf32>, tensor<3072x768xf32> -> tensor<256x768xf32>
  %f = tessera_graph.add %f3, %b_2 : tensor<256x768xf32>, tensor<768xf32>
  %y = tessera_graph.add %x1, %f : tensor<256x768xf32>, tensor<256x768xf32>
  return %y : tensor<256x768xf32>
}

func.func @transformer_block_bf16(%x: tensor<256x768xbf16>,
    %ln1_g: tensor<768xbf16>, %ln1_b: tensor<768xbf16>,
    %w_qkv: tensor<768x2304xbf16>, %b_qkv: tensor<2304xbf16>,
    %w_o: tensor<768x768xbf16>, %b_o: tensor<768xbf16>,
    %ln2_g: tensor<768xbf16>, %ln2_b: tensor<768xbf16>,
    %w_1: tensor<768x3072xbf16>, %b_1: tensor<3072xbf16>,
    %w_2: tensor<3072x768xbf16>, %b_2: tensor<768xbf16>) -> tensor<256x768xbf16> {
  // attention
  %h = tessera_graph.layernorm %x, %ln1_g, %ln1_b : tensor<256x768xbf16>, tensor<768xbf16>, tensor<768xbf16>
  %qkv0 = tessera_graph.matmul %h, %w_qkv : tensor<256x768xbf16>, tensor<768x2304xbf16> -> tensor<256x2304xbf16>
  %qkv = tessera_graph.add %qkv0, %b_qkv : tensor<256x2304xbf16>, tensor<2304xbf16>
  %q2 = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<256x2304xbf16> -> tensor<256x768xbf16>
  %k2 = tessera_graph.slice %qkv offsets = [0, 768] strides = [1, 1] : tensor<256x2304xbf16> -> tensor<256x768xbf16>
  %v2 = tessera_graph.slice %qkv offsets = [0, 1536] strides = [1, 1] : tensor<256x2304xbf16> -> tensor<256x768xbf16>
  %q3 = tessera_graph.reshape %q2 : tensor<256x768xbf16> -> tensor<256x12x64xbf16>
  %k3 = tessera_graph.reshape %k2 : tensor<256x768xbf16> -> tensor<256x12x64xbf16>
  %v3 = tessera_graph.reshape %v2 : tensor<256x768xbf16> -> tensor<256x12x64xbf16>
  %q = tessera_graph.transpose %q3 perm = [1, 0, 2] : tensor<256x12x64xbf16> -> tensor<12x256x64xbf16>
  %kt = tessera_graph.transpose %k3 perm = [1, 2, 0] : tensor<256x12x64xbf16> -> tensor<12x64x256xbf16>
  %v = tessera_graph.transpose %v3 perm = [1, 0, 2] : tensor<256x12x64xbf16> -> tensor<12x256x64xbf16>
  %s0 = tessera_graph.matmul %q, %kt : tensor<12x256x64xbf16>, tensor<12x64x256xbf16> -> tensor<12x256x256xbf16>
  %scale = arith.constant dense<0.125> : tensor<12x256x256xbf16>
  %s1 = tessera_graph.mul %s0, %scale : tensor<12x256x256xbf16>, tensor<12x256x256xbf16>
  // causal mask: -1e9 where key > query
  %qi = tessera_graph.iota dim = 0 : tensor<256x256xbf16>
  %ki = tessera_graph.iota dim = 1 : tensor<256x256xbf16>
  %one = arith.constant dense<1.0> : tensor<256x256xbf16>
  %big = arith.constant dense<-1.0e9> : tensor<256x256xbf16>
  %d = tessera_graph.sub %ki, %qi : tensor<256x256xbf16>, tensor<256x256xbf16>
  %above = tessera_graph.relu %d : tensor<256x256xbf16>
  %m = tessera_graph.min %above, %one : tensor<256x256xbf16>, tensor<256x256xbf16>
  %mask = tessera_graph.mul %m, %big : tensor<256x256xbf16>, tensor<256x256xbf16>
  %s2 = tessera_graph.add %s1, %mask : tensor<12x256x256xbf16>, tensor<256x256xbf16>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<12x256x256xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<12x256x256xbf16>, tensor<12x256x64xbf16> -> tensor<12x256x64xbf16>
  %o3 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<12x256x64xbf16> -> tensor<256x12x64xbf16>
  %o2 = tessera_graph.reshape %o3 : tensor<256x12x64xbf16> -> tensor<256x768xbf16>
  %a0 = tessera_graph.matmul %o2, %w_o : tensor<256x768xbf16>, tensor<768x768xbf16> -> tensor<256x768xbf16>
  %a = tessera_graph.add %a0, %b_o : tensor<256x768xbf16>, tensor<768xbf16>
  %x1 = tessera_graph.add %x, %a : tensor<256x768xbf16>, tensor<256x768xbf16>
  // MLP
  %h2 = tessera_graph.layernorm %x1, %ln2_g, %ln2_b : tensor<256x768xbf16>, tensor<768xbf16>, tensor<768xbf16>
  %f0 = tessera_graph.matmul %h2, %w_1 : tensor<256x768xbf16>, tensor<768x3072xbf16> -> tensor<256x3072xbf16>
  %f1 = tessera_graph.add %f0, %b_1 : tensor<256x3072xbf16>, tensor<3072xbf16>
  %f2 = tessera_graph.gelu %f1 : tensor<256x3072xbf16>
  %f3 = tessera_graph.matmul %f2, %w_2 : tensor<256x3072xbf16>, tensor<3072x768xbf16> -> tensor<256x768xbf16>
  %f = tessera_graph.add %f3, %b_2 : tensor<256x768xbf16>, tensor<768xbf16>
  %y = tessera_graph.add %x1, %f : tensor<256x768xbf16>, tensor<256x768xbf16>
  return %y : tensor<256x768xbf16>
}

// GPT-2's input side then the block: token embeddings looked up in `wte`
// (ids outside the table are clamped, docs/ir.md), plus the position
// embeddings, into @transformer_block (the call is inlined when the
// program is compiled). The vocabulary is 4096 rows here, not GPT-2's
// 50257, to keep the test's table at 12 MiB.
//   tessera-run examples/transformer_block.mlir --function embedded_block
func.func @embedded_block(%tokens: tensor<256xi32>, %wte: tensor<4096x768xf32>, %wpe: tensor<256x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %w_qkv: tensor<768x2304xf32>, %b_qkv: tensor<2304xf32>,
    %w_o: tensor<768x768xf32>, %b_o: tensor<768xf32>,
    %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>,
    %w_1: tensor<768x3072xf32>, %b_1: tensor<3072xf32>,
    %w_2: tensor<3072x768xf32>, %b_2: tensor<768xf32>) -> tensor<256x768xf32> {
  %e = tessera_graph.gather %wte, %tokens : tensor<4096x768xf32>, tensor<256xi32> -> tensor<256x768xf32>
  %x = tessera_graph.add %e, %wpe : tensor<256x768xf32>, tensor<256x768xf32>
  %y = call @transformer_block(%x, %ln1_g, %ln1_b, %w_qkv, %b_qkv, %w_o, %b_o, %ln2_g, %ln2_b, %w_1, %b_1, %w_2, %b_2)
      : (tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768x2304xf32>, tensor<2304xf32>,
         tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768x3072xf32>,
         tensor<3072xf32>, tensor<3072x768xf32>, tensor<768xf32>) -> tensor<256x768xf32>
  return %y : tensor<256x768xf32>
}
