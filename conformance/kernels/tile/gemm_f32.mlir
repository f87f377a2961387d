// gemm_f32(C, A, B, M, N, K): C = A x B (row-major, any M, N, K), tiles of
// 8 x 8 staged through shared memory with group barriers; group (8, 8),
// grid (ceil(N/8), ceil(M/8)); elements past the edges are zeros.
func.func @gemm_f32(%C: memref<?xf32>, %A: memref<?xf32>, %B: memref<?xf32>, %M32: i32, %N32: i32, %K32: i32)
    attributes {tessera_tile.group_size = array<i64: 8, 8>} {
  %As = tessera_tile.shared_alloc : memref<64xf32, 3>
  %Bs = tessera_tile.shared_alloc : memref<64xf32, 3>
  %tx = tessera_tile.lane_id 0 : index
  %ty = tessera_tile.lane_id 1 : index
  %bx = tessera_tile.group_id 0 : index
  %by = tessera_tile.group_id 1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %M = arith.index_cast %M32 : i32 to index
  %N = arith.index_cast %N32 : i32 to index
  %K = arith.index_cast %K32 : i32 to index
  %rb = arith.muli %by, %c8 : index
  %row = arith.addi %rb, %ty : index
  %cb = arith.muli %bx, %c8 : index
  %col = arith.addi %cb, %tx : index
  %tyT = arith.muli %ty, %c8 : index
  %slot = arith.addi %tyT, %tx : index
  %row_in = arith.cmpi ult, %row, %M : index
  %col_in = arith.cmpi ult, %col, %N : index
  %acc = scf.for %k0 = %c0 to %K step %c8 iter_args(%acc0 = %zero) -> (f32) {
    %ka = arith.addi %k0, %tx : index
    %ka_in = arith.cmpi ult, %ka, %K : index
    %a_in = arith.andi %row_in, %ka_in : i1
    %av = scf.if %a_in -> (f32) {
      %rK = arith.muli %row, %K : index
      %ai = arith.addi %rK, %ka : index
      %x = memref.load %A[%ai] : memref<?xf32>
      scf.yield %x : f32
    } else {
      scf.yield %zero : f32
    }
    memref.store %av, %As[%slot] : memref<64xf32, 3>
    %kb = arith.addi %k0, %ty : index
    %kb_in = arith.cmpi ult, %kb, %K : index
    %b_in = arith.andi %kb_in, %col_in : i1
    %bv = scf.if %b_in -> (f32) {
      %kN = arith.muli %kb, %N : index
      %bi = arith.addi %kN, %col : index
      %x = memref.load %B[%bi] : memref<?xf32>
      scf.yield %x : f32
    } else {
      scf.yield %zero : f32
    }
    memref.store %bv, %Bs[%slot] : memref<64xf32, 3>
    tessera_tile.barrier
    %acc1 = scf.for %kk = %c0 to %c8 step %c1 iter_args(%a = %acc0) -> (f32) {
      %ai = arith.addi %tyT, %kk : index
      %kkT = arith.muli %kk, %c8 : index
      %bi = arith.addi %kkT, %tx : index
      %x = memref.load %As[%ai] : memref<64xf32, 3>
      %y = memref.load %Bs[%bi] : memref<64xf32, 3>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %a, %p : f32
      scf.yield %s : f32
    }
    tessera_tile.barrier
    scf.yield %acc1 : f32
  }
  %inside = arith.andi %row_in, %col_in : i1
  scf.if %inside {
    %rN = arith.muli %row, %N : index
    %ci = arith.addi %rN, %col : index
    memref.store %acc, %C[%ci] : memref<?xf32>
  }
  return
}
