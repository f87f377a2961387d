// A Tile IR GEMM kernel built on tessera_tile.wavefront_mma (made by
// `tessera-opt --tessera-gpu-graph-pipeline="schedule={mma=mfma tile-m=64
// tile-n=64 tile-k=16}"` from a 128x32 x 32x128 f16 matmul, one 64-lane
// wavefront per group): vulkan runs the op lane by lane, and the Tile IR
// interpreter's own implementation of the op's layout checks it, exit 0.
// (On hip's CDNA targets the same op is MFMA: plugins/hip/test/mfma.mlir.)
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f32 results: max abs error {{.*}}: PASS
// CHECK: exit code 0

module {
  func.func @f_k0_gemm(%arg0: memref<4096xf16>, %arg1: memref<4096xf16>, %arg2: memref<16384xf32>) attributes {tessera_tile.grid = array<i64: 2, 2, 1>, tessera_tile.group_size = array<i64: 64>} {
    %c0 = arith.constant 0 : index
    %c1728 = arith.constant 1728 : index
    %c1152 = arith.constant 1152 : index
    %c576 = arith.constant 576 : index
    %c1 = arith.constant 1 : index
    %c59 = arith.constant 59 : index
    %c58 = arith.constant 58 : index
    %c57 = arith.constant 57 : index
    %c56 = arith.constant 56 : index
    %c51 = arith.constant 51 : index
    %c50 = arith.constant 50 : index
    %c49 = arith.constant 49 : index
    %c48 = arith.constant 48 : index
    %c43 = arith.constant 43 : index
    %c42 = arith.constant 42 : index
    %c41 = arith.constant 41 : index
    %c35 = arith.constant 35 : index
    %c34 = arith.constant 34 : index
    %c33 = arith.constant 33 : index
    %c27 = arith.constant 27 : index
    %c26 = arith.constant 26 : index
    %c25 = arith.constant 25 : index
    %c19 = arith.constant 19 : index
    %c18 = arith.constant 18 : index
    %c17 = arith.constant 17 : index
    %c11 = arith.constant 11 : index
    %c10 = arith.constant 10 : index
    %c9 = arith.constant 9 : index
    %c3 = arith.constant 3 : index
    %c16384 = arith.constant 16384 : index
    %c24 = arith.constant 24 : index
    %c16 = arith.constant 16 : index
    %c2 = arith.constant 2 : index
    %cst = arith.constant dense<0.000000e+00> : vector<64xf32>
    %c72 = arith.constant 72 : index
    %c192 = arith.constant 192 : index
    %c128 = arith.constant 128 : index
    %c2560 = arith.constant 2560 : index
    %c40 = arith.constant 40 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
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
    %12 = tessera_tile.shared_alloc : memref<5120xf16, 3>
    %13 = tessera_tile.shared_alloc : memref<4608xf16, 3>
    %14 = arith.remui %0, %c4 : index
    %15 = arith.muli %14, %c8 : index
    %16 = arith.divui %0, %c4 : index
    %17 = arith.muli %16, %c32 : index
    %18 = arith.addi %17, %15 : index
    %19 = arith.addi %10, %18 : index
    %20 = arith.muli %16, %c40 : index
    %21 = arith.addi %20, %15 : index
    tessera_tile.cp_async %arg0[%19], %12[%21] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %22 = arith.addi %0, %c64 : index
    %23 = arith.remui %22, %c4 : index
    %24 = arith.muli %23, %c8 : index
    %25 = arith.divui %22, %c4 : index
    %26 = arith.muli %25, %c32 : index
    %27 = arith.addi %26, %24 : index
    %28 = arith.addi %10, %27 : index
    %29 = arith.muli %25, %c40 : index
    %30 = arith.addi %29, %24 : index
    tessera_tile.cp_async %arg0[%28], %12[%30] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %31 = arith.addi %0, %c128 : index
    %32 = arith.remui %31, %c4 : index
    %33 = arith.muli %32, %c8 : index
    %34 = arith.divui %31, %c4 : index
    %35 = arith.muli %34, %c32 : index
    %36 = arith.addi %35, %33 : index
    %37 = arith.addi %10, %36 : index
    %38 = arith.muli %34, %c40 : index
    %39 = arith.addi %38, %33 : index
    tessera_tile.cp_async %arg0[%37], %12[%39] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %40 = arith.addi %0, %c192 : index
    %41 = arith.remui %40, %c4 : index
    %42 = arith.muli %41, %c8 : index
    %43 = arith.divui %40, %c4 : index
    %44 = arith.muli %43, %c32 : index
    %45 = arith.addi %44, %42 : index
    %46 = arith.addi %10, %45 : index
    %47 = arith.muli %43, %c40 : index
    %48 = arith.addi %47, %42 : index
    tessera_tile.cp_async %arg0[%46], %12[%48] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %49 = arith.remui %0, %c8 : index
    %50 = arith.muli %49, %c8 : index
    %51 = arith.divui %0, %c8 : index
    %52 = arith.muli %51, %c128 : index
    %53 = arith.addi %52, %50 : index
    %54 = arith.addi %11, %53 : index
    %55 = arith.muli %51, %c72 : index
    %56 = arith.addi %55, %50 : index
    tessera_tile.cp_async %arg1[%54], %13[%56] elements = 8 : memref<4096xf16>, memref<4608xf16, 3>
    %57 = arith.remui %22, %c8 : index
    %58 = arith.muli %57, %c8 : index
    %59 = arith.divui %22, %c8 : index
    %60 = arith.muli %59, %c128 : index
    %61 = arith.addi %60, %58 : index
    %62 = arith.addi %11, %61 : index
    %63 = arith.muli %59, %c72 : index
    %64 = arith.addi %63, %58 : index
    tessera_tile.cp_async %arg1[%62], %13[%64] elements = 8 : memref<4096xf16>, memref<4608xf16, 3>
    %65 = arith.remui %31, %c8 : index
    %66 = arith.muli %65, %c8 : index
    %67 = arith.divui %31, %c8 : index
    %68 = arith.muli %67, %c128 : index
    %69 = arith.addi %68, %66 : index
    %70 = arith.addi %11, %69 : index
    %71 = arith.muli %67, %c72 : index
    %72 = arith.addi %71, %66 : index
    tessera_tile.cp_async %arg1[%70], %13[%72] elements = 8 : memref<4096xf16>, memref<4608xf16, 3>
    %73 = arith.remui %40, %c8 : index
    %74 = arith.muli %73, %c8 : index
    %75 = arith.divui %40, %c8 : index
    %76 = arith.muli %75, %c128 : index
    %77 = arith.addi %76, %74 : index
    %78 = arith.addi %11, %77 : index
    %79 = arith.muli %75, %c72 : index
    %80 = arith.addi %79, %74 : index
    tessera_tile.cp_async %arg1[%78], %13[%80] elements = 8 : memref<4096xf16>, memref<4608xf16, 3>
    tessera_tile.cp_async_commit
    tessera_tile.cp_async_wait 0
    tessera_tile.barrier
    tessera_tile.cp_async_commit
    %81 = arith.muli %4, %c2560 : index
    %82 = tessera_tile.wavefront_mma %12[%81], %13[%c0], %cst {lda = 40 : i64, ldb = 72 : i64, m = 64 : i64, n = 64 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<4608xf16, 3>, vector<64xf32>
    %83 = arith.addi %81, %c8 : index
    %84 = tessera_tile.wavefront_mma %12[%83], %13[%c576], %82 {lda = 40 : i64, ldb = 72 : i64, m = 64 : i64, n = 64 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<4608xf16, 3>, vector<64xf32>
    %85 = arith.addi %81, %c16 : index
    %86 = tessera_tile.wavefront_mma %12[%85], %13[%c1152], %84 {lda = 40 : i64, ldb = 72 : i64, m = 64 : i64, n = 64 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<4608xf16, 3>, vector<64xf32>
    %87 = arith.addi %81, %c24 : index
    %88 = tessera_tile.wavefront_mma %12[%87], %13[%c1728], %86 {lda = 40 : i64, ldb = 72 : i64, m = 64 : i64, n = 64 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<4608xf16, 3>, vector<64xf32>
    %89 = arith.divui %5, %c32 : index
    %90 = arith.muli %89, %c4 : index
    %91 = arith.muli %4, %c64 : index
    %92 = arith.addi %91, %90 : index
    %93 = arith.addi %6, %92 : index
    %94 = arith.remui %5, %c32 : index
    %95 = arith.addi %7, %94 : index
    %96 = vector.extract %88[0] : vector<64xf32>
    %97 = arith.muli %93, %c128 : index
    %98 = arith.addi %97, %95 : index
    %99 = arith.muli %3, %c16384 : index
    %100 = arith.addi %99, %98 : index
    memref.store %96, %arg2[%100] : memref<16384xf32>
    %101 = arith.addi %93, %c1 : index
    %102 = vector.extract %88[1] : vector<64xf32>
    %103 = arith.muli %101, %c128 : index
    %104 = arith.addi %103, %95 : index
    %105 = arith.addi %99, %104 : index
    memref.store %102, %arg2[%105] : memref<16384xf32>
    %106 = arith.addi %93, %c2 : index
    %107 = vector.extract %88[2] : vector<64xf32>
    %108 = arith.muli %106, %c128 : index
    %109 = arith.addi %108, %95 : index
    %110 = arith.addi %99, %109 : index
    memref.store %107, %arg2[%110] : memref<16384xf32>
    %111 = arith.addi %93, %c3 : index
    %112 = vector.extract %88[3] : vector<64xf32>
    %113 = arith.muli %111, %c128 : index
    %114 = arith.addi %113, %95 : index
    %115 = arith.addi %99, %114 : index
    memref.store %112, %arg2[%115] : memref<16384xf32>
    %116 = arith.addi %93, %c8 : index
    %117 = vector.extract %88[4] : vector<64xf32>
    %118 = arith.muli %116, %c128 : index
    %119 = arith.addi %118, %95 : index
    %120 = arith.addi %99, %119 : index
    memref.store %117, %arg2[%120] : memref<16384xf32>
    %121 = arith.addi %93, %c9 : index
    %122 = vector.extract %88[5] : vector<64xf32>
    %123 = arith.muli %121, %c128 : index
    %124 = arith.addi %123, %95 : index
    %125 = arith.addi %99, %124 : index
    memref.store %122, %arg2[%125] : memref<16384xf32>
    %126 = arith.addi %93, %c10 : index
    %127 = vector.extract %88[6] : vector<64xf32>
    %128 = arith.muli %126, %c128 : index
    %129 = arith.addi %128, %95 : index
    %130 = arith.addi %99, %129 : index
    memref.store %127, %arg2[%130] : memref<16384xf32>
    %131 = arith.addi %93, %c11 : index
    %132 = vector.extract %88[7] : vector<64xf32>
    %133 = arith.muli %131, %c128 : index
    %134 = arith.addi %133, %95 : index
    %135 = arith.addi %99, %134 : index
    memref.store %132, %arg2[%135] : memref<16384xf32>
    %136 = arith.addi %93, %c16 : index
    %137 = vector.extract %88[8] : vector<64xf32>
    %138 = arith.muli %136, %c128 : index
    %139 = arith.addi %138, %95 : index
    %140 = arith.addi %99, %139 : index
    memref.store %137, %arg2[%140] : memref<16384xf32>
    %141 = arith.addi %93, %c17 : index
    %142 = vector.extract %88[9] : vector<64xf32>
    %143 = arith.muli %141, %c128 : index
    %144 = arith.addi %143, %95 : index
    %145 = arith.addi %99, %144 : index
    memref.store %142, %arg2[%145] : memref<16384xf32>
    %146 = arith.addi %93, %c18 : index
    %147 = vector.extract %88[10] : vector<64xf32>
    %148 = arith.muli %146, %c128 : index
    %149 = arith.addi %148, %95 : index
    %150 = arith.addi %99, %149 : index
    memref.store %147, %arg2[%150] : memref<16384xf32>
    %151 = arith.addi %93, %c19 : index
    %152 = vector.extract %88[11] : vector<64xf32>
    %153 = arith.muli %151, %c128 : index
    %154 = arith.addi %153, %95 : index
    %155 = arith.addi %99, %154 : index
    memref.store %152, %arg2[%155] : memref<16384xf32>
    %156 = arith.addi %93, %c24 : index
    %157 = vector.extract %88[12] : vector<64xf32>
    %158 = arith.muli %156, %c128 : index
    %159 = arith.addi %158, %95 : index
    %160 = arith.addi %99, %159 : index
    memref.store %157, %arg2[%160] : memref<16384xf32>
    %161 = arith.addi %93, %c25 : index
    %162 = vector.extract %88[13] : vector<64xf32>
    %163 = arith.muli %161, %c128 : index
    %164 = arith.addi %163, %95 : index
    %165 = arith.addi %99, %164 : index
    memref.store %162, %arg2[%165] : memref<16384xf32>
    %166 = arith.addi %93, %c26 : index
    %167 = vector.extract %88[14] : vector<64xf32>
    %168 = arith.muli %166, %c128 : index
    %169 = arith.addi %168, %95 : index
    %170 = arith.addi %99, %169 : index
    memref.store %167, %arg2[%170] : memref<16384xf32>
    %171 = arith.addi %93, %c27 : index
    %172 = vector.extract %88[15] : vector<64xf32>
    %173 = arith.muli %171, %c128 : index
    %174 = arith.addi %173, %95 : index
    %175 = arith.addi %99, %174 : index
    memref.store %172, %arg2[%175] : memref<16384xf32>
    %176 = arith.addi %95, %c32 : index
    %177 = vector.extract %88[16] : vector<64xf32>
    %178 = arith.addi %97, %176 : index
    %179 = arith.addi %99, %178 : index
    memref.store %177, %arg2[%179] : memref<16384xf32>
    %180 = vector.extract %88[17] : vector<64xf32>
    %181 = arith.addi %103, %176 : index
    %182 = arith.addi %99, %181 : index
    memref.store %180, %arg2[%182] : memref<16384xf32>
    %183 = vector.extract %88[18] : vector<64xf32>
    %184 = arith.addi %108, %176 : index
    %185 = arith.addi %99, %184 : index
    memref.store %183, %arg2[%185] : memref<16384xf32>
    %186 = vector.extract %88[19] : vector<64xf32>
    %187 = arith.addi %113, %176 : index
    %188 = arith.addi %99, %187 : index
    memref.store %186, %arg2[%188] : memref<16384xf32>
    %189 = vector.extract %88[20] : vector<64xf32>
    %190 = arith.addi %118, %176 : index
    %191 = arith.addi %99, %190 : index
    memref.store %189, %arg2[%191] : memref<16384xf32>
    %192 = vector.extract %88[21] : vector<64xf32>
    %193 = arith.addi %123, %176 : index
    %194 = arith.addi %99, %193 : index
    memref.store %192, %arg2[%194] : memref<16384xf32>
    %195 = vector.extract %88[22] : vector<64xf32>
    %196 = arith.addi %128, %176 : index
    %197 = arith.addi %99, %196 : index
    memref.store %195, %arg2[%197] : memref<16384xf32>
    %198 = vector.extract %88[23] : vector<64xf32>
    %199 = arith.addi %133, %176 : index
    %200 = arith.addi %99, %199 : index
    memref.store %198, %arg2[%200] : memref<16384xf32>
    %201 = vector.extract %88[24] : vector<64xf32>
    %202 = arith.addi %138, %176 : index
    %203 = arith.addi %99, %202 : index
    memref.store %201, %arg2[%203] : memref<16384xf32>
    %204 = vector.extract %88[25] : vector<64xf32>
    %205 = arith.addi %143, %176 : index
    %206 = arith.addi %99, %205 : index
    memref.store %204, %arg2[%206] : memref<16384xf32>
    %207 = vector.extract %88[26] : vector<64xf32>
    %208 = arith.addi %148, %176 : index
    %209 = arith.addi %99, %208 : index
    memref.store %207, %arg2[%209] : memref<16384xf32>
    %210 = vector.extract %88[27] : vector<64xf32>
    %211 = arith.addi %153, %176 : index
    %212 = arith.addi %99, %211 : index
    memref.store %210, %arg2[%212] : memref<16384xf32>
    %213 = vector.extract %88[28] : vector<64xf32>
    %214 = arith.addi %158, %176 : index
    %215 = arith.addi %99, %214 : index
    memref.store %213, %arg2[%215] : memref<16384xf32>
    %216 = vector.extract %88[29] : vector<64xf32>
    %217 = arith.addi %163, %176 : index
    %218 = arith.addi %99, %217 : index
    memref.store %216, %arg2[%218] : memref<16384xf32>
    %219 = vector.extract %88[30] : vector<64xf32>
    %220 = arith.addi %168, %176 : index
    %221 = arith.addi %99, %220 : index
    memref.store %219, %arg2[%221] : memref<16384xf32>
    %222 = vector.extract %88[31] : vector<64xf32>
    %223 = arith.addi %173, %176 : index
    %224 = arith.addi %99, %223 : index
    memref.store %222, %arg2[%224] : memref<16384xf32>
    %225 = arith.addi %93, %c32 : index
    %226 = vector.extract %88[32] : vector<64xf32>
    %227 = arith.muli %225, %c128 : index
    %228 = arith.addi %227, %95 : index
    %229 = arith.addi %99, %228 : index
    memref.store %226, %arg2[%229] : memref<16384xf32>
    %230 = arith.addi %93, %c33 : index
    %231 = vector.extract %88[33] : vector<64xf32>
    %232 = arith.muli %230, %c128 : index
    %233 = arith.addi %232, %95 : index
    %234 = arith.addi %99, %233 : index
    memref.store %231, %arg2[%234] : memref<16384xf32>
    %235 = arith.addi %93, %c34 : index
    %236 = vector.extract %88[34] : vector<64xf32>
    %237 = arith.muli %235, %c128 : index
    %238 = arith.addi %237, %95 : index
    %239 = arith.addi %99, %238 : index
    memref.store %236, %arg2[%239] : memref<16384xf32>
    %240 = arith.addi %93, %c35 : index
    %241 = vector.extract %88[35] : vector<64xf32>
    %242 = arith.muli %240, %c128 : index
    %243 = arith.addi %242, %95 : index
    %244 = arith.addi %99, %243 : index
    memref.store %241, %arg2[%244] : memref<16384xf32>
    %245 = arith.addi %93, %c40 : index
    %246 = vector.extract %88[36] : vector<64xf32>
    %247 = arith.muli %245, %c128 : index
    %248 = arith.addi %247, %95 : index
    %249 = arith.addi %99, %248 : index
    memref.store %246, %arg2[%249] : memref<16384xf32>
    %250 = arith.addi %93, %c41 : index
    %251 = vector.extract %88[37] : vector<64xf32>
    %252 = arith.muli %250, %c128 : index
    %253 = arith.addi %252, %95 : index
    %254 = arith.addi %99, %253 : index
    memref.store %251, %arg2[%254] : memref<16384xf32>
    %255 = arith.addi %93, %c42 : index
    %256 = vector.extract %88[38] : vector<64xf32>
    %257 = arith.muli %255, %c128 : index
    %258 = arith.addi %257, %95 : index
    %259 = arith.addi %99, %258 : index
    memref.store %256, %arg2[%259] : memref<16384xf32>
    %260 = arith.addi %93, %c43 : index
    %261 = vector.extract %88[39] : vector<64xf32>
    %262 = arith.muli %260, %c128 : index
    %263 = arith.addi %262, %95 : index
    %264 = arith.addi %99, %263 : index
    memref.store %261, %arg2[%264] : memref<16384xf32>
    %265 = arith.addi %93, %c48 : index
    %266 = vector.extract %88[40] : vector<64xf32>
    %267 = arith.muli %265, %c128 : index
    %268 = arith.addi %267, %95 : index
    %269 = arith.addi %99, %268 : index
    memref.store %266, %arg2[%269] : memref<16384xf32>
    %270 = arith.addi %93, %c49 : index
    %271 = vector.extract %88[41] : vector<64xf32>
    %272 = arith.muli %270, %c128 : index
    %273 = arith.addi %272, %95 : index
    %274 = arith.addi %99, %273 : index
    memref.store %271, %arg2[%274] : memref<16384xf32>
    %275 = arith.addi %93, %c50 : index
    %276 = vector.extract %88[42] : vector<64xf32>
    %277 = arith.muli %275, %c128 : index
    %278 = arith.addi %277, %95 : index
    %279 = arith.addi %99, %278 : index
    memref.store %276, %arg2[%279] : memref<16384xf32>
    %280 = arith.addi %93, %c51 : index
    %281 = vector.extract %88[43] : vector<64xf32>
    %282 = arith.muli %280, %c128 : index
    %283 = arith.addi %282, %95 : index
    %284 = arith.addi %99, %283 : index
    memref.store %281, %arg2[%284] : memref<16384xf32>
    %285 = arith.addi %93, %c56 : index
    %286 = vector.extract %88[44] : vector<64xf32>
    %287 = arith.muli %285, %c128 : index
    %288 = arith.addi %287, %95 : index
    %289 = arith.addi %99, %288 : index
    memref.store %286, %arg2[%289] : memref<16384xf32>
    %290 = arith.addi %93, %c57 : index
    %291 = vector.extract %88[45] : vector<64xf32>
    %292 = arith.muli %290, %c128 : index
    %293 = arith.addi %292, %95 : index
    %294 = arith.addi %99, %293 : index
    memref.store %291, %arg2[%294] : memref<16384xf32>
    %295 = arith.addi %93, %c58 : index
    %296 = vector.extract %88[46] : vector<64xf32>
    %297 = arith.muli %295, %c128 : index
    %298 = arith.addi %297, %95 : index
    %299 = arith.addi %99, %298 : index
    memref.store %296, %arg2[%299] : memref<16384xf32>
    %300 = arith.addi %93, %c59 : index
    %301 = vector.extract %88[47] : vector<64xf32>
    %302 = arith.muli %300, %c128 : index
    %303 = arith.addi %302, %95 : index
    %304 = arith.addi %99, %303 : index
    memref.store %301, %arg2[%304] : memref<16384xf32>
    %305 = vector.extract %88[48] : vector<64xf32>
    %306 = arith.addi %227, %176 : index
    %307 = arith.addi %99, %306 : index
    memref.store %305, %arg2[%307] : memref<16384xf32>
    %308 = vector.extract %88[49] : vector<64xf32>
    %309 = arith.addi %232, %176 : index
    %310 = arith.addi %99, %309 : index
    memref.store %308, %arg2[%310] : memref<16384xf32>
    %311 = vector.extract %88[50] : vector<64xf32>
    %312 = arith.addi %237, %176 : index
    %313 = arith.addi %99, %312 : index
    memref.store %311, %arg2[%313] : memref<16384xf32>
    %314 = vector.extract %88[51] : vector<64xf32>
    %315 = arith.addi %242, %176 : index
    %316 = arith.addi %99, %315 : index
    memref.store %314, %arg2[%316] : memref<16384xf32>
    %317 = vector.extract %88[52] : vector<64xf32>
    %318 = arith.addi %247, %176 : index
    %319 = arith.addi %99, %318 : index
    memref.store %317, %arg2[%319] : memref<16384xf32>
    %320 = vector.extract %88[53] : vector<64xf32>
    %321 = arith.addi %252, %176 : index
    %322 = arith.addi %99, %321 : index
    memref.store %320, %arg2[%322] : memref<16384xf32>
    %323 = vector.extract %88[54] : vector<64xf32>
    %324 = arith.addi %257, %176 : index
    %325 = arith.addi %99, %324 : index
    memref.store %323, %arg2[%325] : memref<16384xf32>
    %326 = vector.extract %88[55] : vector<64xf32>
    %327 = arith.addi %262, %176 : index
    %328 = arith.addi %99, %327 : index
    memref.store %326, %arg2[%328] : memref<16384xf32>
    %329 = vector.extract %88[56] : vector<64xf32>
    %330 = arith.addi %267, %176 : index
    %331 = arith.addi %99, %330 : index
    memref.store %329, %arg2[%331] : memref<16384xf32>
    %332 = vector.extract %88[57] : vector<64xf32>
    %333 = arith.addi %272, %176 : index
    %334 = arith.addi %99, %333 : index
    memref.store %332, %arg2[%334] : memref<16384xf32>
    %335 = vector.extract %88[58] : vector<64xf32>
    %336 = arith.addi %277, %176 : index
    %337 = arith.addi %99, %336 : index
    memref.store %335, %arg2[%337] : memref<16384xf32>
    %338 = vector.extract %88[59] : vector<64xf32>
    %339 = arith.addi %282, %176 : index
    %340 = arith.addi %99, %339 : index
    memref.store %338, %arg2[%340] : memref<16384xf32>
    %341 = vector.extract %88[60] : vector<64xf32>
    %342 = arith.addi %287, %176 : index
    %343 = arith.addi %99, %342 : index
    memref.store %341, %arg2[%343] : memref<16384xf32>
    %344 = vector.extract %88[61] : vector<64xf32>
    %345 = arith.addi %292, %176 : index
    %346 = arith.addi %99, %345 : index
    memref.store %344, %arg2[%346] : memref<16384xf32>
    %347 = vector.extract %88[62] : vector<64xf32>
    %348 = arith.addi %297, %176 : index
    %349 = arith.addi %99, %348 : index
    memref.store %347, %arg2[%349] : memref<16384xf32>
    %350 = vector.extract %88[63] : vector<64xf32>
    %351 = arith.addi %302, %176 : index
    %352 = arith.addi %99, %351 : index
    memref.store %350, %arg2[%352] : memref<16384xf32>
    return
  }
}

