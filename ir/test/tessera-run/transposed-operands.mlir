// Matmul operands that are transposes (the gradient's dY . W^T and X^T . dY)
// are read in place on cpu: A^T packed from rows of X, B^T by V x V blocks
// transposed in registers. Every element type the packing widens, sizes no
// block divides (45 = 2 x 16 + 13, 37 = 32 + 5), K over one slice (600),
// and a group owning more rows than an A block (the shared B panel).
// RUN: sh -c 'for f in bf16_bt i8_at i8_bt big_k panel; do TESSERA_BACKEND=cpu tessera-run "$0" --function $f --iterations 1 || echo "$f failed"; done' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function panel --schedule "tile-m=48 micro-m=6" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=PANEL
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function big_k --cpu haswell --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=AVX2
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: verify: max abs error 0 {{.*}}: PASS
// CHECK: verify: max abs error 0 {{.*}}: PASS
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK-NOT: failed
// PANEL: verify: max abs error {{.*}}: PASS
// PANEL: exit code 0
// AVX2: verify: max abs error {{.*}}: PASS
// AVX2: exit code 0

func.func @bf16_bt(%a: tensor<70x45xbf16>, %w: tensor<37x45xbf16>) -> tensor<70x37xf32> {
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<37x45xbf16> -> tensor<45x37xbf16>
  %c = tessera_graph.matmul %a, %wt : tensor<70x45xbf16>, tensor<45x37xbf16> -> tensor<70x37xf32>
  return %c : tensor<70x37xf32>
}
func.func @i8_at(%x: tensor<45x70xi8>, %w: tensor<45x37xi8>) -> tensor<70x37xi32> {
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<45x70xi8> -> tensor<70x45xi8>
  %c = tessera_graph.matmul %xt, %w : tensor<70x45xi8>, tensor<45x37xi8> -> tensor<70x37xi32>
  return %c : tensor<70x37xi32>
}
func.func @i8_bt(%a: tensor<70x45xi8>, %w: tensor<37x45xi8>) -> tensor<70x37xi32> {
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<37x45xi8> -> tensor<45x37xi8>
  %c = tessera_graph.matmul %a, %wt : tensor<70x45xi8>, tensor<45x37xi8> -> tensor<70x37xi32>
  return %c : tensor<70x37xi32>
}
func.func @big_k(%a: tensor<40x600xf32>, %w: tensor<50x600xf32>) -> tensor<40x50xf32> {
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<50x600xf32> -> tensor<600x50xf32>
  %c = tessera_graph.matmul %a, %wt : tensor<40x600xf32>, tensor<600x50xf32> -> tensor<40x50xf32>
  %r = tessera_graph.relu %c : tensor<40x50xf32>
  return %r : tensor<40x50xf32>
}
func.func @panel(%a: tensor<700x64xf32>, %w: tensor<50x64xf32>) -> tensor<700x50xf32> {
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<50x64xf32> -> tensor<64x50xf32>
  %c = tessera_graph.matmul %a, %wt : tensor<700x64xf32>, tensor<64x50xf32> -> tensor<700x50xf32>
  return %c : tensor<700x50xf32>
}
