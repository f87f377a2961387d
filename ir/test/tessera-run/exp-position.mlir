// exp is one function everywhere in a cpu kernel: computed in 8-wide
// vectors with a remainder loop (13 columns: 8 + 5), or one element at a
// time (vector-width=1), the results are bitwise equal (the scalar exp used
// to be libm's expf, which differs from the vector polynomial in the last
// bit).
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --iterations 1 --seed 7 --output %t.v8.npy --schedule "vector-width=8"
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --iterations 1 --seed 7 --output %t.v1.npy --schedule "vector-width=1"
// RUN: cmp %t.v8.npy %t.v1.npy
func.func @e(%x: tensor<64x13xf32>) -> tensor<64x13xf32> {
  %y = tessera_graph.exp %x : tensor<64x13xf32>
  return %y : tensor<64x13xf32>
}
