// The cpu attention kernels (forward and backward) in both vector widths:
// the host's (16 f32 lanes with AVX-512, whatever this machine has) and
// AVX2's 8 (--cpu haswell), at sizes no query tile divides (100 queries,
// 130 keys, head dims 20 and 12), causal, with two heads. Each run is
// checked against the reference interpreter.
// RUN: sh -c 'for f in causal_odd loss_grad; do for cpu in "" "--cpu haswell"; do TESSERA_BACKEND=cpu tessera-run "$0" --function $f $cpu --iterations 1 || echo "$f $cpu failed"; done; done' %s 2>&1 | FileCheck %s
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK-NOT: failed

func.func @causal_odd(%q: tensor<2x100x20xf32>, %kt: tensor<2x20x130xf32>, %v: tensor<2x130x12xf32>)
    -> tensor<2x100x12xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x100x20xf32>, tensor<2x20x130xf32> -> tensor<2x100x130xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<100x1xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<1x130xf32>
  %above = tessera_graph.compare gt %ki, %qi : tensor<1x130xf32>, tensor<100x1xf32> -> tensor<100x130xi1>
  %big = arith.constant dense<-1.0e9> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %mask = tessera_graph.select %above, %big, %zero : tensor<100x130xi1>, tensor<f32>, tensor<f32> -> tensor<100x130xf32>
  %s1 = tessera_graph.add %s0, %mask : tensor<2x100x130xf32>, tensor<100x130xf32>
  %scale = arith.constant dense<0.22360679774997896> : tensor<2x100x130xf32>
  %s2 = tessera_graph.mul %s1, %scale : tensor<2x100x130xf32>, tensor<2x100x130xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x100x130xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x100x130xf32>, tensor<2x130x12xf32> -> tensor<2x100x12xf32>
  return %o : tensor<2x100x12xf32>
}

func.func private @loss(%q: tensor<2x100x20xf32>, %kt: tensor<2x20x130xf32>, %v: tensor<2x130x12xf32>,
                        %r: tensor<2x100x12xf32>) -> tensor<1x1x1xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x100x20xf32>, tensor<2x20x130xf32> -> tensor<2x100x130xf32>
  %c = arith.constant dense<0.22360679774997896> : tensor<2x100x130xf32>
  %s1 = tessera_graph.mul %s0, %c : tensor<2x100x130xf32>, tensor<2x100x130xf32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<2x100x130xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x100x130xf32>, tensor<2x130x12xf32> -> tensor<2x100x12xf32>
  %w = tessera_graph.mul %o, %r : tensor<2x100x12xf32>, tensor<2x100x12xf32>
  %l = tessera_graph.reduce sum %w dims = [0, 1, 2] order = pairwise : tensor<2x100x12xf32> -> tensor<1x1x1xf32>
  return %l : tensor<1x1x1xf32>
}
func.func private @loss_grad(tensor<2x100x20xf32>, tensor<2x20x130xf32>, tensor<2x130x12xf32>, tensor<2x100x12xf32>)
    -> (tensor<1x1x1xf32>, tensor<2x100x20xf32>, tensor<2x20x130xf32>, tensor<2x130x12xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [0, 1, 2]}
