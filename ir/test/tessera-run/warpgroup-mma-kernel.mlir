// A Tile IR GEMM kernel built on tessera_tile.warpgroup_mma (made by
// `tessera-opt --tessera-gpu-graph-pipeline="schedule={mma=wgmma tile-m=64
// tile-n=64}"` from a 128x128 x 128x64 f16 matmul: one 128-lane warpgroup
// per group, two 64-deep slices staged 128-byte swizzled): vulkan runs the
// op lane by lane, and the Tile IR interpreter's own implementation of the
// op's swizzle and layout checks it, exit 0.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f32 results: max abs error {{.*}}: PASS
// CHECK: exit code 0

module {
  func.func @f_k0_gemm(%arg0: memref<16384xf16>, %arg1: memref<8192xf16>, %arg2: memref<8192xf32>) attributes {tessera_tile.grid = array<i64: 1, 2, 1>, tessera_tile.group_size = array<i64: 128>} {
    %c0 = arith.constant 0 : index
    %c57 = arith.constant 57 : index
    %c49 = arith.constant 49 : index
    %c48 = arith.constant 48 : index
    %c41 = arith.constant 41 : index
    %c40 = arith.constant 40 : index
    %c33 = arith.constant 33 : index
    %c25 = arith.constant 25 : index
    %c24 = arith.constant 24 : index
    %c17 = arith.constant 17 : index
    %c9 = arith.constant 9 : index
    %c16 = arith.constant 16 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant dense<0.000000e+00> : vector<32xf32>
    %c384 = arith.constant 384 : index
    %c256 = arith.constant 256 : index
    %c3 = arith.constant 3 : index
    %c56 = arith.constant 56 : index
    %c4096 = arith.constant 4096 : index
    %c8 = arith.constant 8 : index
    %c8192 = arith.constant 8192 : index
    %c16384 = arith.constant 16384 : index
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
    %8 = arith.muli %6, %c128 : index
    %9 = arith.muli %3, %c16384 : index
    %10 = arith.addi %9, %8 : index
    %11 = arith.muli %3, %c8192 : index
    %12 = arith.addi %11, %7 : index
    %13 = tessera_tile.shared_alloc alignment = 1024 : memref<8192xf16, 3>
    %14 = tessera_tile.shared_alloc alignment = 1024 : memref<8192xf16, 3>
    %15 = arith.remui %0, %c8 : index
    %16 = arith.divui %0, %c8 : index
    %17 = arith.muli %15, %c8 : index
    %18 = arith.muli %16, %c128 : index
    %19 = arith.addi %18, %17 : index
    %20 = arith.addi %10, %19 : index
    %21 = arith.muli %16, %c64 : index
    %22 = arith.addi %21, %17 : index
    %23 = arith.shrui %22, %c3 : index
    %24 = arith.andi %23, %c56 : index
    %25 = arith.xori %22, %24 : index
    tessera_tile.cp_async %arg0[%20], %13[%25] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
    %26 = arith.addi %0, %c128 : index
    %27 = arith.remui %26, %c8 : index
    %28 = arith.divui %26, %c8 : index
    %29 = arith.muli %27, %c8 : index
    %30 = arith.muli %28, %c128 : index
    %31 = arith.addi %30, %29 : index
    %32 = arith.addi %10, %31 : index
    %33 = arith.muli %28, %c64 : index
    %34 = arith.addi %33, %29 : index
    %35 = arith.shrui %34, %c3 : index
    %36 = arith.andi %35, %c56 : index
    %37 = arith.xori %34, %36 : index
    tessera_tile.cp_async %arg0[%32], %13[%37] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
    %38 = arith.addi %0, %c256 : index
    %39 = arith.remui %38, %c8 : index
    %40 = arith.divui %38, %c8 : index
    %41 = arith.muli %39, %c8 : index
    %42 = arith.muli %40, %c128 : index
    %43 = arith.addi %42, %41 : index
    %44 = arith.addi %10, %43 : index
    %45 = arith.muli %40, %c64 : index
    %46 = arith.addi %45, %41 : index
    %47 = arith.shrui %46, %c3 : index
    %48 = arith.andi %47, %c56 : index
    %49 = arith.xori %46, %48 : index
    tessera_tile.cp_async %arg0[%44], %13[%49] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
    %50 = arith.addi %0, %c384 : index
    %51 = arith.remui %50, %c8 : index
    %52 = arith.divui %50, %c8 : index
    %53 = arith.muli %51, %c8 : index
    %54 = arith.muli %52, %c128 : index
    %55 = arith.addi %54, %53 : index
    %56 = arith.addi %10, %55 : index
    %57 = arith.muli %52, %c64 : index
    %58 = arith.addi %57, %53 : index
    %59 = arith.shrui %58, %c3 : index
    %60 = arith.andi %59, %c56 : index
    %61 = arith.xori %58, %60 : index
    tessera_tile.cp_async %arg0[%56], %13[%61] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
    %62 = arith.addi %12, %22 : index
    %63 = arith.divui %15, %c8 : index
    %64 = arith.remui %15, %c8 : index
    %65 = arith.muli %64, %c8 : index
    %66 = arith.addi %21, %65 : index
    %67 = arith.muli %63, %c4096 : index
    %68 = arith.addi %67, %66 : index
    %69 = arith.shrui %68, %c3 : index
    %70 = arith.andi %69, %c56 : index
    %71 = arith.xori %68, %70 : index
    tessera_tile.cp_async %arg1[%62], %14[%71] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
    %72 = arith.addi %12, %34 : index
    %73 = arith.divui %27, %c8 : index
    %74 = arith.remui %27, %c8 : index
    %75 = arith.muli %74, %c8 : index
    %76 = arith.addi %33, %75 : index
    %77 = arith.muli %73, %c4096 : index
    %78 = arith.addi %77, %76 : index
    %79 = arith.shrui %78, %c3 : index
    %80 = arith.andi %79, %c56 : index
    %81 = arith.xori %78, %80 : index
    tessera_tile.cp_async %arg1[%72], %14[%81] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
    %82 = arith.addi %12, %46 : index
    %83 = arith.divui %39, %c8 : index
    %84 = arith.remui %39, %c8 : index
    %85 = arith.muli %84, %c8 : index
    %86 = arith.addi %45, %85 : index
    %87 = arith.muli %83, %c4096 : index
    %88 = arith.addi %87, %86 : index
    %89 = arith.shrui %88, %c3 : index
    %90 = arith.andi %89, %c56 : index
    %91 = arith.xori %88, %90 : index
    tessera_tile.cp_async %arg1[%82], %14[%91] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
    %92 = arith.addi %12, %58 : index
    %93 = arith.divui %51, %c8 : index
    %94 = arith.remui %51, %c8 : index
    %95 = arith.muli %94, %c8 : index
    %96 = arith.addi %57, %95 : index
    %97 = arith.muli %93, %c4096 : index
    %98 = arith.addi %97, %96 : index
    %99 = arith.shrui %98, %c3 : index
    %100 = arith.andi %99, %c56 : index
    %101 = arith.xori %98, %100 : index
    tessera_tile.cp_async %arg1[%92], %14[%101] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
    tessera_tile.cp_async_commit
    %102 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %cst) -> (vector<32xf32>) {
      %228 = arith.remui %arg3, %c2 : index
      tessera_tile.cp_async_wait 0
      tessera_tile.barrier
      %229 = arith.addi %arg3, %c1 : index
      %230 = arith.cmpi ult, %229, %c2 : index
      scf.if %230 {
        %235 = arith.muli %229, %c64 : index
        %236 = arith.remui %229, %c2 : index
        %237 = arith.addi %235, %17 : index
        %238 = arith.addi %18, %237 : index
        %239 = arith.addi %10, %238 : index
        %240 = arith.muli %236, %c4096 : index
        %241 = arith.addi %240, %22 : index
        %242 = arith.shrui %241, %c3 : index
        %243 = arith.andi %242, %c56 : index
        %244 = arith.xori %241, %243 : index
        tessera_tile.cp_async %arg0[%239], %13[%244] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
        %245 = arith.addi %235, %29 : index
        %246 = arith.addi %30, %245 : index
        %247 = arith.addi %10, %246 : index
        %248 = arith.addi %240, %34 : index
        %249 = arith.shrui %248, %c3 : index
        %250 = arith.andi %249, %c56 : index
        %251 = arith.xori %248, %250 : index
        tessera_tile.cp_async %arg0[%247], %13[%251] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
        %252 = arith.addi %235, %41 : index
        %253 = arith.addi %42, %252 : index
        %254 = arith.addi %10, %253 : index
        %255 = arith.addi %240, %46 : index
        %256 = arith.shrui %255, %c3 : index
        %257 = arith.andi %256, %c56 : index
        %258 = arith.xori %255, %257 : index
        tessera_tile.cp_async %arg0[%254], %13[%258] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
        %259 = arith.addi %235, %53 : index
        %260 = arith.addi %54, %259 : index
        %261 = arith.addi %10, %260 : index
        %262 = arith.addi %240, %58 : index
        %263 = arith.shrui %262, %c3 : index
        %264 = arith.andi %263, %c56 : index
        %265 = arith.xori %262, %264 : index
        tessera_tile.cp_async %arg0[%261], %13[%265] elements = 8 : memref<16384xf16>, memref<8192xf16, 3>
        %266 = arith.addi %235, %16 : index
        %267 = arith.muli %266, %c64 : index
        %268 = arith.addi %267, %17 : index
        %269 = arith.addi %12, %268 : index
        %270 = arith.addi %240, %68 : index
        %271 = arith.shrui %270, %c3 : index
        %272 = arith.andi %271, %c56 : index
        %273 = arith.xori %270, %272 : index
        tessera_tile.cp_async %arg1[%269], %14[%273] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
        %274 = arith.addi %235, %28 : index
        %275 = arith.muli %274, %c64 : index
        %276 = arith.addi %275, %29 : index
        %277 = arith.addi %12, %276 : index
        %278 = arith.addi %240, %78 : index
        %279 = arith.shrui %278, %c3 : index
        %280 = arith.andi %279, %c56 : index
        %281 = arith.xori %278, %280 : index
        tessera_tile.cp_async %arg1[%277], %14[%281] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
        %282 = arith.addi %235, %40 : index
        %283 = arith.muli %282, %c64 : index
        %284 = arith.addi %283, %41 : index
        %285 = arith.addi %12, %284 : index
        %286 = arith.addi %240, %88 : index
        %287 = arith.shrui %286, %c3 : index
        %288 = arith.andi %287, %c56 : index
        %289 = arith.xori %286, %288 : index
        tessera_tile.cp_async %arg1[%285], %14[%289] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
        %290 = arith.addi %235, %52 : index
        %291 = arith.muli %290, %c64 : index
        %292 = arith.addi %291, %53 : index
        %293 = arith.addi %12, %292 : index
        %294 = arith.addi %240, %98 : index
        %295 = arith.shrui %294, %c3 : index
        %296 = arith.andi %295, %c56 : index
        %297 = arith.xori %294, %296 : index
        tessera_tile.cp_async %arg1[%293], %14[%297] elements = 8 : memref<8192xf16>, memref<8192xf16, 3>
      }
      tessera_tile.cp_async_commit
      %231 = arith.muli %4, %c4096 : index
      %232 = arith.muli %228, %c4096 : index
      %233 = arith.addi %232, %231 : index
      %234 = tessera_tile.warpgroup_mma %13[%233], %14[%232], %arg4 {b_block_stride = 4096 : i64, k = 64 : i64, n = 64 : i64, operand_type = f16} : memref<8192xf16, 3>, memref<8192xf16, 3>, vector<32xf32>
      scf.yield %234 : vector<32xf32>
    }
    %103 = arith.divui %5, %c32 : index
    %104 = arith.remui %5, %c32 : index
    %105 = arith.divui %104, %c4 : index
    %106 = arith.muli %103, %c16 : index
    %107 = arith.addi %106, %105 : index
    %108 = arith.muli %4, %c64 : index
    %109 = arith.addi %108, %107 : index
    %110 = arith.addi %6, %109 : index
    %111 = arith.remui %104, %c4 : index
    %112 = arith.muli %111, %c2 : index
    %113 = arith.addi %7, %112 : index
    %114 = vector.extract %102[0] : vector<32xf32>
    %115 = arith.muli %110, %c64 : index
    %116 = arith.addi %115, %113 : index
    %117 = arith.addi %11, %116 : index
    memref.store %114, %arg2[%117] : memref<8192xf32>
    %118 = arith.addi %113, %c1 : index
    %119 = vector.extract %102[1] : vector<32xf32>
    %120 = arith.addi %115, %118 : index
    %121 = arith.addi %11, %120 : index
    memref.store %119, %arg2[%121] : memref<8192xf32>
    %122 = arith.addi %110, %c8 : index
    %123 = vector.extract %102[2] : vector<32xf32>
    %124 = arith.muli %122, %c64 : index
    %125 = arith.addi %124, %113 : index
    %126 = arith.addi %11, %125 : index
    memref.store %123, %arg2[%126] : memref<8192xf32>
    %127 = vector.extract %102[3] : vector<32xf32>
    %128 = arith.addi %124, %118 : index
    %129 = arith.addi %11, %128 : index
    memref.store %127, %arg2[%129] : memref<8192xf32>
    %130 = arith.addi %113, %c8 : index
    %131 = vector.extract %102[4] : vector<32xf32>
    %132 = arith.addi %115, %130 : index
    %133 = arith.addi %11, %132 : index
    memref.store %131, %arg2[%133] : memref<8192xf32>
    %134 = arith.addi %113, %c9 : index
    %135 = vector.extract %102[5] : vector<32xf32>
    %136 = arith.addi %115, %134 : index
    %137 = arith.addi %11, %136 : index
    memref.store %135, %arg2[%137] : memref<8192xf32>
    %138 = vector.extract %102[6] : vector<32xf32>
    %139 = arith.addi %124, %130 : index
    %140 = arith.addi %11, %139 : index
    memref.store %138, %arg2[%140] : memref<8192xf32>
    %141 = vector.extract %102[7] : vector<32xf32>
    %142 = arith.addi %124, %134 : index
    %143 = arith.addi %11, %142 : index
    memref.store %141, %arg2[%143] : memref<8192xf32>
    %144 = arith.addi %113, %c16 : index
    %145 = vector.extract %102[8] : vector<32xf32>
    %146 = arith.addi %115, %144 : index
    %147 = arith.addi %11, %146 : index
    memref.store %145, %arg2[%147] : memref<8192xf32>
    %148 = arith.addi %113, %c17 : index
    %149 = vector.extract %102[9] : vector<32xf32>
    %150 = arith.addi %115, %148 : index
    %151 = arith.addi %11, %150 : index
    memref.store %149, %arg2[%151] : memref<8192xf32>
    %152 = vector.extract %102[10] : vector<32xf32>
    %153 = arith.addi %124, %144 : index
    %154 = arith.addi %11, %153 : index
    memref.store %152, %arg2[%154] : memref<8192xf32>
    %155 = vector.extract %102[11] : vector<32xf32>
    %156 = arith.addi %124, %148 : index
    %157 = arith.addi %11, %156 : index
    memref.store %155, %arg2[%157] : memref<8192xf32>
    %158 = arith.addi %113, %c24 : index
    %159 = vector.extract %102[12] : vector<32xf32>
    %160 = arith.addi %115, %158 : index
    %161 = arith.addi %11, %160 : index
    memref.store %159, %arg2[%161] : memref<8192xf32>
    %162 = arith.addi %113, %c25 : index
    %163 = vector.extract %102[13] : vector<32xf32>
    %164 = arith.addi %115, %162 : index
    %165 = arith.addi %11, %164 : index
    memref.store %163, %arg2[%165] : memref<8192xf32>
    %166 = vector.extract %102[14] : vector<32xf32>
    %167 = arith.addi %124, %158 : index
    %168 = arith.addi %11, %167 : index
    memref.store %166, %arg2[%168] : memref<8192xf32>
    %169 = vector.extract %102[15] : vector<32xf32>
    %170 = arith.addi %124, %162 : index
    %171 = arith.addi %11, %170 : index
    memref.store %169, %arg2[%171] : memref<8192xf32>
    %172 = arith.addi %113, %c32 : index
    %173 = vector.extract %102[16] : vector<32xf32>
    %174 = arith.addi %115, %172 : index
    %175 = arith.addi %11, %174 : index
    memref.store %173, %arg2[%175] : memref<8192xf32>
    %176 = arith.addi %113, %c33 : index
    %177 = vector.extract %102[17] : vector<32xf32>
    %178 = arith.addi %115, %176 : index
    %179 = arith.addi %11, %178 : index
    memref.store %177, %arg2[%179] : memref<8192xf32>
    %180 = vector.extract %102[18] : vector<32xf32>
    %181 = arith.addi %124, %172 : index
    %182 = arith.addi %11, %181 : index
    memref.store %180, %arg2[%182] : memref<8192xf32>
    %183 = vector.extract %102[19] : vector<32xf32>
    %184 = arith.addi %124, %176 : index
    %185 = arith.addi %11, %184 : index
    memref.store %183, %arg2[%185] : memref<8192xf32>
    %186 = arith.addi %113, %c40 : index
    %187 = vector.extract %102[20] : vector<32xf32>
    %188 = arith.addi %115, %186 : index
    %189 = arith.addi %11, %188 : index
    memref.store %187, %arg2[%189] : memref<8192xf32>
    %190 = arith.addi %113, %c41 : index
    %191 = vector.extract %102[21] : vector<32xf32>
    %192 = arith.addi %115, %190 : index
    %193 = arith.addi %11, %192 : index
    memref.store %191, %arg2[%193] : memref<8192xf32>
    %194 = vector.extract %102[22] : vector<32xf32>
    %195 = arith.addi %124, %186 : index
    %196 = arith.addi %11, %195 : index
    memref.store %194, %arg2[%196] : memref<8192xf32>
    %197 = vector.extract %102[23] : vector<32xf32>
    %198 = arith.addi %124, %190 : index
    %199 = arith.addi %11, %198 : index
    memref.store %197, %arg2[%199] : memref<8192xf32>
    %200 = arith.addi %113, %c48 : index
    %201 = vector.extract %102[24] : vector<32xf32>
    %202 = arith.addi %115, %200 : index
    %203 = arith.addi %11, %202 : index
    memref.store %201, %arg2[%203] : memref<8192xf32>
    %204 = arith.addi %113, %c49 : index
    %205 = vector.extract %102[25] : vector<32xf32>
    %206 = arith.addi %115, %204 : index
    %207 = arith.addi %11, %206 : index
    memref.store %205, %arg2[%207] : memref<8192xf32>
    %208 = vector.extract %102[26] : vector<32xf32>
    %209 = arith.addi %124, %200 : index
    %210 = arith.addi %11, %209 : index
    memref.store %208, %arg2[%210] : memref<8192xf32>
    %211 = vector.extract %102[27] : vector<32xf32>
    %212 = arith.addi %124, %204 : index
    %213 = arith.addi %11, %212 : index
    memref.store %211, %arg2[%213] : memref<8192xf32>
    %214 = arith.addi %113, %c56 : index
    %215 = vector.extract %102[28] : vector<32xf32>
    %216 = arith.addi %115, %214 : index
    %217 = arith.addi %11, %216 : index
    memref.store %215, %arg2[%217] : memref<8192xf32>
    %218 = arith.addi %113, %c57 : index
    %219 = vector.extract %102[29] : vector<32xf32>
    %220 = arith.addi %115, %218 : index
    %221 = arith.addi %11, %220 : index
    memref.store %219, %arg2[%221] : memref<8192xf32>
    %222 = vector.extract %102[30] : vector<32xf32>
    %223 = arith.addi %124, %214 : index
    %224 = arith.addi %11, %223 : index
    memref.store %222, %arg2[%224] : memref<8192xf32>
    %225 = vector.extract %102[31] : vector<32xf32>
    %226 = arith.addi %124, %218 : index
    %227 = arith.addi %11, %226 : index
    memref.store %225, %arg2[%227] : memref<8192xf32>
    return
  }
}

