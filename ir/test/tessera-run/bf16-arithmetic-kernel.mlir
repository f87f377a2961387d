// A user's Tile IR kernel computing on bf16 values: the cpu kernel could
// not be loaded (x86 rounds to bf16 through __truncsfbf2, which no kernel
// library has) and the cuda compiler aborted (NVPTX in LLVM 16 cannot
// select a bf16 fadd).  tessera-tile-promote-bf16 computes in f32 and
// rounds with integer ops: bit for bit the interpreter's (tolerance 0).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1 --tolerance 0; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: PASS
// CHECK: exit code 0
// RUN: tessera-opt %s --pass-pipeline='builtin.module(func.func(tessera-tile-promote-bf16))' | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @k
// IR-NOT: arith.mulf {{.*}} : bf16
// IR: arith.mulf {{.*}} : f32
// IR: arith.addf {{.*}} : f32
// IR: arith.cmpf uno
// IR: arith.trunci {{.*}} : i32 to i16
// IR-NOT: arith.truncf
func.func @k(%x: memref<256xbf16>, %y: memref<256xbf16>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %l = tessera_tile.lane_id 0 : index
  %g = tessera_tile.group_id 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %g, %c64 : index
  %i = arith.addi %base, %l : index
  %a = memref.load %x[%i] : memref<256xbf16>
  %b = memref.load %y[%i] : memref<256xbf16>
  %p = arith.mulf %a, %b : bf16
  %s = arith.addf %p, %a : bf16
  memref.store %s, %y[%i] : memref<256xbf16>
  return
}
