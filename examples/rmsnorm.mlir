// RMSNorm (LLaMA's normalization: no mean, no shift) over a hidden dim of
// 768, fused, composed from the elementwise ops, and in bf16; verified
// against the reference interpreter:
//
//   tessera-run examples/rmsnorm.mlir                      (cpu)
//   TESSERA_BACKEND=vulkan tessera-run examples/rmsnorm.mlir --kernel rmsnorm_composed
func.func @rmsnorm(%x: tensor<256x768xf32>, %gamma: tensor<768xf32>) -> tensor<256x768xf32> {
  %y = tessera_graph.rmsnorm %x, %gamma : tensor<256x768xf32>, tensor<768xf32>
  return %y : tensor<256x768xf32>
}

func.func @rmsnorm_composed(%x: tensor<256x768xf32>, %gamma: tensor<768xf32>) -> tensor<256x768xf32> {
  %eps = arith.constant dense<1.0e-6> : tensor<256x1xf32>
  %x2 = tessera_graph.mul %x, %x : tensor<256x768xf32>, tensor<256x768xf32>
  %ms = tessera_graph.reduce mean %x2 dims = [1] order = pairwise : tensor<256x768xf32> -> tensor<256x1xf32>
  %mse = tessera_graph.add %ms, %eps : tensor<256x1xf32>, tensor<256x1xf32>
  %inv = tessera_graph.rsqrt %mse : tensor<256x1xf32>
  %n = tessera_graph.mul %x, %inv : tensor<256x768xf32>, tensor<256x1xf32>
  %y = tessera_graph.mul %n, %gamma : tensor<256x768xf32>, tensor<768xf32>
  return %y : tensor<256x768xf32>
}

func.func @rmsnorm_bf16(%x: tensor<256x768xbf16>, %gamma: tensor<768xbf16>) -> tensor<256x768xbf16> {
  %y = tessera_graph.rmsnorm %x, %gamma : tensor<256x768xbf16>, tensor<768xbf16>
  return %y : tensor<256x768xbf16>
}
