// The i8 form of wave32-mma-kernel.mlir (made by `tessera-opt
// --tessera-gpu-graph-pipeline="schedule={mma=wmma tile-m=64 tile-n=32
// tile-k=16}"` from a 128x32 x 32x64 i8 matmul with i32 results, one 32-lane
// wave per group): vulkan runs the op with integer multiply-adds lane by
// lane, and the Tile IR interpreter's own implementation checks it exactly.
// (On hip's gfx1100 the same op is v_wmma_i32_16x16x16_iu8:
// plugins/hip/test/wmma.mlir.)
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: i32 results: max abs error 0 {{.*}}: PASS
// CHECK: exit code 0
module {
  func.func @f_k0_gemm(%arg0: memref<4096xi8>, %arg1: memref<2048xi8>, %arg2: memref<8192xi32>) attributes {tessera_tile.grid = array<i64: 2, 2, 1>, tessera_tile.group_size = array<i64: 32>} {
    %c0 = arith.constant 0 : index
    %c768 = arith.constant 768 : index
    %c62 = arith.constant 62 : index
    %c60 = arith.constant 60 : index
    %c58 = arith.constant 58 : index
    %c56 = arith.constant 56 : index
    %c54 = arith.constant 54 : index
    %c52 = arith.constant 52 : index
    %c50 = arith.constant 50 : index
    %c46 = arith.constant 46 : index
    %c44 = arith.constant 44 : index
    %c42 = arith.constant 42 : index
    %c40 = arith.constant 40 : index
    %c38 = arith.constant 38 : index
    %c36 = arith.constant 36 : index
    %c34 = arith.constant 34 : index
    %c30 = arith.constant 30 : index
    %c28 = arith.constant 28 : index
    %c26 = arith.constant 26 : index
    %c24 = arith.constant 24 : index
    %c22 = arith.constant 22 : index
    %c20 = arith.constant 20 : index
    %c18 = arith.constant 18 : index
    %c14 = arith.constant 14 : index
    %c12 = arith.constant 12 : index
    %c10 = arith.constant 10 : index
    %c8 = arith.constant 8 : index
    %c6 = arith.constant 6 : index
    %c4 = arith.constant 4 : index
    %c8192 = arith.constant 8192 : index
    %cst = arith.constant dense<0> : vector<64xi32>
    %c96 = arith.constant 96 : index
    %c3072 = arith.constant 3072 : index
    %c48 = arith.constant 48 : index
    %c16 = arith.constant 16 : index
    %c2 = arith.constant 2 : index
    %c2048 = arith.constant 2048 : index
    %c4096 = arith.constant 4096 : index
    %c64 = arith.constant 64 : index
    %c32 = arith.constant 32 : index
    %0 = tessera_tile.lane_id 0 : index
    %1 = tessera_tile.group_id 0 : index
    %2 = tessera_tile.group_id 1 : index
    %3 = tessera_tile.group_id 2 : index
    %4 = arith.divui %0, %c32 : index
    %5 = arith.remui %0, %c32 : index
    %6 = arith.muli %2, %c64 : index
    %7 = arith.muli %1, %c32 : index
    %8 = arith.muli %6, %c32 : index
    %9 = arith.muli %3, %c4096 : index
    %10 = arith.addi %9, %8 : index
    %11 = arith.muli %3, %c2048 : index
    %12 = arith.addi %11, %7 : index
    %13 = tessera_tile.shared_alloc : memref<6144xi8, 3>
    %14 = tessera_tile.shared_alloc : memref<3072xi8, 3>
    %15 = arith.remui %0, %c2 : index
    %16 = arith.muli %15, %c16 : index
    %17 = arith.divui %0, %c2 : index
    %18 = arith.muli %17, %c32 : index
    %19 = arith.addi %18, %16 : index
    %20 = arith.addi %10, %19 : index
    %21 = arith.muli %17, %c48 : index
    %22 = arith.addi %21, %16 : index
    tessera_tile.cp_async %arg0[%20], %13[%22] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %23 = arith.addi %0, %c32 : index
    %24 = arith.remui %23, %c2 : index
    %25 = arith.muli %24, %c16 : index
    %26 = arith.divui %23, %c2 : index
    %27 = arith.muli %26, %c32 : index
    %28 = arith.addi %27, %25 : index
    %29 = arith.addi %10, %28 : index
    %30 = arith.muli %26, %c48 : index
    %31 = arith.addi %30, %25 : index
    tessera_tile.cp_async %arg0[%29], %13[%31] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %32 = arith.addi %0, %c64 : index
    %33 = arith.remui %32, %c2 : index
    %34 = arith.muli %33, %c16 : index
    %35 = arith.divui %32, %c2 : index
    %36 = arith.muli %35, %c32 : index
    %37 = arith.addi %36, %34 : index
    %38 = arith.addi %10, %37 : index
    %39 = arith.muli %35, %c48 : index
    %40 = arith.addi %39, %34 : index
    tessera_tile.cp_async %arg0[%38], %13[%40] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %41 = arith.addi %0, %c96 : index
    %42 = arith.remui %41, %c2 : index
    %43 = arith.muli %42, %c16 : index
    %44 = arith.divui %41, %c2 : index
    %45 = arith.muli %44, %c32 : index
    %46 = arith.addi %45, %43 : index
    %47 = arith.addi %10, %46 : index
    %48 = arith.muli %44, %c48 : index
    %49 = arith.addi %48, %43 : index
    tessera_tile.cp_async %arg0[%47], %13[%49] elements = 16 : memref<4096xi8>, memref<6144xi8, 3>
    %50 = arith.muli %17, %c64 : index
    %51 = arith.addi %50, %16 : index
    %52 = arith.addi %12, %51 : index
    tessera_tile.cp_async %arg1[%52], %14[%22] elements = 16 : memref<2048xi8>, memref<3072xi8, 3>
    %53 = arith.muli %26, %c64 : index
    %54 = arith.addi %53, %25 : index
    %55 = arith.addi %12, %54 : index
    tessera_tile.cp_async %arg1[%55], %14[%31] elements = 16 : memref<2048xi8>, memref<3072xi8, 3>
    tessera_tile.cp_async_commit
    tessera_tile.cp_async_wait 0
    tessera_tile.barrier
    tessera_tile.cp_async_commit
    %56 = arith.muli %4, %c3072 : index
    %57 = tessera_tile.wave32_mma %13[%56], %14[%c0], %cst {lda = 48 : i64, ldb = 48 : i64, m = 64 : i64, n = 32 : i64, operand_type = i8} : memref<6144xi8, 3>, memref<3072xi8, 3>, vector<64xi32>
    %58 = arith.addi %56, %c16 : index
    %59 = tessera_tile.wave32_mma %13[%58], %14[%c768], %57 {lda = 48 : i64, ldb = 48 : i64, m = 64 : i64, n = 32 : i64, operand_type = i8} : memref<6144xi8, 3>, memref<3072xi8, 3>, vector<64xi32>
    %60 = arith.divui %5, %c16 : index
    %61 = arith.muli %4, %c64 : index
    %62 = arith.addi %61, %60 : index
    %63 = arith.addi %6, %62 : index
    %64 = arith.remui %5, %c16 : index
    %65 = arith.addi %7, %64 : index
    %66 = vector.extract %59[0] : vector<64xi32>
    %67 = arith.muli %63, %c64 : index
    %68 = arith.addi %67, %65 : index
    %69 = arith.muli %3, %c8192 : index
    %70 = arith.addi %69, %68 : index
    memref.store %66, %arg2[%70] : memref<8192xi32>
    %71 = arith.addi %63, %c2 : index
    %72 = vector.extract %59[1] : vector<64xi32>
    %73 = arith.muli %71, %c64 : index
    %74 = arith.addi %73, %65 : index
    %75 = arith.addi %69, %74 : index
    memref.store %72, %arg2[%75] : memref<8192xi32>
    %76 = arith.addi %63, %c4 : index
    %77 = vector.extract %59[2] : vector<64xi32>
    %78 = arith.muli %76, %c64 : index
    %79 = arith.addi %78, %65 : index
    %80 = arith.addi %69, %79 : index
    memref.store %77, %arg2[%80] : memref<8192xi32>
    %81 = arith.addi %63, %c6 : index
    %82 = vector.extract %59[3] : vector<64xi32>
    %83 = arith.muli %81, %c64 : index
    %84 = arith.addi %83, %65 : index
    %85 = arith.addi %69, %84 : index
    memref.store %82, %arg2[%85] : memref<8192xi32>
    %86 = arith.addi %63, %c8 : index
    %87 = vector.extract %59[4] : vector<64xi32>
    %88 = arith.muli %86, %c64 : index
    %89 = arith.addi %88, %65 : index
    %90 = arith.addi %69, %89 : index
    memref.store %87, %arg2[%90] : memref<8192xi32>
    %91 = arith.addi %63, %c10 : index
    %92 = vector.extract %59[5] : vector<64xi32>
    %93 = arith.muli %91, %c64 : index
    %94 = arith.addi %93, %65 : index
    %95 = arith.addi %69, %94 : index
    memref.store %92, %arg2[%95] : memref<8192xi32>
    %96 = arith.addi %63, %c12 : index
    %97 = vector.extract %59[6] : vector<64xi32>
    %98 = arith.muli %96, %c64 : index
    %99 = arith.addi %98, %65 : index
    %100 = arith.addi %69, %99 : index
    memref.store %97, %arg2[%100] : memref<8192xi32>
    %101 = arith.addi %63, %c14 : index
    %102 = vector.extract %59[7] : vector<64xi32>
    %103 = arith.muli %101, %c64 : index
    %104 = arith.addi %103, %65 : index
    %105 = arith.addi %69, %104 : index
    memref.store %102, %arg2[%105] : memref<8192xi32>
    %106 = arith.addi %65, %c16 : index
    %107 = vector.extract %59[8] : vector<64xi32>
    %108 = arith.addi %67, %106 : index
    %109 = arith.addi %69, %108 : index
    memref.store %107, %arg2[%109] : memref<8192xi32>
    %110 = vector.extract %59[9] : vector<64xi32>
    %111 = arith.addi %73, %106 : index
    %112 = arith.addi %69, %111 : index
    memref.store %110, %arg2[%112] : memref<8192xi32>
    %113 = vector.extract %59[10] : vector<64xi32>
    %114 = arith.addi %78, %106 : index
    %115 = arith.addi %69, %114 : index
    memref.store %113, %arg2[%115] : memref<8192xi32>
    %116 = vector.extract %59[11] : vector<64xi32>
    %117 = arith.addi %83, %106 : index
    %118 = arith.addi %69, %117 : index
    memref.store %116, %arg2[%118] : memref<8192xi32>
    %119 = vector.extract %59[12] : vector<64xi32>
    %120 = arith.addi %88, %106 : index
    %121 = arith.addi %69, %120 : index
    memref.store %119, %arg2[%121] : memref<8192xi32>
    %122 = vector.extract %59[13] : vector<64xi32>
    %123 = arith.addi %93, %106 : index
    %124 = arith.addi %69, %123 : index
    memref.store %122, %arg2[%124] : memref<8192xi32>
    %125 = vector.extract %59[14] : vector<64xi32>
    %126 = arith.addi %98, %106 : index
    %127 = arith.addi %69, %126 : index
    memref.store %125, %arg2[%127] : memref<8192xi32>
    %128 = vector.extract %59[15] : vector<64xi32>
    %129 = arith.addi %103, %106 : index
    %130 = arith.addi %69, %129 : index
    memref.store %128, %arg2[%130] : memref<8192xi32>
    %131 = arith.addi %63, %c16 : index
    %132 = vector.extract %59[16] : vector<64xi32>
    %133 = arith.muli %131, %c64 : index
    %134 = arith.addi %133, %65 : index
    %135 = arith.addi %69, %134 : index
    memref.store %132, %arg2[%135] : memref<8192xi32>
    %136 = arith.addi %63, %c18 : index
    %137 = vector.extract %59[17] : vector<64xi32>
    %138 = arith.muli %136, %c64 : index
    %139 = arith.addi %138, %65 : index
    %140 = arith.addi %69, %139 : index
    memref.store %137, %arg2[%140] : memref<8192xi32>
    %141 = arith.addi %63, %c20 : index
    %142 = vector.extract %59[18] : vector<64xi32>
    %143 = arith.muli %141, %c64 : index
    %144 = arith.addi %143, %65 : index
    %145 = arith.addi %69, %144 : index
    memref.store %142, %arg2[%145] : memref<8192xi32>
    %146 = arith.addi %63, %c22 : index
    %147 = vector.extract %59[19] : vector<64xi32>
    %148 = arith.muli %146, %c64 : index
    %149 = arith.addi %148, %65 : index
    %150 = arith.addi %69, %149 : index
    memref.store %147, %arg2[%150] : memref<8192xi32>
    %151 = arith.addi %63, %c24 : index
    %152 = vector.extract %59[20] : vector<64xi32>
    %153 = arith.muli %151, %c64 : index
    %154 = arith.addi %153, %65 : index
    %155 = arith.addi %69, %154 : index
    memref.store %152, %arg2[%155] : memref<8192xi32>
    %156 = arith.addi %63, %c26 : index
    %157 = vector.extract %59[21] : vector<64xi32>
    %158 = arith.muli %156, %c64 : index
    %159 = arith.addi %158, %65 : index
    %160 = arith.addi %69, %159 : index
    memref.store %157, %arg2[%160] : memref<8192xi32>
    %161 = arith.addi %63, %c28 : index
    %162 = vector.extract %59[22] : vector<64xi32>
    %163 = arith.muli %161, %c64 : index
    %164 = arith.addi %163, %65 : index
    %165 = arith.addi %69, %164 : index
    memref.store %162, %arg2[%165] : memref<8192xi32>
    %166 = arith.addi %63, %c30 : index
    %167 = vector.extract %59[23] : vector<64xi32>
    %168 = arith.muli %166, %c64 : index
    %169 = arith.addi %168, %65 : index
    %170 = arith.addi %69, %169 : index
    memref.store %167, %arg2[%170] : memref<8192xi32>
    %171 = vector.extract %59[24] : vector<64xi32>
    %172 = arith.addi %133, %106 : index
    %173 = arith.addi %69, %172 : index
    memref.store %171, %arg2[%173] : memref<8192xi32>
    %174 = vector.extract %59[25] : vector<64xi32>
    %175 = arith.addi %138, %106 : index
    %176 = arith.addi %69, %175 : index
    memref.store %174, %arg2[%176] : memref<8192xi32>
    %177 = vector.extract %59[26] : vector<64xi32>
    %178 = arith.addi %143, %106 : index
    %179 = arith.addi %69, %178 : index
    memref.store %177, %arg2[%179] : memref<8192xi32>
    %180 = vector.extract %59[27] : vector<64xi32>
    %181 = arith.addi %148, %106 : index
    %182 = arith.addi %69, %181 : index
    memref.store %180, %arg2[%182] : memref<8192xi32>
    %183 = vector.extract %59[28] : vector<64xi32>
    %184 = arith.addi %153, %106 : index
    %185 = arith.addi %69, %184 : index
    memref.store %183, %arg2[%185] : memref<8192xi32>
    %186 = vector.extract %59[29] : vector<64xi32>
    %187 = arith.addi %158, %106 : index
    %188 = arith.addi %69, %187 : index
    memref.store %186, %arg2[%188] : memref<8192xi32>
    %189 = vector.extract %59[30] : vector<64xi32>
    %190 = arith.addi %163, %106 : index
    %191 = arith.addi %69, %190 : index
    memref.store %189, %arg2[%191] : memref<8192xi32>
    %192 = vector.extract %59[31] : vector<64xi32>
    %193 = arith.addi %168, %106 : index
    %194 = arith.addi %69, %193 : index
    memref.store %192, %arg2[%194] : memref<8192xi32>
    %195 = arith.addi %63, %c32 : index
    %196 = vector.extract %59[32] : vector<64xi32>
    %197 = arith.muli %195, %c64 : index
    %198 = arith.addi %197, %65 : index
    %199 = arith.addi %69, %198 : index
    memref.store %196, %arg2[%199] : memref<8192xi32>
    %200 = arith.addi %63, %c34 : index
    %201 = vector.extract %59[33] : vector<64xi32>
    %202 = arith.muli %200, %c64 : index
    %203 = arith.addi %202, %65 : index
    %204 = arith.addi %69, %203 : index
    memref.store %201, %arg2[%204] : memref<8192xi32>
    %205 = arith.addi %63, %c36 : index
    %206 = vector.extract %59[34] : vector<64xi32>
    %207 = arith.muli %205, %c64 : index
    %208 = arith.addi %207, %65 : index
    %209 = arith.addi %69, %208 : index
    memref.store %206, %arg2[%209] : memref<8192xi32>
    %210 = arith.addi %63, %c38 : index
    %211 = vector.extract %59[35] : vector<64xi32>
    %212 = arith.muli %210, %c64 : index
    %213 = arith.addi %212, %65 : index
    %214 = arith.addi %69, %213 : index
    memref.store %211, %arg2[%214] : memref<8192xi32>
    %215 = arith.addi %63, %c40 : index
    %216 = vector.extract %59[36] : vector<64xi32>
    %217 = arith.muli %215, %c64 : index
    %218 = arith.addi %217, %65 : index
    %219 = arith.addi %69, %218 : index
    memref.store %216, %arg2[%219] : memref<8192xi32>
    %220 = arith.addi %63, %c42 : index
    %221 = vector.extract %59[37] : vector<64xi32>
    %222 = arith.muli %220, %c64 : index
    %223 = arith.addi %222, %65 : index
    %224 = arith.addi %69, %223 : index
    memref.store %221, %arg2[%224] : memref<8192xi32>
    %225 = arith.addi %63, %c44 : index
    %226 = vector.extract %59[38] : vector<64xi32>
    %227 = arith.muli %225, %c64 : index
    %228 = arith.addi %227, %65 : index
    %229 = arith.addi %69, %228 : index
    memref.store %226, %arg2[%229] : memref<8192xi32>
    %230 = arith.addi %63, %c46 : index
    %231 = vector.extract %59[39] : vector<64xi32>
    %232 = arith.muli %230, %c64 : index
    %233 = arith.addi %232, %65 : index
    %234 = arith.addi %69, %233 : index
    memref.store %231, %arg2[%234] : memref<8192xi32>
    %235 = vector.extract %59[40] : vector<64xi32>
    %236 = arith.addi %197, %106 : index
    %237 = arith.addi %69, %236 : index
    memref.store %235, %arg2[%237] : memref<8192xi32>
    %238 = vector.extract %59[41] : vector<64xi32>
    %239 = arith.addi %202, %106 : index
    %240 = arith.addi %69, %239 : index
    memref.store %238, %arg2[%240] : memref<8192xi32>
    %241 = vector.extract %59[42] : vector<64xi32>
    %242 = arith.addi %207, %106 : index
    %243 = arith.addi %69, %242 : index
    memref.store %241, %arg2[%243] : memref<8192xi32>
    %244 = vector.extract %59[43] : vector<64xi32>
    %245 = arith.addi %212, %106 : index
    %246 = arith.addi %69, %245 : index
    memref.store %244, %arg2[%246] : memref<8192xi32>
    %247 = vector.extract %59[44] : vector<64xi32>
    %248 = arith.addi %217, %106 : index
    %249 = arith.addi %69, %248 : index
    memref.store %247, %arg2[%249] : memref<8192xi32>
    %250 = vector.extract %59[45] : vector<64xi32>
    %251 = arith.addi %222, %106 : index
    %252 = arith.addi %69, %251 : index
    memref.store %250, %arg2[%252] : memref<8192xi32>
    %253 = vector.extract %59[46] : vector<64xi32>
    %254 = arith.addi %227, %106 : index
    %255 = arith.addi %69, %254 : index
    memref.store %253, %arg2[%255] : memref<8192xi32>
    %256 = vector.extract %59[47] : vector<64xi32>
    %257 = arith.addi %232, %106 : index
    %258 = arith.addi %69, %257 : index
    memref.store %256, %arg2[%258] : memref<8192xi32>
    %259 = arith.addi %63, %c48 : index
    %260 = vector.extract %59[48] : vector<64xi32>
    %261 = arith.muli %259, %c64 : index
    %262 = arith.addi %261, %65 : index
    %263 = arith.addi %69, %262 : index
    memref.store %260, %arg2[%263] : memref<8192xi32>
    %264 = arith.addi %63, %c50 : index
    %265 = vector.extract %59[49] : vector<64xi32>
    %266 = arith.muli %264, %c64 : index
    %267 = arith.addi %266, %65 : index
    %268 = arith.addi %69, %267 : index
    memref.store %265, %arg2[%268] : memref<8192xi32>
    %269 = arith.addi %63, %c52 : index
    %270 = vector.extract %59[50] : vector<64xi32>
    %271 = arith.muli %269, %c64 : index
    %272 = arith.addi %271, %65 : index
    %273 = arith.addi %69, %272 : index
    memref.store %270, %arg2[%273] : memref<8192xi32>
    %274 = arith.addi %63, %c54 : index
    %275 = vector.extract %59[51] : vector<64xi32>
    %276 = arith.muli %274, %c64 : index
    %277 = arith.addi %276, %65 : index
    %278 = arith.addi %69, %277 : index
    memref.store %275, %arg2[%278] : memref<8192xi32>
    %279 = arith.addi %63, %c56 : index
    %280 = vector.extract %59[52] : vector<64xi32>
    %281 = arith.muli %279, %c64 : index
    %282 = arith.addi %281, %65 : index
    %283 = arith.addi %69, %282 : index
    memref.store %280, %arg2[%283] : memref<8192xi32>
    %284 = arith.addi %63, %c58 : index
    %285 = vector.extract %59[53] : vector<64xi32>
    %286 = arith.muli %284, %c64 : index
    %287 = arith.addi %286, %65 : index
    %288 = arith.addi %69, %287 : index
    memref.store %285, %arg2[%288] : memref<8192xi32>
    %289 = arith.addi %63, %c60 : index
    %290 = vector.extract %59[54] : vector<64xi32>
    %291 = arith.muli %289, %c64 : index
    %292 = arith.addi %291, %65 : index
    %293 = arith.addi %69, %292 : index
    memref.store %290, %arg2[%293] : memref<8192xi32>
    %294 = arith.addi %63, %c62 : index
    %295 = vector.extract %59[55] : vector<64xi32>
    %296 = arith.muli %294, %c64 : index
    %297 = arith.addi %296, %65 : index
    %298 = arith.addi %69, %297 : index
    memref.store %295, %arg2[%298] : memref<8192xi32>
    %299 = vector.extract %59[56] : vector<64xi32>
    %300 = arith.addi %261, %106 : index
    %301 = arith.addi %69, %300 : index
    memref.store %299, %arg2[%301] : memref<8192xi32>
    %302 = vector.extract %59[57] : vector<64xi32>
    %303 = arith.addi %266, %106 : index
    %304 = arith.addi %69, %303 : index
    memref.store %302, %arg2[%304] : memref<8192xi32>
    %305 = vector.extract %59[58] : vector<64xi32>
    %306 = arith.addi %271, %106 : index
    %307 = arith.addi %69, %306 : index
    memref.store %305, %arg2[%307] : memref<8192xi32>
    %308 = vector.extract %59[59] : vector<64xi32>
    %309 = arith.addi %276, %106 : index
    %310 = arith.addi %69, %309 : index
    memref.store %308, %arg2[%310] : memref<8192xi32>
    %311 = vector.extract %59[60] : vector<64xi32>
    %312 = arith.addi %281, %106 : index
    %313 = arith.addi %69, %312 : index
    memref.store %311, %arg2[%313] : memref<8192xi32>
    %314 = vector.extract %59[61] : vector<64xi32>
    %315 = arith.addi %286, %106 : index
    %316 = arith.addi %69, %315 : index
    memref.store %314, %arg2[%316] : memref<8192xi32>
    %317 = vector.extract %59[62] : vector<64xi32>
    %318 = arith.addi %291, %106 : index
    %319 = arith.addi %69, %318 : index
    memref.store %317, %arg2[%319] : memref<8192xi32>
    %320 = vector.extract %59[63] : vector<64xi32>
    %321 = arith.addi %296, %106 : index
    %322 = arith.addi %69, %321 : index
    memref.store %320, %arg2[%322] : memref<8192xi32>
    return
  }
}

