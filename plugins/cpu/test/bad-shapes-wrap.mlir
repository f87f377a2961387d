// A shape whose element count wraps 64 bits (getNumElements said 4): named,
// not compiled onto 4 elements.
// RUN: not tessera-opt %s --tessera-cpu-graph-pipeline 2>&1 | FileCheck %s --check-prefix=WRAP
// WRAP: error: cpu backend: 'tensor<4611686018427387905x4xf32>' has more elements than a 64-bit count holds
func.func @wraps(%a: tensor<4611686018427387905x4xf32>) -> tensor<4611686018427387905x4xf32> {
  %r = tessera_graph.exp %a : tensor<4611686018427387905x4xf32>
  return %r : tensor<4611686018427387905x4xf32>
}
