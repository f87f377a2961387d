// A numerics policy the backend cannot honour is a compile error that names
// it, on cpu and on vulkan, and nothing runs; accum = f32 runs.  (The
// status code, UNSUPPORTED, is checked by python/tests/test_program.py.)
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function bf16_accum; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function bf16_accum; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: TESSERA_BACKEND=cpu tessera-run %s --function f32_accum | FileCheck %s --check-prefix=RUNS

func.func @bf16_accum(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xbf16> {
  %c = tessera_graph.matmul %a, %b {accum = bf16} : tensor<16x8xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
  return %c : tensor<16x16xbf16>
}

func.func @f32_accum(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xbf16> {
  %c = tessera_graph.matmul %a, %b {accum = f32} : tensor<16x8xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
  %s = tessera_graph.reduce sum %c dims = [0] order = pairwise {accum = f32} : tensor<16x16xbf16> -> tensor<1x16xbf16>
  %y = tessera_graph.add %c, %s : tensor<16x16xbf16>, tensor<1x16xbf16>
  return %y : tensor<16x16xbf16>
}
// REFUSED: asks for accum = bf16, a numerics policy no Tessera backend honours
// REFUSED-SAME: (unsupported; use accum = f32 or leave it out)
// REFUSED-NOT: verify:
// REFUSED: exit code 1
// RUNS: verify: {{.*}}PASS
