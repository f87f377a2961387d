// Layer normalization of GPT-2 small's activations (256 tokens x hidden
// 768), three ways, each verified against the reference interpreter:
//
//   @layernorm           the fused op: one kernel per norm on every backend
//   @layernorm_composed  the same arithmetic from reduce (mean, keepdims),
//                        numpy broadcasting and rsqrt: what the op means
//   @layernorm_bf16      bf16 storage, f32 statistics, one rounding
//
//   tessera-run examples/layernorm.mlir                      (cpu)
//   TESSERA_BACKEND=vulkan tessera-run examples/layernorm.mlir
//   tessera-run examples/layernorm.mlir --kernel layernorm_composed
func.func @layernorm(%x: tensor<256x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>)
    -> tensor<256x768xf32> {
  %y = tessera_graph.layernorm %x, %gamma, %beta : tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>
  return %y : tensor<256x768xf32>
}

func.func @layernorm_composed(%x: tensor<256x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>)
    -> tensor<256x768xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<256x1xf32>
  %mean = tessera_graph.reduce mean %x dims = [1] order = pairwise : tensor<256x768xf32> -> tensor<256x1xf32>
  %d = tessera_graph.sub %x, %mean : tensor<256x768xf32>, tensor<256x1xf32>
  %d2 = tessera_graph.mul %d, %d : tensor<256x768xf32>, tensor<256x768xf32>
  %var = tessera_graph.reduce mean %d2 dims = [1] order = pairwise : tensor<256x768xf32> -> tensor<256x1xf32>
  %ve = tessera_graph.add %var, %eps : tensor<256x1xf32>, tensor<256x1xf32>
  %inv = tessera_graph.rsqrt %ve : tensor<256x1xf32>
  %n = tessera_graph.mul %d, %inv : tensor<256x768xf32>, tensor<256x1xf32>
  %s = tessera_graph.mul %n, %gamma : tensor<256x768xf32>, tensor<768xf32>
  %y = tessera_graph.add %s, %beta : tensor<256x768xf32>, tensor<768xf32>
  return %y : tensor<256x768xf32>
}

func.func @layernorm_bf16(%x: tensor<256x768xbf16>, %gamma: tensor<768xbf16>, %beta: tensor<768xbf16>)
    -> tensor<256x768xbf16> {
  %y = tessera_graph.layernorm %x, %gamma, %beta {epsilon = 1.0e-5 : f32} : tensor<256x768xbf16>, tensor<768xbf16>, tensor<768xbf16>
  return %y : tensor<256x768xbf16>
}
