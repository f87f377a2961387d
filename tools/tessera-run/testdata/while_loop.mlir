// An scf.while loop carrying an index and an f32: lane l visits elements
// l, l+4, ... of x, writes twice each to y and leaves its sum in y[l].  The
// SPIR-V lowering converted neither region's block arguments (MLIR 16's
// pattern): a carried index used in the body failed to compile for vulkan
// and level_zero ("failed to legalize unresolved materialization").
func.func @while_loop(%x: memref<64xf32>, %y: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 4>, tessera_tile.grid = array<i64: 1>} {
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %l = tessera_tile.lane_id 0 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.while (%i = %l, %acc = %zero) : (index, f32) -> (index, f32) {
    %go = arith.cmpi slt, %i, %c64 : index
    scf.condition(%go) %i, %acc : index, f32
  } do {
  ^bb0(%j: index, %a: f32):
    %v = memref.load %x[%j] : memref<64xf32>
    %two = arith.constant 2.0 : f32
    %w = arith.mulf %v, %two : f32
    %s = arith.addf %a, %v : f32
    memref.store %w, %y[%j] : memref<64xf32>
    %n = arith.addi %j, %c4 : index
    scf.yield %n, %s : index, f32
  }
  memref.store %r#1, %y[%l] : memref<64xf32>
  return
}
