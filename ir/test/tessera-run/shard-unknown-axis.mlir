// A sharding over a mesh axis the mesh does not have, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
func.func @f(%a: tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>}) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
// CHECK: shard-unknown-axis.mlir:5:1: error: {{.*}}mesh @mesh has no axis 'tp'
// CHECK: exit code 1
