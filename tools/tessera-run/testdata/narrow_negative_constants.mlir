// Negative 8- and 16-bit constants (bf16 and f16 bit patterns, i8): MLIR
// 16's SPIR-V serializer wrote their literals sign-extended for the
// unsigned (Signedness 0) types, which spirv-val rejects; vulkan and
// level_zero must compile it (found by tests/random_programs.py --dtype
// bf16 --compile level_zero).
func.func @negative(%a: tensor<4x8xbf16>, %h: tensor<4x8xf16>, %q: tensor<4x8xi8>)
    -> (tensor<5x8xbf16>, tensor<4x8xf16>, tensor<4x8xi8>) {
  %p = tessera_graph.pad %a low = [1, 0] high = [0, 0] value = -2.0 : tensor<4x8xbf16> -> tensor<5x8xbf16>
  %c = arith.constant dense<-0.5> : tensor<4x8xf16>
  %m = tessera_graph.mul %h, %c : tensor<4x8xf16>, tensor<4x8xf16>
  %k = arith.constant dense<-3> : tensor<4x8xi8>
  %s = tessera_graph.add %q, %k : tensor<4x8xi8>, tensor<4x8xi8>
  return %p, %m, %s : tensor<5x8xbf16>, tensor<4x8xf16>, tensor<4x8xi8>
}
