// The i8 form of wavefront-mma-kernel.mlir (made by `tessera-opt
// --tessera-gpu-graph-pipeline="schedule={mma=mfma tile-m=64 tile-n=64
// tile-k=16}"` from a 128x32 x 32x128 i8 matmul with i32 results, one
// 64-lane wavefront per group; wavefront_mma is 16 deep for i8): vulkan
// runs the op with integer multiply-adds lane by lane, and the Tile IR
// interpreter's own implementation checks it exactly. (On hip's CDNA
// targets the same op is MFMA: plugins/hip/test/mfma.mlir.)
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: i32 results: max abs error 0 {{.*}}: PASS
// CHECK: exit code 0
module {
  func.func @f_k0_gemm(%arg0: memref<4096xi8>, %arg1: memref<4096xi8>, %arg2: memref<16384xi32>) attributes {tessera_tile.grid = array<i64: 2, 2, 1>, tessera_tile.group_size = array<i64: 64>} {
    %c0 = arith.constant 0 : index
    %c1280 = arith.constant 1280 : index
    %c1 = arith.constant 1 : index
    %c59 = arith.constant 59 : index
    %c58 = arith.constant 58 : index
    %c57 = arith.constant 57 : index
    %c56 = arith.constant 56 : index
    %c51 = arith.constant 51 : index
    %c50 = arith.constant 50 : index
    %c49 = arith.constant 49 : index
    %c43 = arith.constant 43 : index
    %c42 = arith.constant 42 : index
    %c41 = arith.constant 41 : index
    %c40 = arith.constant 40 : index
    %c35 = arith.constant 35 : index
    %c34 = arith.constant 34 : index
    %c33 = arith.constant 33 : index
    %c27 = arith.constant 27 : index
    %c26 = arith.constant 26 : index
    %c25 = arith.constant 25 : index
    %c24 = arith.constant 24 : index
    %c19 = arith.constant 19 : index
    %c18 = arith.constant 18 : index
    %c17 = arith.constant 17 : index
    %c11 = arith.constant 11 : index
    %c10 = arith.constant 10 : index
    %c9 = arith.constant 9 : index
    %c8 = arith.constant 8 : index
    %c3 = arith.constant 3 : index
    %c16384 = arith.constant 16384 : index
    %cst = arith.constant dense<0> : vector<64xi32>
    %c80 = arith.constant 80 : index
    %c128 = arith.constant 128 : index
    %c4 = arith.constant 4 : index
    %c3072 = arith.constant 3072 : index
    %c48 = arith.constant 48 : index
    %c16 = arith.constant 16 : index
    %c2 = arith.constant 2 : index
    %c4096 = arith.constant 4096 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %0 = tessera_tile.lane_id 0 : index
    %1 = tessera_tile.group_id 0 : index
    %2 = tessera_tile.group_id 1 : index
    %3 = tessera_tile.group_id 2 : index
    %4 = arith.divui %0, %c64 : index
    %5 = arith.remui %0, %c64 : index
    %6 = arith.muli %2, %c64 : index
    %7 = arith.muli %1, %c64 : index
    %8 = arith.muli %6, %c32 : index
    %9 = arith.muli %3, %c4096 : index
    %10 = arith.addi %9, %8 : index
    %11 = arith.addi %9, %7 : index
    %12 = tessera_tile.shared_alloc : memref<6144xi8, 3>
    %13 = tessera_tile.shared_alloc : memref<5120xi8, 3>
    %14 = arith.remui %0, %c2 : index
    %15 = arith.muli %14, %c16 : index
    %16 = arith.divui %0, %c2 : index
    %17 = arith.muli %16, %c32 : index
    %18 = arith.addi %17, %15 : index
    %19 = arith.addi %10, %18 : index
    %20 = arith.muli %16, %c48 : index
    %21 = arith.addi %20, %15 : index
    tessera_tile.cp_async %arg0[%19], %12[%21] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %22 = arith.addi %0, %c64 : index
    %23 = arith.remui %22, %c2 : index
    %24 = arith.muli %23, %c16 : index
    %25 = arith.divui %22, %c2 : index
    %26 = arith.muli %25, %c32 : index
    %27 = arith.addi %26, %24 : index
    %28 = arith.addi %10, %27 : index
    %29 = arith.muli %25, %c48 : index
    %30 = arith.addi %29, %24 : index
    tessera_tile.cp_async %arg0[%28], %12[%30] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %31 = arith.remui %0, %c4 : index
    %32 = arith.muli %31, %c16 : index
    %33 = arith.divui %0, %c4 : index
    %34 = arith.muli %33, %c128 : index
    %35 = arith.addi %34, %32 : index
    %36 = arith.addi %11, %35 : index
    %37 = arith.muli %33, %c80 : index
    %38 = arith.addi %37, %32 : index
    tessera_tile.cp_async %arg1[%36], %13[%38] elements = 16 : memref<4096xi8>, memref<5120xi8, 3>
    %39 = arith.remui %22, %c4 : index
    %40 = arith.muli %39, %c16 : index
    %41 = arith.divui %22, %c4 : index
    %42 = arith.muli %41, %c128 : index
    %43 = arith.addi %42, %40 : index
    %44 = arith.addi %11, %43 : index
    %45 = arith.muli %41, %c80 : index
    %46 = arith.addi %45, %40 : index
    tessera_tile.cp_async %arg1[%44], %13[%46] elements = 16 : memref<4096xi8>, memref<5120xi8, 3>
    tessera_tile.cp_async_commit
    tessera_tile.cp_async_wait 0
    tessera_tile.barrier
    tessera_tile.cp_async_commit
    %47 = arith.muli %4, %c3072 : index
    %48 = tessera_tile.wavefront_mma %12[%47], %13[%c0], %cst {lda = 48 : i64, ldb = 80 : i64, m = 64 : i64, n = 64 : i64, operand_type = i8} : memref<6144xi8, 3>, memref<5120xi8, 3>, vector<64xi32>
    %49 = arith.addi %47, %c16 : index
    %50 = tessera_tile.wavefront_mma %12[%49], %13[%c1280], %48 {lda = 48 : i64, ldb = 80 : i64, m = 64 : i64, n = 64 : i64, operand_type = i8} : memref<6144xi8, 3>, memref<5120xi8, 3>, vector<64xi32>
    %51 = arith.divui %5, %c32 : index
    %52 = arith.muli %51, %c4 : index
    %53 = arith.muli %4, %c64 : index
    %54 = arith.addi %53, %52 : index
    %55 = arith.addi %6, %54 : index
    %56 = arith.remui %5, %c32 : index
    %57 = arith.addi %7, %56 : index
    %58 = vector.extract %50[0] : vector<64xi32>
    %59 = arith.muli %55, %c128 : index
    %60 = arith.addi %59, %57 : index
    %61 = arith.muli %3, %c16384 : index
    %62 = arith.addi %61, %60 : index
    memref.store %58, %arg2[%62] : memref<16384xi32>
    %63 = arith.addi %55, %c1 : index
    %64 = vector.extract %50[1] : vector<64xi32>
    %65 = arith.muli %63, %c128 : index
    %66 = arith.addi %65, %57 : index
    %67 = arith.addi %61, %66 : index
    memref.store %64, %arg2[%67] : memref<16384xi32>
    %68 = arith.addi %55, %c2 : index
    %69 = vector.extract %50[2] : vector<64xi32>
    %70 = arith.muli %68, %c128 : index
    %71 = arith.addi %70, %57 : index
    %72 = arith.addi %61, %71 : index
    memref.store %69, %arg2[%72] : memref<16384xi32>
    %73 = arith.addi %55, %c3 : index
    %74 = vector.extract %50[3] : vector<64xi32>
    %75 = arith.muli %73, %c128 : index
    %76 = arith.addi %75, %57 : index
    %77 = arith.addi %61, %76 : index
    memref.store %74, %arg2[%77] : memref<16384xi32>
    %78 = arith.addi %55, %c8 : index
    %79 = vector.extract %50[4] : vector<64xi32>
    %80 = arith.muli %78, %c128 : index
    %81 = arith.addi %80, %57 : index
    %82 = arith.addi %61, %81 : index
    memref.store %79, %arg2[%82] : memref<16384xi32>
    %83 = arith.addi %55, %c9 : index
    %84 = vector.extract %50[5] : vector<64xi32>
    %85 = arith.muli %83, %c128 : index
    %86 = arith.addi %85, %57 : index
    %87 = arith.addi %61, %86 : index
    memref.store %84, %arg2[%87] : memref<16384xi32>
    %88 = arith.addi %55, %c10 : index
    %89 = vector.extract %50[6] : vector<64xi32>
    %90 = arith.muli %88, %c128 : index
    %91 = arith.addi %90, %57 : index
    %92 = arith.addi %61, %91 : index
    memref.store %89, %arg2[%92] : memref<16384xi32>
    %93 = arith.addi %55, %c11 : index
    %94 = vector.extract %50[7] : vector<64xi32>
    %95 = arith.muli %93, %c128 : index
    %96 = arith.addi %95, %57 : index
    %97 = arith.addi %61, %96 : index
    memref.store %94, %arg2[%97] : memref<16384xi32>
    %98 = arith.addi %55, %c16 : index
    %99 = vector.extract %50[8] : vector<64xi32>
    %100 = arith.muli %98, %c128 : index
    %101 = arith.addi %100, %57 : index
    %102 = arith.addi %61, %101 : index
    memref.store %99, %arg2[%102] : memref<16384xi32>
    %103 = arith.addi %55, %c17 : index
    %104 = vector.extract %50[9] : vector<64xi32>
    %105 = arith.muli %103, %c128 : index
    %106 = arith.addi %105, %57 : index
    %107 = arith.addi %61, %106 : index
    memref.store %104, %arg2[%107] : memref<16384xi32>
    %108 = arith.addi %55, %c18 : index
    %109 = vector.extract %50[10] : vector<64xi32>
    %110 = arith.muli %108, %c128 : index
    %111 = arith.addi %110, %57 : index
    %112 = arith.addi %61, %111 : index
    memref.store %109, %arg2[%112] : memref<16384xi32>
    %113 = arith.addi %55, %c19 : index
    %114 = vector.extract %50[11] : vector<64xi32>
    %115 = arith.muli %113, %c128 : index
    %116 = arith.addi %115, %57 : index
    %117 = arith.addi %61, %116 : index
    memref.store %114, %arg2[%117] : memref<16384xi32>
    %118 = arith.addi %55, %c24 : index
    %119 = vector.extract %50[12] : vector<64xi32>
    %120 = arith.muli %118, %c128 : index
    %121 = arith.addi %120, %57 : index
    %122 = arith.addi %61, %121 : index
    memref.store %119, %arg2[%122] : memref<16384xi32>
    %123 = arith.addi %55, %c25 : index
    %124 = vector.extract %50[13] : vector<64xi32>
    %125 = arith.muli %123, %c128 : index
    %126 = arith.addi %125, %57 : index
    %127 = arith.addi %61, %126 : index
    memref.store %124, %arg2[%127] : memref<16384xi32>
    %128 = arith.addi %55, %c26 : index
    %129 = vector.extract %50[14] : vector<64xi32>
    %130 = arith.muli %128, %c128 : index
    %131 = arith.addi %130, %57 : index
    %132 = arith.addi %61, %131 : index
    memref.store %129, %arg2[%132] : memref<16384xi32>
    %133 = arith.addi %55, %c27 : index
    %134 = vector.extract %50[15] : vector<64xi32>
    %135 = arith.muli %133, %c128 : index
    %136 = arith.addi %135, %57 : index
    %137 = arith.addi %61, %136 : index
    memref.store %134, %arg2[%137] : memref<16384xi32>
    %138 = arith.addi %57, %c32 : index
    %139 = vector.extract %50[16] : vector<64xi32>
    %140 = arith.addi %59, %138 : index
    %141 = arith.addi %61, %140 : index
    memref.store %139, %arg2[%141] : memref<16384xi32>
    %142 = vector.extract %50[17] : vector<64xi32>
    %143 = arith.addi %65, %138 : index
    %144 = arith.addi %61, %143 : index
    memref.store %142, %arg2[%144] : memref<16384xi32>
    %145 = vector.extract %50[18] : vector<64xi32>
    %146 = arith.addi %70, %138 : index
    %147 = arith.addi %61, %146 : index
    memref.store %145, %arg2[%147] : memref<16384xi32>
    %148 = vector.extract %50[19] : vector<64xi32>
    %149 = arith.addi %75, %138 : index
    %150 = arith.addi %61, %149 : index
    memref.store %148, %arg2[%150] : memref<16384xi32>
    %151 = vector.extract %50[20] : vector<64xi32>
    %152 = arith.addi %80, %138 : index
    %153 = arith.addi %61, %152 : index
    memref.store %151, %arg2[%153] : memref<16384xi32>
    %154 = vector.extract %50[21] : vector<64xi32>
    %155 = arith.addi %85, %138 : index
    %156 = arith.addi %61, %155 : index
    memref.store %154, %arg2[%156] : memref<16384xi32>
    %157 = vector.extract %50[22] : vector<64xi32>
    %158 = arith.addi %90, %138 : index
    %159 = arith.addi %61, %158 : index
    memref.store %157, %arg2[%159] : memref<16384xi32>
    %160 = vector.extract %50[23] : vector<64xi32>
    %161 = arith.addi %95, %138 : index
    %162 = arith.addi %61, %161 : index
    memref.store %160, %arg2[%162] : memref<16384xi32>
    %163 = vector.extract %50[24] : vector<64xi32>
    %164 = arith.addi %100, %138 : index
    %165 = arith.addi %61, %164 : index
    memref.store %163, %arg2[%165] : memref<16384xi32>
    %166 = vector.extract %50[25] : vector<64xi32>
    %167 = arith.addi %105, %138 : index
    %168 = arith.addi %61, %167 : index
    memref.store %166, %arg2[%168] : memref<16384xi32>
    %169 = vector.extract %50[26] : vector<64xi32>
    %170 = arith.addi %110, %138 : index
    %171 = arith.addi %61, %170 : index
    memref.store %169, %arg2[%171] : memref<16384xi32>
    %172 = vector.extract %50[27] : vector<64xi32>
    %173 = arith.addi %115, %138 : index
    %174 = arith.addi %61, %173 : index
    memref.store %172, %arg2[%174] : memref<16384xi32>
    %175 = vector.extract %50[28] : vector<64xi32>
    %176 = arith.addi %120, %138 : index
    %177 = arith.addi %61, %176 : index
    memref.store %175, %arg2[%177] : memref<16384xi32>
    %178 = vector.extract %50[29] : vector<64xi32>
    %179 = arith.addi %125, %138 : index
    %180 = arith.addi %61, %179 : index
    memref.store %178, %arg2[%180] : memref<16384xi32>
    %181 = vector.extract %50[30] : vector<64xi32>
    %182 = arith.addi %130, %138 : index
    %183 = arith.addi %61, %182 : index
    memref.store %181, %arg2[%183] : memref<16384xi32>
    %184 = vector.extract %50[31] : vector<64xi32>
    %185 = arith.addi %135, %138 : index
    %186 = arith.addi %61, %185 : index
    memref.store %184, %arg2[%186] : memref<16384xi32>
    %187 = arith.addi %55, %c32 : index
    %188 = vector.extract %50[32] : vector<64xi32>
    %189 = arith.muli %187, %c128 : index
    %190 = arith.addi %189, %57 : index
    %191 = arith.addi %61, %190 : index
    memref.store %188, %arg2[%191] : memref<16384xi32>
    %192 = arith.addi %55, %c33 : index
    %193 = vector.extract %50[33] : vector<64xi32>
    %194 = arith.muli %192, %c128 : index
    %195 = arith.addi %194, %57 : index
    %196 = arith.addi %61, %195 : index
    memref.store %193, %arg2[%196] : memref<16384xi32>
    %197 = arith.addi %55, %c34 : index
    %198 = vector.extract %50[34] : vector<64xi32>
    %199 = arith.muli %197, %c128 : index
    %200 = arith.addi %199, %57 : index
    %201 = arith.addi %61, %200 : index
    memref.store %198, %arg2[%201] : memref<16384xi32>
    %202 = arith.addi %55, %c35 : index
    %203 = vector.extract %50[35] : vector<64xi32>
    %204 = arith.muli %202, %c128 : index
    %205 = arith.addi %204, %57 : index
    %206 = arith.addi %61, %205 : index
    memref.store %203, %arg2[%206] : memref<16384xi32>
    %207 = arith.addi %55, %c40 : index
    %208 = vector.extract %50[36] : vector<64xi32>
    %209 = arith.muli %207, %c128 : index
    %210 = arith.addi %209, %57 : index
    %211 = arith.addi %61, %210 : index
    memref.store %208, %arg2[%211] : memref<16384xi32>
    %212 = arith.addi %55, %c41 : index
    %213 = vector.extract %50[37] : vector<64xi32>
    %214 = arith.muli %212, %c128 : index
    %215 = arith.addi %214, %57 : index
    %216 = arith.addi %61, %215 : index
    memref.store %213, %arg2[%216] : memref<16384xi32>
    %217 = arith.addi %55, %c42 : index
    %218 = vector.extract %50[38] : vector<64xi32>
    %219 = arith.muli %217, %c128 : index
    %220 = arith.addi %219, %57 : index
    %221 = arith.addi %61, %220 : index
    memref.store %218, %arg2[%221] : memref<16384xi32>
    %222 = arith.addi %55, %c43 : index
    %223 = vector.extract %50[39] : vector<64xi32>
    %224 = arith.muli %222, %c128 : index
    %225 = arith.addi %224, %57 : index
    %226 = arith.addi %61, %225 : index
    memref.store %223, %arg2[%226] : memref<16384xi32>
    %227 = arith.addi %55, %c48 : index
    %228 = vector.extract %50[40] : vector<64xi32>
    %229 = arith.muli %227, %c128 : index
    %230 = arith.addi %229, %57 : index
    %231 = arith.addi %61, %230 : index
    memref.store %228, %arg2[%231] : memref<16384xi32>
    %232 = arith.addi %55, %c49 : index
    %233 = vector.extract %50[41] : vector<64xi32>
    %234 = arith.muli %232, %c128 : index
    %235 = arith.addi %234, %57 : index
    %236 = arith.addi %61, %235 : index
    memref.store %233, %arg2[%236] : memref<16384xi32>
    %237 = arith.addi %55, %c50 : index
    %238 = vector.extract %50[42] : vector<64xi32>
    %239 = arith.muli %237, %c128 : index
    %240 = arith.addi %239, %57 : index
    %241 = arith.addi %61, %240 : index
    memref.store %238, %arg2[%241] : memref<16384xi32>
    %242 = arith.addi %55, %c51 : index
    %243 = vector.extract %50[43] : vector<64xi32>
    %244 = arith.muli %242, %c128 : index
    %245 = arith.addi %244, %57 : index
    %246 = arith.addi %61, %245 : index
    memref.store %243, %arg2[%246] : memref<16384xi32>
    %247 = arith.addi %55, %c56 : index
    %248 = vector.extract %50[44] : vector<64xi32>
    %249 = arith.muli %247, %c128 : index
    %250 = arith.addi %249, %57 : index
    %251 = arith.addi %61, %250 : index
    memref.store %248, %arg2[%251] : memref<16384xi32>
    %252 = arith.addi %55, %c57 : index
    %253 = vector.extract %50[45] : vector<64xi32>
    %254 = arith.muli %252, %c128 : index
    %255 = arith.addi %254, %57 : index
    %256 = arith.addi %61, %255 : index
    memref.store %253, %arg2[%256] : memref<16384xi32>
    %257 = arith.addi %55, %c58 : index
    %258 = vector.extract %50[46] : vector<64xi32>
    %259 = arith.muli %257, %c128 : index
    %260 = arith.addi %259, %57 : index
    %261 = arith.addi %61, %260 : index
    memref.store %258, %arg2[%261] : memref<16384xi32>
    %262 = arith.addi %55, %c59 : index
    %263 = vector.extract %50[47] : vector<64xi32>
    %264 = arith.muli %262, %c128 : index
    %265 = arith.addi %264, %57 : index
    %266 = arith.addi %61, %265 : index
    memref.store %263, %arg2[%266] : memref<16384xi32>
    %267 = vector.extract %50[48] : vector<64xi32>
    %268 = arith.addi %189, %138 : index
    %269 = arith.addi %61, %268 : index
    memref.store %267, %arg2[%269] : memref<16384xi32>
    %270 = vector.extract %50[49] : vector<64xi32>
    %271 = arith.addi %194, %138 : index
    %272 = arith.addi %61, %271 : index
    memref.store %270, %arg2[%272] : memref<16384xi32>
    %273 = vector.extract %50[50] : vector<64xi32>
    %274 = arith.addi %199, %138 : index
    %275 = arith.addi %61, %274 : index
    memref.store %273, %arg2[%275] : memref<16384xi32>
    %276 = vector.extract %50[51] : vector<64xi32>
    %277 = arith.addi %204, %138 : index
    %278 = arith.addi %61, %277 : index
    memref.store %276, %arg2[%278] : memref<16384xi32>
    %279 = vector.extract %50[52] : vector<64xi32>
    %280 = arith.addi %209, %138 : index
    %281 = arith.addi %61, %280 : index
    memref.store %279, %arg2[%281] : memref<16384xi32>
    %282 = vector.extract %50[53] : vector<64xi32>
    %283 = arith.addi %214, %138 : index
    %284 = arith.addi %61, %283 : index
    memref.store %282, %arg2[%284] : memref<16384xi32>
    %285 = vector.extract %50[54] : vector<64xi32>
    %286 = arith.addi %219, %138 : index
    %287 = arith.addi %61, %286 : index
    memref.store %285, %arg2[%287] : memref<16384xi32>
    %288 = vector.extract %50[55] : vector<64xi32>
    %289 = arith.addi %224, %138 : index
    %290 = arith.addi %61, %289 : index
    memref.store %288, %arg2[%290] : memref<16384xi32>
    %291 = vector.extract %50[56] : vector<64xi32>
    %292 = arith.addi %229, %138 : index
    %293 = arith.addi %61, %292 : index
    memref.store %291, %arg2[%293] : memref<16384xi32>
    %294 = vector.extract %50[57] : vector<64xi32>
    %295 = arith.addi %234, %138 : index
    %296 = arith.addi %61, %295 : index
    memref.store %294, %arg2[%296] : memref<16384xi32>
    %297 = vector.extract %50[58] : vector<64xi32>
    %298 = arith.addi %239, %138 : index
    %299 = arith.addi %61, %298 : index
    memref.store %297, %arg2[%299] : memref<16384xi32>
    %300 = vector.extract %50[59] : vector<64xi32>
    %301 = arith.addi %244, %138 : index
    %302 = arith.addi %61, %301 : index
    memref.store %300, %arg2[%302] : memref<16384xi32>
    %303 = vector.extract %50[60] : vector<64xi32>
    %304 = arith.addi %249, %138 : index
    %305 = arith.addi %61, %304 : index
    memref.store %303, %arg2[%305] : memref<16384xi32>
    %306 = vector.extract %50[61] : vector<64xi32>
    %307 = arith.addi %254, %138 : index
    %308 = arith.addi %61, %307 : index
    memref.store %306, %arg2[%308] : memref<16384xi32>
    %309 = vector.extract %50[62] : vector<64xi32>
    %310 = arith.addi %259, %138 : index
    %311 = arith.addi %61, %310 : index
    memref.store %309, %arg2[%311] : memref<16384xi32>
    %312 = vector.extract %50[63] : vector<64xi32>
    %313 = arith.addi %264, %138 : index
    %314 = arith.addi %61, %313 : index
    memref.store %312, %arg2[%314] : memref<16384xi32>
    return
  }
}


