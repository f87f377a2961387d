// atomic_rmw on bf16 memory: AMDGPU lowers it (a compare-and-swap loop);
// the cpu and cuda back ends cannot in LLVM 16 (a missing __truncsfbf2, an
// instruction selection abort): refused with a message instead.
// RUN: not tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-tile-promote-bf16))' 2>&1 | FileCheck %s
// RUN: tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-tile-promote-bf16{bf16-atomics=true}))' -o /dev/null
// CHECK: 'tessera_tile.atomic_rmw' op on bf16 memory is not supported by this back end
func.func @k(%x: memref<4xbf16>, %v: memref<64xbf16>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %c0 = arith.constant 0 : index
  %a = memref.load %v[%l] : memref<64xbf16>
  %old = tessera_tile.atomic_rmw add %a, %x[%c0] scope = device : bf16, memref<4xbf16>
  return
}
