// A 4096-token causal attention (f32, head dim 64), its mask written as a
// decoder writes it (iota arithmetic, -1e9 above the diagonal). The mask is
// recognized by evaluating it one query row at a time (docs/ir.md, "Causal
// masks"), so the chain becomes one causal flash_attention and the
// 4096 x 4096 scores are never formed; --schedule attention=0 is the
// unfused form to compare with:
//
//   tessera-run bench/programs/causal_attention_4096.mlir --no-check --iterations 5
//   tessera-run bench/programs/causal_attention_4096.mlir --no-check --iterations 5 --schedule attention=0
func.func @causal(%q: tensor<4096x64xf32>, %kt: tensor<64x4096xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4096x64xf32>, tensor<64x4096xf32> -> tensor<4096x4096xf32>
  %scale = arith.constant dense<0.125> : tensor<4096x4096xf32>
  %s1 = tessera_graph.mul %s0, %scale : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<4096x4096xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<4096x4096xf32>
  %one = arith.constant dense<1.0> : tensor<4096x4096xf32>
  %big = arith.constant dense<-1.0e9> : tensor<4096x4096xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %above = tessera_graph.relu %d : tensor<4096x4096xf32>
  %m = tessera_graph.min %above, %one : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %mask = tessera_graph.mul %m, %big : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %s2 = tessera_graph.add %s1, %mask : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %p = tessera_graph.softmax %s2 dim = 1 : tensor<4096x4096xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4096x4096xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}
