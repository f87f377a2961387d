// Non-32-bit scalars, run by VulkanTileIr.Types: per lane i,
//   wide[i]  = wide[i] * k + i         (i64; k is a push constant)
//   half[i]  = fma(half[i], h, half[i]) (f16)
//   dbl[i]   = dbl[i] + d               (f64)
//   byte[i]  = byte[i] + 1              (i8, wraps)
func.func @types(%k: i64, %h: f16, %d: f64, %wide: memref<64xi64>, %half: memref<64xf16>,
                 %dbl: memref<64xf64>, %byte: memref<64xi8>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %one8 = arith.constant 1 : i8
  %l = tessera_tile.lane_id 0 : index
  %li = arith.index_cast %l : index to i64
  %a = memref.load %wide[%l] : memref<64xi64>
  %am = arith.muli %a, %k : i64
  %aa = arith.addi %am, %li : i64
  memref.store %aa, %wide[%l] : memref<64xi64>
  %hv = memref.load %half[%l] : memref<64xf16>
  %hr = tessera_tile.math fma(%hv, %h, %hv) : f16
  memref.store %hr, %half[%l] : memref<64xf16>
  %dv = memref.load %dbl[%l] : memref<64xf64>
  %ds = arith.addf %dv, %d : f64
  memref.store %ds, %dbl[%l] : memref<64xf64>
  %bv = memref.load %byte[%l] : memref<64xi8>
  %bs = arith.addi %bv, %one8 : i8
  memref.store %bs, %byte[%l] : memref<64xi8>
  return
}
