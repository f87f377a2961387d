// A custom VJP: @gelu names @gelu_bwd as its backward (tessera.custom_vjp),
// which --tessera-grad calls with the forward's arguments (the saved
// values: here x) and the cotangent of the result, instead of
// differentiating @gelu's ops. The backward here is the tanh-form GELU's
// derivative written out by hand, reusing t = tanh(u) as one kernel would.
//
// @loss_grad is declared and nothing calls it: it is the program's entry
// point, (the loss, d loss / d W, d loss / d b).
//
//   tessera-run examples/custom_vjp.mlir --function loss_grad
//   tessera-opt --tessera-grad="function=loss wrt=1,2 name=g" examples/custom_vjp.mlir   # @g calls @gelu_bwd
func.func private @gelu(%x: tensor<128x256xf32>) -> tensor<128x256xf32>
    attributes {tessera.custom_vjp = @gelu_bwd} {
  %y = tessera_graph.gelu %x : tensor<128x256xf32>
  return %y : tensor<128x256xf32>
}

// d/dx [0.5 x (1 + tanh u)], u = c (x + a x^3):
//   0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
func.func private @gelu_bwd(%x: tensor<128x256xf32>, %dy: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %c = arith.constant dense<0.797884583> : tensor<1xf32>
  %a = arith.constant dense<0.044715> : tensor<1xf32>
  %a3 = arith.constant dense<0.134145> : tensor<1xf32>
  %half = arith.constant dense<0.5> : tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %x2 = tessera_graph.mul %x, %x : tensor<128x256xf32>, tensor<128x256xf32>
  %x3 = tessera_graph.mul %x2, %x : tensor<128x256xf32>, tensor<128x256xf32>
  %ax3 = tessera_graph.mul %x3, %a : tensor<128x256xf32>, tensor<1xf32>
  %in = tessera_graph.add %x, %ax3 : tensor<128x256xf32>, tensor<128x256xf32>
  %u = tessera_graph.mul %in, %c : tensor<128x256xf32>, tensor<1xf32>
  %t = tessera_graph.tanh %u : tensor<128x256xf32>
  %onet = tessera_graph.add %t, %one : tensor<128x256xf32>, tensor<1xf32>
  %left = tessera_graph.mul %onet, %half : tensor<128x256xf32>, tensor<1xf32>
  %t2 = tessera_graph.mul %t, %t : tensor<128x256xf32>, tensor<128x256xf32>
  %sech2 = tessera_graph.sub %one, %t2 : tensor<1xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %ax2 = tessera_graph.mul %x2, %a3 : tensor<128x256xf32>, tensor<1xf32>
  %du0 = tessera_graph.add %ax2, %one : tensor<128x256xf32>, tensor<1xf32>
  %du = tessera_graph.mul %du0, %c : tensor<128x256xf32>, tensor<1xf32>
  %r0 = tessera_graph.mul %x, %sech2 : tensor<128x256xf32>, tensor<128x256xf32>
  %r1 = tessera_graph.mul %r0, %du : tensor<128x256xf32>, tensor<128x256xf32>
  %right = tessera_graph.mul %r1, %half : tensor<128x256xf32>, tensor<1xf32>
  %d = tessera_graph.add %left, %right : tensor<128x256xf32>, tensor<128x256xf32>
  %dx = tessera_graph.mul %d, %dy : tensor<128x256xf32>, tensor<128x256xf32>
  return %dx : tensor<128x256xf32>
}

func.func private @loss(%x: tensor<128x64xf32>, %w: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
  %h1 = tessera_graph.add %h0, %b : tensor<128x256xf32>, tensor<256xf32>
  %h = func.call @gelu(%h1) : (tensor<128x256xf32>) -> tensor<128x256xf32>
  %h2 = tessera_graph.mul %h, %h : tensor<128x256xf32>, tensor<128x256xf32>
  %l = tessera_graph.reduce mean %h2 dims = [0, 1] order = pairwise : tensor<128x256xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}

func.func private @loss_grad(tensor<128x64xf32>, tensor<64x256xf32>, tensor<256xf32>)
    -> (tensor<1x1xf32>, tensor<64x256xf32>, tensor<256xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [1, 2]}
