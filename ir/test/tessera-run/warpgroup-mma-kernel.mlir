// A Tile IR GEMM kernel built on tessera_tile.warpgroup_mma and
// tessera_tile.tile_load_async (made by `tessera-opt
// --tessera-gpu-graph-pipeline="schedule={mma=wgmma tile-m=64 tile-n=64
// stages=2}"` from a 128x128 x 128x64 f16 matmul: one 128-lane warpgroup
// per group, two 64-deep slices staged 128-byte swizzled): vulkan copies
// 16 bytes per lane and runs the op lane by lane, and the Tile IR
// interpreter's own implementation of both ops (the swizzle, the layout)
// checks it, exit 0.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f32 results: max abs error {{.*}}: PASS
// CHECK: exit code 0

module {
  func.func @f_k0_gemm(%arg0: memref<16384xf16>, %arg1: memref<8192xf16>, %arg2: memref<8192xf32>) attributes {tessera_tile.grid = array<i64: 1, 2, 1>, tessera_tile.group_size = array<i64: 128>, tessera_tile.max_shared_memory = 33792 : i64} {
    %c0 = arith.constant 0 : index
    %c57 = arith.constant 57 : index
    %c56 = arith.constant 56 : index
    %c49 = arith.constant 49 : index
    %c48 = arith.constant 48 : index
    %c41 = arith.constant 41 : index
    %c40 = arith.constant 40 : index
    %c33 = arith.constant 33 : index
    %c25 = arith.constant 25 : index
    %c24 = arith.constant 24 : index
    %c17 = arith.constant 17 : index
    %c9 = arith.constant 9 : index
    %c8 = arith.constant 8 : index
    %c8192 = arith.constant 8192 : index
    %c16 = arith.constant 16 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant dense<0.000000e+00> : vector<32xf32>
    %c4096 = arith.constant 4096 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %0 = tessera_tile.lane_id 0 : index
    %1 = tessera_tile.group_id 0 : index
    %2 = tessera_tile.group_id 1 : index
    %3 = tessera_tile.group_id 2 : index
    %4 = arith.divui %0, %c128 : index
    %5 = arith.remui %0, %c128 : index
    %6 = arith.muli %2, %c64 : index
    %7 = arith.muli %1, %c64 : index
    %8 = tessera_tile.shared_alloc alignment = 1024 : memref<8192xf16, 3>
    %9 = tessera_tile.shared_alloc alignment = 1024 : memref<8192xf16, 3>
    %10 = arith.muli %3, %c128 : index
    %11 = arith.addi %10, %6 : index
    tessera_tile.tile_load_async %arg0[%11, %c0], %8[%c0] stage %c0 {cols = 64 : i64, ld = 128 : i64, rows = 64 : i64, source_rows = 128 : i64, stages = 2 : i64} : memref<16384xf16>, memref<8192xf16, 3>
    tessera_tile.tile_load_async %arg1[%10, %7], %9[%c0] stage %c0 {cols = 64 : i64, ld = 64 : i64, rows = 64 : i64, source_rows = 128 : i64, stages = 2 : i64} : memref<8192xf16>, memref<8192xf16, 3>
    tessera_tile.tile_load_commit stage %c0 {stages = 2 : i64}
    %12 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %cst) -> (vector<32xf32>) {
      %139 = arith.remui %arg3, %c2 : index
      %140 = arith.divui %arg3, %c2 : index
      %141 = arith.remui %140, %c2 : index
      tessera_tile.tile_load_wait stage %139 phase %141 {stages = 2 : i64}
      tessera_tile.barrier
      %142 = arith.addi %arg3, %c1 : index
      %143 = arith.cmpi ult, %142, %c2 : index
      scf.if %143 {
        %148 = arith.muli %142, %c64 : index
        %149 = arith.remui %142, %c2 : index
        %150 = arith.addi %10, %148 : index
        %151 = arith.muli %149, %c4096 : index
        tessera_tile.tile_load_async %arg0[%11, %148], %8[%151] stage %149 {cols = 64 : i64, ld = 128 : i64, rows = 64 : i64, source_rows = 128 : i64, stages = 2 : i64} : memref<16384xf16>, memref<8192xf16, 3>
        tessera_tile.tile_load_async %arg1[%150, %7], %9[%151] stage %149 {cols = 64 : i64, ld = 64 : i64, rows = 64 : i64, source_rows = 128 : i64, stages = 2 : i64} : memref<8192xf16>, memref<8192xf16, 3>
        tessera_tile.tile_load_commit stage %149 {stages = 2 : i64}
      }
      %144 = arith.muli %4, %c4096 : index
      %145 = arith.muli %139, %c4096 : index
      %146 = arith.addi %145, %144 : index
      %147 = tessera_tile.warpgroup_mma %8[%146], %9[%145], %arg4 {b_block_stride = 4096 : i64, k = 64 : i64, n = 64 : i64, operand_type = f16} : memref<8192xf16, 3>, memref<8192xf16, 3>, vector<32xf32>
      scf.yield %147 : vector<32xf32>
    }
    %13 = arith.divui %5, %c32 : index
    %14 = arith.remui %5, %c32 : index
    %15 = arith.divui %14, %c4 : index
    %16 = arith.muli %13, %c16 : index
    %17 = arith.addi %16, %15 : index
    %18 = arith.muli %4, %c64 : index
    %19 = arith.addi %18, %17 : index
    %20 = arith.addi %6, %19 : index
    %21 = arith.remui %14, %c4 : index
    %22 = arith.muli %21, %c2 : index
    %23 = arith.addi %7, %22 : index
    %24 = vector.extract %12[0] : vector<32xf32>
    %25 = arith.muli %20, %c64 : index
    %26 = arith.addi %25, %23 : index
    %27 = arith.muli %3, %c8192 : index
    %28 = arith.addi %27, %26 : index
    memref.store %24, %arg2[%28] : memref<8192xf32>
    %29 = arith.addi %23, %c1 : index
    %30 = vector.extract %12[1] : vector<32xf32>
    %31 = arith.addi %25, %29 : index
    %32 = arith.addi %27, %31 : index
    memref.store %30, %arg2[%32] : memref<8192xf32>
    %33 = arith.addi %20, %c8 : index
    %34 = vector.extract %12[2] : vector<32xf32>
    %35 = arith.muli %33, %c64 : index
    %36 = arith.addi %35, %23 : index
    %37 = arith.addi %27, %36 : index
    memref.store %34, %arg2[%37] : memref<8192xf32>
    %38 = vector.extract %12[3] : vector<32xf32>
    %39 = arith.addi %35, %29 : index
    %40 = arith.addi %27, %39 : index
    memref.store %38, %arg2[%40] : memref<8192xf32>
    %41 = arith.addi %23, %c8 : index
    %42 = vector.extract %12[4] : vector<32xf32>
    %43 = arith.addi %25, %41 : index
    %44 = arith.addi %27, %43 : index
    memref.store %42, %arg2[%44] : memref<8192xf32>
    %45 = arith.addi %23, %c9 : index
    %46 = vector.extract %12[5] : vector<32xf32>
    %47 = arith.addi %25, %45 : index
    %48 = arith.addi %27, %47 : index
    memref.store %46, %arg2[%48] : memref<8192xf32>
    %49 = vector.extract %12[6] : vector<32xf32>
    %50 = arith.addi %35, %41 : index
    %51 = arith.addi %27, %50 : index
    memref.store %49, %arg2[%51] : memref<8192xf32>
    %52 = vector.extract %12[7] : vector<32xf32>
    %53 = arith.addi %35, %45 : index
    %54 = arith.addi %27, %53 : index
    memref.store %52, %arg2[%54] : memref<8192xf32>
    %55 = arith.addi %23, %c16 : index
    %56 = vector.extract %12[8] : vector<32xf32>
    %57 = arith.addi %25, %55 : index
    %58 = arith.addi %27, %57 : index
    memref.store %56, %arg2[%58] : memref<8192xf32>
    %59 = arith.addi %23, %c17 : index
    %60 = vector.extract %12[9] : vector<32xf32>
    %61 = arith.addi %25, %59 : index
    %62 = arith.addi %27, %61 : index
    memref.store %60, %arg2[%62] : memref<8192xf32>
    %63 = vector.extract %12[10] : vector<32xf32>
    %64 = arith.addi %35, %55 : index
    %65 = arith.addi %27, %64 : index
    memref.store %63, %arg2[%65] : memref<8192xf32>
    %66 = vector.extract %12[11] : vector<32xf32>
    %67 = arith.addi %35, %59 : index
    %68 = arith.addi %27, %67 : index
    memref.store %66, %arg2[%68] : memref<8192xf32>
    %69 = arith.addi %23, %c24 : index
    %70 = vector.extract %12[12] : vector<32xf32>
    %71 = arith.addi %25, %69 : index
    %72 = arith.addi %27, %71 : index
    memref.store %70, %arg2[%72] : memref<8192xf32>
    %73 = arith.addi %23, %c25 : index
    %74 = vector.extract %12[13] : vector<32xf32>
    %75 = arith.addi %25, %73 : index
    %76 = arith.addi %27, %75 : index
    memref.store %74, %arg2[%76] : memref<8192xf32>
    %77 = vector.extract %12[14] : vector<32xf32>
    %78 = arith.addi %35, %69 : index
    %79 = arith.addi %27, %78 : index
    memref.store %77, %arg2[%79] : memref<8192xf32>
    %80 = vector.extract %12[15] : vector<32xf32>
    %81 = arith.addi %35, %73 : index
    %82 = arith.addi %27, %81 : index
    memref.store %80, %arg2[%82] : memref<8192xf32>
    %83 = arith.addi %23, %c32 : index
    %84 = vector.extract %12[16] : vector<32xf32>
    %85 = arith.addi %25, %83 : index
    %86 = arith.addi %27, %85 : index
    memref.store %84, %arg2[%86] : memref<8192xf32>
    %87 = arith.addi %23, %c33 : index
    %88 = vector.extract %12[17] : vector<32xf32>
    %89 = arith.addi %25, %87 : index
    %90 = arith.addi %27, %89 : index
    memref.store %88, %arg2[%90] : memref<8192xf32>
    %91 = vector.extract %12[18] : vector<32xf32>
    %92 = arith.addi %35, %83 : index
    %93 = arith.addi %27, %92 : index
    memref.store %91, %arg2[%93] : memref<8192xf32>
    %94 = vector.extract %12[19] : vector<32xf32>
    %95 = arith.addi %35, %87 : index
    %96 = arith.addi %27, %95 : index
    memref.store %94, %arg2[%96] : memref<8192xf32>
    %97 = arith.addi %23, %c40 : index
    %98 = vector.extract %12[20] : vector<32xf32>
    %99 = arith.addi %25, %97 : index
    %100 = arith.addi %27, %99 : index
    memref.store %98, %arg2[%100] : memref<8192xf32>
    %101 = arith.addi %23, %c41 : index
    %102 = vector.extract %12[21] : vector<32xf32>
    %103 = arith.addi %25, %101 : index
    %104 = arith.addi %27, %103 : index
    memref.store %102, %arg2[%104] : memref<8192xf32>
    %105 = vector.extract %12[22] : vector<32xf32>
    %106 = arith.addi %35, %97 : index
    %107 = arith.addi %27, %106 : index
    memref.store %105, %arg2[%107] : memref<8192xf32>
    %108 = vector.extract %12[23] : vector<32xf32>
    %109 = arith.addi %35, %101 : index
    %110 = arith.addi %27, %109 : index
    memref.store %108, %arg2[%110] : memref<8192xf32>
    %111 = arith.addi %23, %c48 : index
    %112 = vector.extract %12[24] : vector<32xf32>
    %113 = arith.addi %25, %111 : index
    %114 = arith.addi %27, %113 : index
    memref.store %112, %arg2[%114] : memref<8192xf32>
    %115 = arith.addi %23, %c49 : index
    %116 = vector.extract %12[25] : vector<32xf32>
    %117 = arith.addi %25, %115 : index
    %118 = arith.addi %27, %117 : index
    memref.store %116, %arg2[%118] : memref<8192xf32>
    %119 = vector.extract %12[26] : vector<32xf32>
    %120 = arith.addi %35, %111 : index
    %121 = arith.addi %27, %120 : index
    memref.store %119, %arg2[%121] : memref<8192xf32>
    %122 = vector.extract %12[27] : vector<32xf32>
    %123 = arith.addi %35, %115 : index
    %124 = arith.addi %27, %123 : index
    memref.store %122, %arg2[%124] : memref<8192xf32>
    %125 = arith.addi %23, %c56 : index
    %126 = vector.extract %12[28] : vector<32xf32>
    %127 = arith.addi %25, %125 : index
    %128 = arith.addi %27, %127 : index
    memref.store %126, %arg2[%128] : memref<8192xf32>
    %129 = arith.addi %23, %c57 : index
    %130 = vector.extract %12[29] : vector<32xf32>
    %131 = arith.addi %25, %129 : index
    %132 = arith.addi %27, %131 : index
    memref.store %130, %arg2[%132] : memref<8192xf32>
    %133 = vector.extract %12[30] : vector<32xf32>
    %134 = arith.addi %35, %125 : index
    %135 = arith.addi %27, %134 : index
    memref.store %133, %arg2[%135] : memref<8192xf32>
    %136 = vector.extract %12[31] : vector<32xf32>
    %137 = arith.addi %35, %129 : index
    %138 = arith.addi %27, %137 : index
    memref.store %136, %arg2[%138] : memref<8192xf32>
    return
  }
}

