// A Tile IR GEMM kernel built on tessera_tile.subgroup_mma (made by
// `tessera-opt --tessera-gpu-graph-pipeline="schedule={mma=sync tile-m=64
// tile-n=64 tile-k=16}"` from a 128x32 x 32x64 f16 matmul, two 32-lane
// subgroups per group): vulkan runs the op lane by lane, and the Tile IR
// interpreter's own implementation of the op's layout checks it, exit 0.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f32 results: max abs error {{.*}}: PASS
// CHECK: exit code 0

module {
  func.func @f_k0_gemm(%arg0: memref<4096xf16>, %arg1: memref<2048xf16>, %arg2: memref<8192xf32>) attributes {tessera_tile.grid = array<i64: 1, 2, 1>, tessera_tile.group_size = array<i64: 64>} {
    %c0 = arith.constant 0 : index
    %c56 = arith.constant 56 : index
    %c48 = arith.constant 48 : index
    %c40 = arith.constant 40 : index
    %c25 = arith.constant 25 : index
    %c17 = arith.constant 17 : index
    %c9 = arith.constant 9 : index
    %c8192 = arith.constant 8192 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant dense<0.000000e+00> : vector<64xf32>
    %c1152 = arith.constant 1152 : index
    %c72 = arith.constant 72 : index
    %c1536 = arith.constant 1536 : index
    %c24 = arith.constant 24 : index
    %c8 = arith.constant 8 : index
    %c2048 = arith.constant 2048 : index
    %c4096 = arith.constant 4096 : index
    %c64 = arith.constant 64 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %0 = tessera_tile.lane_id 0 : index
    %1 = tessera_tile.group_id 0 : index
    %2 = tessera_tile.group_id 1 : index
    %3 = tessera_tile.group_id 2 : index
    %4 = arith.divui %0, %c32 : index
    %5 = arith.remui %0, %c32 : index
    %6 = arith.divui %4, %c2 : index
    %7 = arith.remui %4, %c2 : index
    %8 = arith.muli %2, %c64 : index
    %9 = arith.muli %1, %c64 : index
    %10 = arith.muli %8, %c32 : index
    %11 = arith.muli %3, %c4096 : index
    %12 = arith.addi %11, %10 : index
    %13 = arith.muli %3, %c2048 : index
    %14 = arith.addi %13, %9 : index
    %15 = tessera_tile.shared_alloc : memref<3072xf16, 3>
    %16 = tessera_tile.shared_alloc : memref<2304xf16, 3>
    %17 = arith.remui %0, %c2 : index
    %18 = arith.muli %17, %c8 : index
    %19 = arith.divui %0, %c2 : index
    %20 = arith.muli %19, %c32 : index
    %21 = arith.addi %20, %18 : index
    %22 = arith.addi %12, %21 : index
    %23 = arith.muli %19, %c24 : index
    %24 = arith.addi %23, %18 : index
    tessera_tile.cp_async %arg0[%22], %15[%24] elements = 8 : memref<4096xf16>, memref<3072xf16, 3>
    %25 = arith.addi %0, %c64 : index
    %26 = arith.remui %25, %c2 : index
    %27 = arith.muli %26, %c8 : index
    %28 = arith.divui %25, %c2 : index
    %29 = arith.muli %28, %c32 : index
    %30 = arith.addi %29, %27 : index
    %31 = arith.addi %12, %30 : index
    %32 = arith.muli %28, %c24 : index
    %33 = arith.addi %32, %27 : index
    tessera_tile.cp_async %arg0[%31], %15[%33] elements = 8 : memref<4096xf16>, memref<3072xf16, 3>
    %34 = arith.remui %0, %c8 : index
    %35 = arith.muli %34, %c8 : index
    %36 = arith.divui %0, %c8 : index
    %37 = arith.muli %36, %c64 : index
    %38 = arith.addi %37, %35 : index
    %39 = arith.addi %14, %38 : index
    %40 = arith.muli %36, %c72 : index
    %41 = arith.addi %40, %35 : index
    tessera_tile.cp_async %arg1[%39], %16[%41] elements = 8 : memref<2048xf16>, memref<2304xf16, 3>
    %42 = arith.remui %25, %c8 : index
    %43 = arith.muli %42, %c8 : index
    %44 = arith.divui %25, %c8 : index
    %45 = arith.muli %44, %c64 : index
    %46 = arith.addi %45, %43 : index
    %47 = arith.addi %14, %46 : index
    %48 = arith.muli %44, %c72 : index
    %49 = arith.addi %48, %43 : index
    tessera_tile.cp_async %arg1[%47], %16[%49] elements = 8 : memref<2048xf16>, memref<2304xf16, 3>
    tessera_tile.cp_async_commit
    %50 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %cst) -> (vector<64xf32>) {
      %275 = arith.remui %arg3, %c2 : index
      tessera_tile.cp_async_wait 0
      tessera_tile.barrier
      %276 = arith.addi %arg3, %c1 : index
      %277 = arith.cmpi ult, %276, %c2 : index
      scf.if %277 {
        %285 = arith.muli %276, %c16 : index
        %286 = arith.remui %276, %c2 : index
        %287 = arith.addi %285, %18 : index
        %288 = arith.addi %20, %287 : index
        %289 = arith.addi %12, %288 : index
        %290 = arith.muli %286, %c1536 : index
        %291 = arith.addi %290, %24 : index
        tessera_tile.cp_async %arg0[%289], %15[%291] elements = 8 : memref<4096xf16>, memref<3072xf16, 3>
        %292 = arith.addi %285, %27 : index
        %293 = arith.addi %29, %292 : index
        %294 = arith.addi %12, %293 : index
        %295 = arith.addi %290, %33 : index
        tessera_tile.cp_async %arg0[%294], %15[%295] elements = 8 : memref<4096xf16>, memref<3072xf16, 3>
        %296 = arith.addi %285, %36 : index
        %297 = arith.muli %296, %c64 : index
        %298 = arith.addi %297, %35 : index
        %299 = arith.addi %14, %298 : index
        %300 = arith.muli %286, %c1152 : index
        %301 = arith.addi %300, %41 : index
        tessera_tile.cp_async %arg1[%299], %16[%301] elements = 8 : memref<2048xf16>, memref<2304xf16, 3>
        %302 = arith.addi %285, %44 : index
        %303 = arith.muli %302, %c64 : index
        %304 = arith.addi %303, %43 : index
        %305 = arith.addi %14, %304 : index
        %306 = arith.addi %300, %49 : index
        tessera_tile.cp_async %arg1[%305], %16[%306] elements = 8 : memref<2048xf16>, memref<2304xf16, 3>
      }
      tessera_tile.cp_async_commit
      %278 = arith.muli %6, %c1536 : index
      %279 = arith.muli %275, %c1536 : index
      %280 = arith.addi %279, %278 : index
      %281 = arith.muli %7, %c32 : index
      %282 = arith.muli %275, %c1152 : index
      %283 = arith.addi %282, %281 : index
      %284 = tessera_tile.subgroup_mma %15[%280], %16[%283], %arg4 {lda = 24 : i64, ldb = 72 : i64, m = 64 : i64, n = 32 : i64, operand_type = f16} : memref<3072xf16, 3>, memref<2304xf16, 3>, vector<64xf32>
      scf.yield %284 : vector<64xf32>
    }
    %51 = arith.divui %5, %c4 : index
    %52 = arith.muli %6, %c64 : index
    %53 = arith.addi %52, %51 : index
    %54 = arith.addi %8, %53 : index
    %55 = arith.remui %5, %c4 : index
    %56 = arith.muli %55, %c2 : index
    %57 = arith.muli %7, %c32 : index
    %58 = arith.addi %57, %56 : index
    %59 = arith.addi %9, %58 : index
    %60 = vector.extract %50[0] : vector<64xf32>
    %61 = arith.muli %54, %c64 : index
    %62 = arith.addi %61, %59 : index
    %63 = arith.muli %3, %c8192 : index
    %64 = arith.addi %63, %62 : index
    memref.store %60, %arg2[%64] : memref<8192xf32>
    %65 = arith.addi %59, %c1 : index
    %66 = vector.extract %50[1] : vector<64xf32>
    %67 = arith.addi %61, %65 : index
    %68 = arith.addi %63, %67 : index
    memref.store %66, %arg2[%68] : memref<8192xf32>
    %69 = arith.addi %54, %c8 : index
    %70 = vector.extract %50[2] : vector<64xf32>
    %71 = arith.muli %69, %c64 : index
    %72 = arith.addi %71, %59 : index
    %73 = arith.addi %63, %72 : index
    memref.store %70, %arg2[%73] : memref<8192xf32>
    %74 = vector.extract %50[3] : vector<64xf32>
    %75 = arith.addi %71, %65 : index
    %76 = arith.addi %63, %75 : index
    memref.store %74, %arg2[%76] : memref<8192xf32>
    %77 = arith.addi %59, %c8 : index
    %78 = vector.extract %50[4] : vector<64xf32>
    %79 = arith.addi %61, %77 : index
    %80 = arith.addi %63, %79 : index
    memref.store %78, %arg2[%80] : memref<8192xf32>
    %81 = arith.addi %59, %c9 : index
    %82 = vector.extract %50[5] : vector<64xf32>
    %83 = arith.addi %61, %81 : index
    %84 = arith.addi %63, %83 : index
    memref.store %82, %arg2[%84] : memref<8192xf32>
    %85 = vector.extract %50[6] : vector<64xf32>
    %86 = arith.addi %71, %77 : index
    %87 = arith.addi %63, %86 : index
    memref.store %85, %arg2[%87] : memref<8192xf32>
    %88 = vector.extract %50[7] : vector<64xf32>
    %89 = arith.addi %71, %81 : index
    %90 = arith.addi %63, %89 : index
    memref.store %88, %arg2[%90] : memref<8192xf32>
    %91 = arith.addi %59, %c16 : index
    %92 = vector.extract %50[8] : vector<64xf32>
    %93 = arith.addi %61, %91 : index
    %94 = arith.addi %63, %93 : index
    memref.store %92, %arg2[%94] : memref<8192xf32>
    %95 = arith.addi %59, %c17 : index
    %96 = vector.extract %50[9] : vector<64xf32>
    %97 = arith.addi %61, %95 : index
    %98 = arith.addi %63, %97 : index
    memref.store %96, %arg2[%98] : memref<8192xf32>
    %99 = vector.extract %50[10] : vector<64xf32>
    %100 = arith.addi %71, %91 : index
    %101 = arith.addi %63, %100 : index
    memref.store %99, %arg2[%101] : memref<8192xf32>
    %102 = vector.extract %50[11] : vector<64xf32>
    %103 = arith.addi %71, %95 : index
    %104 = arith.addi %63, %103 : index
    memref.store %102, %arg2[%104] : memref<8192xf32>
    %105 = arith.addi %59, %c24 : index
    %106 = vector.extract %50[12] : vector<64xf32>
    %107 = arith.addi %61, %105 : index
    %108 = arith.addi %63, %107 : index
    memref.store %106, %arg2[%108] : memref<8192xf32>
    %109 = arith.addi %59, %c25 : index
    %110 = vector.extract %50[13] : vector<64xf32>
    %111 = arith.addi %61, %109 : index
    %112 = arith.addi %63, %111 : index
    memref.store %110, %arg2[%112] : memref<8192xf32>
    %113 = vector.extract %50[14] : vector<64xf32>
    %114 = arith.addi %71, %105 : index
    %115 = arith.addi %63, %114 : index
    memref.store %113, %arg2[%115] : memref<8192xf32>
    %116 = vector.extract %50[15] : vector<64xf32>
    %117 = arith.addi %71, %109 : index
    %118 = arith.addi %63, %117 : index
    memref.store %116, %arg2[%118] : memref<8192xf32>
    %119 = arith.addi %54, %c16 : index
    %120 = vector.extract %50[16] : vector<64xf32>
    %121 = arith.muli %119, %c64 : index
    %122 = arith.addi %121, %59 : index
    %123 = arith.addi %63, %122 : index
    memref.store %120, %arg2[%123] : memref<8192xf32>
    %124 = vector.extract %50[17] : vector<64xf32>
    %125 = arith.addi %121, %65 : index
    %126 = arith.addi %63, %125 : index
    memref.store %124, %arg2[%126] : memref<8192xf32>
    %127 = arith.addi %54, %c24 : index
    %128 = vector.extract %50[18] : vector<64xf32>
    %129 = arith.muli %127, %c64 : index
    %130 = arith.addi %129, %59 : index
    %131 = arith.addi %63, %130 : index
    memref.store %128, %arg2[%131] : memref<8192xf32>
    %132 = vector.extract %50[19] : vector<64xf32>
    %133 = arith.addi %129, %65 : index
    %134 = arith.addi %63, %133 : index
    memref.store %132, %arg2[%134] : memref<8192xf32>
    %135 = vector.extract %50[20] : vector<64xf32>
    %136 = arith.addi %121, %77 : index
    %137 = arith.addi %63, %136 : index
    memref.store %135, %arg2[%137] : memref<8192xf32>
    %138 = vector.extract %50[21] : vector<64xf32>
    %139 = arith.addi %121, %81 : index
    %140 = arith.addi %63, %139 : index
    memref.store %138, %arg2[%140] : memref<8192xf32>
    %141 = vector.extract %50[22] : vector<64xf32>
    %142 = arith.addi %129, %77 : index
    %143 = arith.addi %63, %142 : index
    memref.store %141, %arg2[%143] : memref<8192xf32>
    %144 = vector.extract %50[23] : vector<64xf32>
    %145 = arith.addi %129, %81 : index
    %146 = arith.addi %63, %145 : index
    memref.store %144, %arg2[%146] : memref<8192xf32>
    %147 = vector.extract %50[24] : vector<64xf32>
    %148 = arith.addi %121, %91 : index
    %149 = arith.addi %63, %148 : index
    memref.store %147, %arg2[%149] : memref<8192xf32>
    %150 = vector.extract %50[25] : vector<64xf32>
    %151 = arith.addi %121, %95 : index
    %152 = arith.addi %63, %151 : index
    memref.store %150, %arg2[%152] : memref<8192xf32>
    %153 = vector.extract %50[26] : vector<64xf32>
    %154 = arith.addi %129, %91 : index
    %155 = arith.addi %63, %154 : index
    memref.store %153, %arg2[%155] : memref<8192xf32>
    %156 = vector.extract %50[27] : vector<64xf32>
    %157 = arith.addi %129, %95 : index
    %158 = arith.addi %63, %157 : index
    memref.store %156, %arg2[%158] : memref<8192xf32>
    %159 = vector.extract %50[28] : vector<64xf32>
    %160 = arith.addi %121, %105 : index
    %161 = arith.addi %63, %160 : index
    memref.store %159, %arg2[%161] : memref<8192xf32>
    %162 = vector.extract %50[29] : vector<64xf32>
    %163 = arith.addi %121, %109 : index
    %164 = arith.addi %63, %163 : index
    memref.store %162, %arg2[%164] : memref<8192xf32>
    %165 = vector.extract %50[30] : vector<64xf32>
    %166 = arith.addi %129, %105 : index
    %167 = arith.addi %63, %166 : index
    memref.store %165, %arg2[%167] : memref<8192xf32>
    %168 = vector.extract %50[31] : vector<64xf32>
    %169 = arith.addi %129, %109 : index
    %170 = arith.addi %63, %169 : index
    memref.store %168, %arg2[%170] : memref<8192xf32>
    %171 = arith.addi %54, %c32 : index
    %172 = vector.extract %50[32] : vector<64xf32>
    %173 = arith.muli %171, %c64 : index
    %174 = arith.addi %173, %59 : index
    %175 = arith.addi %63, %174 : index
    memref.store %172, %arg2[%175] : memref<8192xf32>
    %176 = vector.extract %50[33] : vector<64xf32>
    %177 = arith.addi %173, %65 : index
    %178 = arith.addi %63, %177 : index
    memref.store %176, %arg2[%178] : memref<8192xf32>
    %179 = arith.addi %54, %c40 : index
    %180 = vector.extract %50[34] : vector<64xf32>
    %181 = arith.muli %179, %c64 : index
    %182 = arith.addi %181, %59 : index
    %183 = arith.addi %63, %182 : index
    memref.store %180, %arg2[%183] : memref<8192xf32>
    %184 = vector.extract %50[35] : vector<64xf32>
    %185 = arith.addi %181, %65 : index
    %186 = arith.addi %63, %185 : index
    memref.store %184, %arg2[%186] : memref<8192xf32>
    %187 = vector.extract %50[36] : vector<64xf32>
    %188 = arith.addi %173, %77 : index
    %189 = arith.addi %63, %188 : index
    memref.store %187, %arg2[%189] : memref<8192xf32>
    %190 = vector.extract %50[37] : vector<64xf32>
    %191 = arith.addi %173, %81 : index
    %192 = arith.addi %63, %191 : index
    memref.store %190, %arg2[%192] : memref<8192xf32>
    %193 = vector.extract %50[38] : vector<64xf32>
    %194 = arith.addi %181, %77 : index
    %195 = arith.addi %63, %194 : index
    memref.store %193, %arg2[%195] : memref<8192xf32>
    %196 = vector.extract %50[39] : vector<64xf32>
    %197 = arith.addi %181, %81 : index
    %198 = arith.addi %63, %197 : index
    memref.store %196, %arg2[%198] : memref<8192xf32>
    %199 = vector.extract %50[40] : vector<64xf32>
    %200 = arith.addi %173, %91 : index
    %201 = arith.addi %63, %200 : index
    memref.store %199, %arg2[%201] : memref<8192xf32>
    %202 = vector.extract %50[41] : vector<64xf32>
    %203 = arith.addi %173, %95 : index
    %204 = arith.addi %63, %203 : index
    memref.store %202, %arg2[%204] : memref<8192xf32>
    %205 = vector.extract %50[42] : vector<64xf32>
    %206 = arith.addi %181, %91 : index
    %207 = arith.addi %63, %206 : index
    memref.store %205, %arg2[%207] : memref<8192xf32>
    %208 = vector.extract %50[43] : vector<64xf32>
    %209 = arith.addi %181, %95 : index
    %210 = arith.addi %63, %209 : index
    memref.store %208, %arg2[%210] : memref<8192xf32>
    %211 = vector.extract %50[44] : vector<64xf32>
    %212 = arith.addi %173, %105 : index
    %213 = arith.addi %63, %212 : index
    memref.store %211, %arg2[%213] : memref<8192xf32>
    %214 = vector.extract %50[45] : vector<64xf32>
    %215 = arith.addi %173, %109 : index
    %216 = arith.addi %63, %215 : index
    memref.store %214, %arg2[%216] : memref<8192xf32>
    %217 = vector.extract %50[46] : vector<64xf32>
    %218 = arith.addi %181, %105 : index
    %219 = arith.addi %63, %218 : index
    memref.store %217, %arg2[%219] : memref<8192xf32>
    %220 = vector.extract %50[47] : vector<64xf32>
    %221 = arith.addi %181, %109 : index
    %222 = arith.addi %63, %221 : index
    memref.store %220, %arg2[%222] : memref<8192xf32>
    %223 = arith.addi %54, %c48 : index
    %224 = vector.extract %50[48] : vector<64xf32>
    %225 = arith.muli %223, %c64 : index
    %226 = arith.addi %225, %59 : index
    %227 = arith.addi %63, %226 : index
    memref.store %224, %arg2[%227] : memref<8192xf32>
    %228 = vector.extract %50[49] : vector<64xf32>
    %229 = arith.addi %225, %65 : index
    %230 = arith.addi %63, %229 : index
    memref.store %228, %arg2[%230] : memref<8192xf32>
    %231 = arith.addi %54, %c56 : index
    %232 = vector.extract %50[50] : vector<64xf32>
    %233 = arith.muli %231, %c64 : index
    %234 = arith.addi %233, %59 : index
    %235 = arith.addi %63, %234 : index
    memref.store %232, %arg2[%235] : memref<8192xf32>
    %236 = vector.extract %50[51] : vector<64xf32>
    %237 = arith.addi %233, %65 : index
    %238 = arith.addi %63, %237 : index
    memref.store %236, %arg2[%238] : memref<8192xf32>
    %239 = vector.extract %50[52] : vector<64xf32>
    %240 = arith.addi %225, %77 : index
    %241 = arith.addi %63, %240 : index
    memref.store %239, %arg2[%241] : memref<8192xf32>
    %242 = vector.extract %50[53] : vector<64xf32>
    %243 = arith.addi %225, %81 : index
    %244 = arith.addi %63, %243 : index
    memref.store %242, %arg2[%244] : memref<8192xf32>
    %245 = vector.extract %50[54] : vector<64xf32>
    %246 = arith.addi %233, %77 : index
    %247 = arith.addi %63, %246 : index
    memref.store %245, %arg2[%247] : memref<8192xf32>
    %248 = vector.extract %50[55] : vector<64xf32>
    %249 = arith.addi %233, %81 : index
    %250 = arith.addi %63, %249 : index
    memref.store %248, %arg2[%250] : memref<8192xf32>
    %251 = vector.extract %50[56] : vector<64xf32>
    %252 = arith.addi %225, %91 : index
    %253 = arith.addi %63, %252 : index
    memref.store %251, %arg2[%253] : memref<8192xf32>
    %254 = vector.extract %50[57] : vector<64xf32>
    %255 = arith.addi %225, %95 : index
    %256 = arith.addi %63, %255 : index
    memref.store %254, %arg2[%256] : memref<8192xf32>
    %257 = vector.extract %50[58] : vector<64xf32>
    %258 = arith.addi %233, %91 : index
    %259 = arith.addi %63, %258 : index
    memref.store %257, %arg2[%259] : memref<8192xf32>
    %260 = vector.extract %50[59] : vector<64xf32>
    %261 = arith.addi %233, %95 : index
    %262 = arith.addi %63, %261 : index
    memref.store %260, %arg2[%262] : memref<8192xf32>
    %263 = vector.extract %50[60] : vector<64xf32>
    %264 = arith.addi %225, %105 : index
    %265 = arith.addi %63, %264 : index
    memref.store %263, %arg2[%265] : memref<8192xf32>
    %266 = vector.extract %50[61] : vector<64xf32>
    %267 = arith.addi %225, %109 : index
    %268 = arith.addi %63, %267 : index
    memref.store %266, %arg2[%268] : memref<8192xf32>
    %269 = vector.extract %50[62] : vector<64xf32>
    %270 = arith.addi %233, %105 : index
    %271 = arith.addi %63, %270 : index
    memref.store %269, %arg2[%271] : memref<8192xf32>
    %272 = vector.extract %50[63] : vector<64xf32>
    %273 = arith.addi %233, %109 : index
    %274 = arith.addi %63, %273 : index
    memref.store %272, %arg2[%274] : memref<8192xf32>
    return
  }
}

