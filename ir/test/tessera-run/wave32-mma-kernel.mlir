// A Tile IR GEMM kernel built on tessera_tile.wave32_mma (made by
// `tessera-opt --tessera-gpu-graph-pipeline="schedule={mma=wmma tile-m=64
// tile-n=32 tile-k=16}"` from a 128x32 x 32x64 f16 matmul, one 32-lane wave
// per group): vulkan runs the op lane by lane, and the Tile IR
// interpreter's own implementation of the op's layout checks it, exit 0.
// (On hip's RDNA3 target the same op is WMMA: plugins/hip/test/wmma.mlir.)
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f32 results: max abs error {{.*}}: PASS
// CHECK: exit code 0

module {
  func.func @f_k0_gemm(%arg0: memref<4096xf16>, %arg1: memref<2048xf16>, %arg2: memref<8192xf32>) attributes {tessera_tile.grid = array<i64: 2, 2, 1>, tessera_tile.group_size = array<i64: 32>} {
    %c0 = arith.constant 0 : index
    %c640 = arith.constant 640 : index
    %c62 = arith.constant 62 : index
    %c60 = arith.constant 60 : index
    %c58 = arith.constant 58 : index
    %c56 = arith.constant 56 : index
    %c54 = arith.constant 54 : index
    %c52 = arith.constant 52 : index
    %c50 = arith.constant 50 : index
    %c48 = arith.constant 48 : index
    %c46 = arith.constant 46 : index
    %c44 = arith.constant 44 : index
    %c42 = arith.constant 42 : index
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
    %c6 = arith.constant 6 : index
    %c8192 = arith.constant 8192 : index
    %c16 = arith.constant 16 : index
    %c2 = arith.constant 2 : index
    %cst = arith.constant dense<0.000000e+00> : vector<64xf32>
    %c224 = arith.constant 224 : index
    %c192 = arith.constant 192 : index
    %c160 = arith.constant 160 : index
    %c128 = arith.constant 128 : index
    %c96 = arith.constant 96 : index
    %c2560 = arith.constant 2560 : index
    %c40 = arith.constant 40 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
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
    %13 = tessera_tile.shared_alloc : memref<5120xf16, 3>
    %14 = tessera_tile.shared_alloc : memref<2560xf16, 3>
    %15 = arith.remui %0, %c4 : index
    %16 = arith.muli %15, %c8 : index
    %17 = arith.divui %0, %c4 : index
    %18 = arith.muli %17, %c32 : index
    %19 = arith.addi %18, %16 : index
    %20 = arith.addi %10, %19 : index
    %21 = arith.muli %17, %c40 : index
    %22 = arith.addi %21, %16 : index
    tessera_tile.cp_async %arg0[%20], %13[%22] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %23 = arith.addi %0, %c32 : index
    %24 = arith.remui %23, %c4 : index
    %25 = arith.muli %24, %c8 : index
    %26 = arith.divui %23, %c4 : index
    %27 = arith.muli %26, %c32 : index
    %28 = arith.addi %27, %25 : index
    %29 = arith.addi %10, %28 : index
    %30 = arith.muli %26, %c40 : index
    %31 = arith.addi %30, %25 : index
    tessera_tile.cp_async %arg0[%29], %13[%31] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %32 = arith.addi %0, %c64 : index
    %33 = arith.remui %32, %c4 : index
    %34 = arith.muli %33, %c8 : index
    %35 = arith.divui %32, %c4 : index
    %36 = arith.muli %35, %c32 : index
    %37 = arith.addi %36, %34 : index
    %38 = arith.addi %10, %37 : index
    %39 = arith.muli %35, %c40 : index
    %40 = arith.addi %39, %34 : index
    tessera_tile.cp_async %arg0[%38], %13[%40] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %41 = arith.addi %0, %c96 : index
    %42 = arith.remui %41, %c4 : index
    %43 = arith.muli %42, %c8 : index
    %44 = arith.divui %41, %c4 : index
    %45 = arith.muli %44, %c32 : index
    %46 = arith.addi %45, %43 : index
    %47 = arith.addi %10, %46 : index
    %48 = arith.muli %44, %c40 : index
    %49 = arith.addi %48, %43 : index
    tessera_tile.cp_async %arg0[%47], %13[%49] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %50 = arith.addi %0, %c128 : index
    %51 = arith.remui %50, %c4 : index
    %52 = arith.muli %51, %c8 : index
    %53 = arith.divui %50, %c4 : index
    %54 = arith.muli %53, %c32 : index
    %55 = arith.addi %54, %52 : index
    %56 = arith.addi %10, %55 : index
    %57 = arith.muli %53, %c40 : index
    %58 = arith.addi %57, %52 : index
    tessera_tile.cp_async %arg0[%56], %13[%58] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %59 = arith.addi %0, %c160 : index
    %60 = arith.remui %59, %c4 : index
    %61 = arith.muli %60, %c8 : index
    %62 = arith.divui %59, %c4 : index
    %63 = arith.muli %62, %c32 : index
    %64 = arith.addi %63, %61 : index
    %65 = arith.addi %10, %64 : index
    %66 = arith.muli %62, %c40 : index
    %67 = arith.addi %66, %61 : index
    tessera_tile.cp_async %arg0[%65], %13[%67] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %68 = arith.addi %0, %c192 : index
    %69 = arith.remui %68, %c4 : index
    %70 = arith.muli %69, %c8 : index
    %71 = arith.divui %68, %c4 : index
    %72 = arith.muli %71, %c32 : index
    %73 = arith.addi %72, %70 : index
    %74 = arith.addi %10, %73 : index
    %75 = arith.muli %71, %c40 : index
    %76 = arith.addi %75, %70 : index
    tessera_tile.cp_async %arg0[%74], %13[%76] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %77 = arith.addi %0, %c224 : index
    %78 = arith.remui %77, %c4 : index
    %79 = arith.muli %78, %c8 : index
    %80 = arith.divui %77, %c4 : index
    %81 = arith.muli %80, %c32 : index
    %82 = arith.addi %81, %79 : index
    %83 = arith.addi %10, %82 : index
    %84 = arith.muli %80, %c40 : index
    %85 = arith.addi %84, %79 : index
    tessera_tile.cp_async %arg0[%83], %13[%85] elements = 8 : memref<4096xf16>, memref<5120xf16, 3>
    %86 = arith.muli %17, %c64 : index
    %87 = arith.addi %86, %16 : index
    %88 = arith.addi %12, %87 : index
    tessera_tile.cp_async %arg1[%88], %14[%22] elements = 8 : memref<2048xf16>, memref<2560xf16, 3>
    %89 = arith.muli %26, %c64 : index
    %90 = arith.addi %89, %25 : index
    %91 = arith.addi %12, %90 : index
    tessera_tile.cp_async %arg1[%91], %14[%31] elements = 8 : memref<2048xf16>, memref<2560xf16, 3>
    %92 = arith.muli %35, %c64 : index
    %93 = arith.addi %92, %34 : index
    %94 = arith.addi %12, %93 : index
    tessera_tile.cp_async %arg1[%94], %14[%40] elements = 8 : memref<2048xf16>, memref<2560xf16, 3>
    %95 = arith.muli %44, %c64 : index
    %96 = arith.addi %95, %43 : index
    %97 = arith.addi %12, %96 : index
    tessera_tile.cp_async %arg1[%97], %14[%49] elements = 8 : memref<2048xf16>, memref<2560xf16, 3>
    tessera_tile.cp_async_commit
    tessera_tile.cp_async_wait 0
    tessera_tile.barrier
    tessera_tile.cp_async_commit
    %98 = arith.muli %4, %c2560 : index
    %99 = tessera_tile.wave32_mma %13[%98], %14[%c0], %cst {lda = 40 : i64, ldb = 40 : i64, m = 64 : i64, n = 32 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<2560xf16, 3>, vector<64xf32>
    %100 = arith.addi %98, %c16 : index
    %101 = tessera_tile.wave32_mma %13[%100], %14[%c640], %99 {lda = 40 : i64, ldb = 40 : i64, m = 64 : i64, n = 32 : i64, operand_type = f16} : memref<5120xf16, 3>, memref<2560xf16, 3>, vector<64xf32>
    %102 = arith.divui %5, %c16 : index
    %103 = arith.muli %4, %c64 : index
    %104 = arith.addi %103, %102 : index
    %105 = arith.addi %6, %104 : index
    %106 = arith.remui %5, %c16 : index
    %107 = arith.addi %7, %106 : index
    %108 = vector.extract %101[0] : vector<64xf32>
    %109 = arith.muli %105, %c64 : index
    %110 = arith.addi %109, %107 : index
    %111 = arith.muli %3, %c8192 : index
    %112 = arith.addi %111, %110 : index
    memref.store %108, %arg2[%112] : memref<8192xf32>
    %113 = arith.addi %105, %c2 : index
    %114 = vector.extract %101[1] : vector<64xf32>
    %115 = arith.muli %113, %c64 : index
    %116 = arith.addi %115, %107 : index
    %117 = arith.addi %111, %116 : index
    memref.store %114, %arg2[%117] : memref<8192xf32>
    %118 = arith.addi %105, %c4 : index
    %119 = vector.extract %101[2] : vector<64xf32>
    %120 = arith.muli %118, %c64 : index
    %121 = arith.addi %120, %107 : index
    %122 = arith.addi %111, %121 : index
    memref.store %119, %arg2[%122] : memref<8192xf32>
    %123 = arith.addi %105, %c6 : index
    %124 = vector.extract %101[3] : vector<64xf32>
    %125 = arith.muli %123, %c64 : index
    %126 = arith.addi %125, %107 : index
    %127 = arith.addi %111, %126 : index
    memref.store %124, %arg2[%127] : memref<8192xf32>
    %128 = arith.addi %105, %c8 : index
    %129 = vector.extract %101[4] : vector<64xf32>
    %130 = arith.muli %128, %c64 : index
    %131 = arith.addi %130, %107 : index
    %132 = arith.addi %111, %131 : index
    memref.store %129, %arg2[%132] : memref<8192xf32>
    %133 = arith.addi %105, %c10 : index
    %134 = vector.extract %101[5] : vector<64xf32>
    %135 = arith.muli %133, %c64 : index
    %136 = arith.addi %135, %107 : index
    %137 = arith.addi %111, %136 : index
    memref.store %134, %arg2[%137] : memref<8192xf32>
    %138 = arith.addi %105, %c12 : index
    %139 = vector.extract %101[6] : vector<64xf32>
    %140 = arith.muli %138, %c64 : index
    %141 = arith.addi %140, %107 : index
    %142 = arith.addi %111, %141 : index
    memref.store %139, %arg2[%142] : memref<8192xf32>
    %143 = arith.addi %105, %c14 : index
    %144 = vector.extract %101[7] : vector<64xf32>
    %145 = arith.muli %143, %c64 : index
    %146 = arith.addi %145, %107 : index
    %147 = arith.addi %111, %146 : index
    memref.store %144, %arg2[%147] : memref<8192xf32>
    %148 = arith.addi %107, %c16 : index
    %149 = vector.extract %101[8] : vector<64xf32>
    %150 = arith.addi %109, %148 : index
    %151 = arith.addi %111, %150 : index
    memref.store %149, %arg2[%151] : memref<8192xf32>
    %152 = vector.extract %101[9] : vector<64xf32>
    %153 = arith.addi %115, %148 : index
    %154 = arith.addi %111, %153 : index
    memref.store %152, %arg2[%154] : memref<8192xf32>
    %155 = vector.extract %101[10] : vector<64xf32>
    %156 = arith.addi %120, %148 : index
    %157 = arith.addi %111, %156 : index
    memref.store %155, %arg2[%157] : memref<8192xf32>
    %158 = vector.extract %101[11] : vector<64xf32>
    %159 = arith.addi %125, %148 : index
    %160 = arith.addi %111, %159 : index
    memref.store %158, %arg2[%160] : memref<8192xf32>
    %161 = vector.extract %101[12] : vector<64xf32>
    %162 = arith.addi %130, %148 : index
    %163 = arith.addi %111, %162 : index
    memref.store %161, %arg2[%163] : memref<8192xf32>
    %164 = vector.extract %101[13] : vector<64xf32>
    %165 = arith.addi %135, %148 : index
    %166 = arith.addi %111, %165 : index
    memref.store %164, %arg2[%166] : memref<8192xf32>
    %167 = vector.extract %101[14] : vector<64xf32>
    %168 = arith.addi %140, %148 : index
    %169 = arith.addi %111, %168 : index
    memref.store %167, %arg2[%169] : memref<8192xf32>
    %170 = vector.extract %101[15] : vector<64xf32>
    %171 = arith.addi %145, %148 : index
    %172 = arith.addi %111, %171 : index
    memref.store %170, %arg2[%172] : memref<8192xf32>
    %173 = arith.addi %105, %c16 : index
    %174 = vector.extract %101[16] : vector<64xf32>
    %175 = arith.muli %173, %c64 : index
    %176 = arith.addi %175, %107 : index
    %177 = arith.addi %111, %176 : index
    memref.store %174, %arg2[%177] : memref<8192xf32>
    %178 = arith.addi %105, %c18 : index
    %179 = vector.extract %101[17] : vector<64xf32>
    %180 = arith.muli %178, %c64 : index
    %181 = arith.addi %180, %107 : index
    %182 = arith.addi %111, %181 : index
    memref.store %179, %arg2[%182] : memref<8192xf32>
    %183 = arith.addi %105, %c20 : index
    %184 = vector.extract %101[18] : vector<64xf32>
    %185 = arith.muli %183, %c64 : index
    %186 = arith.addi %185, %107 : index
    %187 = arith.addi %111, %186 : index
    memref.store %184, %arg2[%187] : memref<8192xf32>
    %188 = arith.addi %105, %c22 : index
    %189 = vector.extract %101[19] : vector<64xf32>
    %190 = arith.muli %188, %c64 : index
    %191 = arith.addi %190, %107 : index
    %192 = arith.addi %111, %191 : index
    memref.store %189, %arg2[%192] : memref<8192xf32>
    %193 = arith.addi %105, %c24 : index
    %194 = vector.extract %101[20] : vector<64xf32>
    %195 = arith.muli %193, %c64 : index
    %196 = arith.addi %195, %107 : index
    %197 = arith.addi %111, %196 : index
    memref.store %194, %arg2[%197] : memref<8192xf32>
    %198 = arith.addi %105, %c26 : index
    %199 = vector.extract %101[21] : vector<64xf32>
    %200 = arith.muli %198, %c64 : index
    %201 = arith.addi %200, %107 : index
    %202 = arith.addi %111, %201 : index
    memref.store %199, %arg2[%202] : memref<8192xf32>
    %203 = arith.addi %105, %c28 : index
    %204 = vector.extract %101[22] : vector<64xf32>
    %205 = arith.muli %203, %c64 : index
    %206 = arith.addi %205, %107 : index
    %207 = arith.addi %111, %206 : index
    memref.store %204, %arg2[%207] : memref<8192xf32>
    %208 = arith.addi %105, %c30 : index
    %209 = vector.extract %101[23] : vector<64xf32>
    %210 = arith.muli %208, %c64 : index
    %211 = arith.addi %210, %107 : index
    %212 = arith.addi %111, %211 : index
    memref.store %209, %arg2[%212] : memref<8192xf32>
    %213 = vector.extract %101[24] : vector<64xf32>
    %214 = arith.addi %175, %148 : index
    %215 = arith.addi %111, %214 : index
    memref.store %213, %arg2[%215] : memref<8192xf32>
    %216 = vector.extract %101[25] : vector<64xf32>
    %217 = arith.addi %180, %148 : index
    %218 = arith.addi %111, %217 : index
    memref.store %216, %arg2[%218] : memref<8192xf32>
    %219 = vector.extract %101[26] : vector<64xf32>
    %220 = arith.addi %185, %148 : index
    %221 = arith.addi %111, %220 : index
    memref.store %219, %arg2[%221] : memref<8192xf32>
    %222 = vector.extract %101[27] : vector<64xf32>
    %223 = arith.addi %190, %148 : index
    %224 = arith.addi %111, %223 : index
    memref.store %222, %arg2[%224] : memref<8192xf32>
    %225 = vector.extract %101[28] : vector<64xf32>
    %226 = arith.addi %195, %148 : index
    %227 = arith.addi %111, %226 : index
    memref.store %225, %arg2[%227] : memref<8192xf32>
    %228 = vector.extract %101[29] : vector<64xf32>
    %229 = arith.addi %200, %148 : index
    %230 = arith.addi %111, %229 : index
    memref.store %228, %arg2[%230] : memref<8192xf32>
    %231 = vector.extract %101[30] : vector<64xf32>
    %232 = arith.addi %205, %148 : index
    %233 = arith.addi %111, %232 : index
    memref.store %231, %arg2[%233] : memref<8192xf32>
    %234 = vector.extract %101[31] : vector<64xf32>
    %235 = arith.addi %210, %148 : index
    %236 = arith.addi %111, %235 : index
    memref.store %234, %arg2[%236] : memref<8192xf32>
    %237 = arith.addi %105, %c32 : index
    %238 = vector.extract %101[32] : vector<64xf32>
    %239 = arith.muli %237, %c64 : index
    %240 = arith.addi %239, %107 : index
    %241 = arith.addi %111, %240 : index
    memref.store %238, %arg2[%241] : memref<8192xf32>
    %242 = arith.addi %105, %c34 : index
    %243 = vector.extract %101[33] : vector<64xf32>
    %244 = arith.muli %242, %c64 : index
    %245 = arith.addi %244, %107 : index
    %246 = arith.addi %111, %245 : index
    memref.store %243, %arg2[%246] : memref<8192xf32>
    %247 = arith.addi %105, %c36 : index
    %248 = vector.extract %101[34] : vector<64xf32>
    %249 = arith.muli %247, %c64 : index
    %250 = arith.addi %249, %107 : index
    %251 = arith.addi %111, %250 : index
    memref.store %248, %arg2[%251] : memref<8192xf32>
    %252 = arith.addi %105, %c38 : index
    %253 = vector.extract %101[35] : vector<64xf32>
    %254 = arith.muli %252, %c64 : index
    %255 = arith.addi %254, %107 : index
    %256 = arith.addi %111, %255 : index
    memref.store %253, %arg2[%256] : memref<8192xf32>
    %257 = arith.addi %105, %c40 : index
    %258 = vector.extract %101[36] : vector<64xf32>
    %259 = arith.muli %257, %c64 : index
    %260 = arith.addi %259, %107 : index
    %261 = arith.addi %111, %260 : index
    memref.store %258, %arg2[%261] : memref<8192xf32>
    %262 = arith.addi %105, %c42 : index
    %263 = vector.extract %101[37] : vector<64xf32>
    %264 = arith.muli %262, %c64 : index
    %265 = arith.addi %264, %107 : index
    %266 = arith.addi %111, %265 : index
    memref.store %263, %arg2[%266] : memref<8192xf32>
    %267 = arith.addi %105, %c44 : index
    %268 = vector.extract %101[38] : vector<64xf32>
    %269 = arith.muli %267, %c64 : index
    %270 = arith.addi %269, %107 : index
    %271 = arith.addi %111, %270 : index
    memref.store %268, %arg2[%271] : memref<8192xf32>
    %272 = arith.addi %105, %c46 : index
    %273 = vector.extract %101[39] : vector<64xf32>
    %274 = arith.muli %272, %c64 : index
    %275 = arith.addi %274, %107 : index
    %276 = arith.addi %111, %275 : index
    memref.store %273, %arg2[%276] : memref<8192xf32>
    %277 = vector.extract %101[40] : vector<64xf32>
    %278 = arith.addi %239, %148 : index
    %279 = arith.addi %111, %278 : index
    memref.store %277, %arg2[%279] : memref<8192xf32>
    %280 = vector.extract %101[41] : vector<64xf32>
    %281 = arith.addi %244, %148 : index
    %282 = arith.addi %111, %281 : index
    memref.store %280, %arg2[%282] : memref<8192xf32>
    %283 = vector.extract %101[42] : vector<64xf32>
    %284 = arith.addi %249, %148 : index
    %285 = arith.addi %111, %284 : index
    memref.store %283, %arg2[%285] : memref<8192xf32>
    %286 = vector.extract %101[43] : vector<64xf32>
    %287 = arith.addi %254, %148 : index
    %288 = arith.addi %111, %287 : index
    memref.store %286, %arg2[%288] : memref<8192xf32>
    %289 = vector.extract %101[44] : vector<64xf32>
    %290 = arith.addi %259, %148 : index
    %291 = arith.addi %111, %290 : index
    memref.store %289, %arg2[%291] : memref<8192xf32>
    %292 = vector.extract %101[45] : vector<64xf32>
    %293 = arith.addi %264, %148 : index
    %294 = arith.addi %111, %293 : index
    memref.store %292, %arg2[%294] : memref<8192xf32>
    %295 = vector.extract %101[46] : vector<64xf32>
    %296 = arith.addi %269, %148 : index
    %297 = arith.addi %111, %296 : index
    memref.store %295, %arg2[%297] : memref<8192xf32>
    %298 = vector.extract %101[47] : vector<64xf32>
    %299 = arith.addi %274, %148 : index
    %300 = arith.addi %111, %299 : index
    memref.store %298, %arg2[%300] : memref<8192xf32>
    %301 = arith.addi %105, %c48 : index
    %302 = vector.extract %101[48] : vector<64xf32>
    %303 = arith.muli %301, %c64 : index
    %304 = arith.addi %303, %107 : index
    %305 = arith.addi %111, %304 : index
    memref.store %302, %arg2[%305] : memref<8192xf32>
    %306 = arith.addi %105, %c50 : index
    %307 = vector.extract %101[49] : vector<64xf32>
    %308 = arith.muli %306, %c64 : index
    %309 = arith.addi %308, %107 : index
    %310 = arith.addi %111, %309 : index
    memref.store %307, %arg2[%310] : memref<8192xf32>
    %311 = arith.addi %105, %c52 : index
    %312 = vector.extract %101[50] : vector<64xf32>
    %313 = arith.muli %311, %c64 : index
    %314 = arith.addi %313, %107 : index
    %315 = arith.addi %111, %314 : index
    memref.store %312, %arg2[%315] : memref<8192xf32>
    %316 = arith.addi %105, %c54 : index
    %317 = vector.extract %101[51] : vector<64xf32>
    %318 = arith.muli %316, %c64 : index
    %319 = arith.addi %318, %107 : index
    %320 = arith.addi %111, %319 : index
    memref.store %317, %arg2[%320] : memref<8192xf32>
    %321 = arith.addi %105, %c56 : index
    %322 = vector.extract %101[52] : vector<64xf32>
    %323 = arith.muli %321, %c64 : index
    %324 = arith.addi %323, %107 : index
    %325 = arith.addi %111, %324 : index
    memref.store %322, %arg2[%325] : memref<8192xf32>
    %326 = arith.addi %105, %c58 : index
    %327 = vector.extract %101[53] : vector<64xf32>
    %328 = arith.muli %326, %c64 : index
    %329 = arith.addi %328, %107 : index
    %330 = arith.addi %111, %329 : index
    memref.store %327, %arg2[%330] : memref<8192xf32>
    %331 = arith.addi %105, %c60 : index
    %332 = vector.extract %101[54] : vector<64xf32>
    %333 = arith.muli %331, %c64 : index
    %334 = arith.addi %333, %107 : index
    %335 = arith.addi %111, %334 : index
    memref.store %332, %arg2[%335] : memref<8192xf32>
    %336 = arith.addi %105, %c62 : index
    %337 = vector.extract %101[55] : vector<64xf32>
    %338 = arith.muli %336, %c64 : index
    %339 = arith.addi %338, %107 : index
    %340 = arith.addi %111, %339 : index
    memref.store %337, %arg2[%340] : memref<8192xf32>
    %341 = vector.extract %101[56] : vector<64xf32>
    %342 = arith.addi %303, %148 : index
    %343 = arith.addi %111, %342 : index
    memref.store %341, %arg2[%343] : memref<8192xf32>
    %344 = vector.extract %101[57] : vector<64xf32>
    %345 = arith.addi %308, %148 : index
    %346 = arith.addi %111, %345 : index
    memref.store %344, %arg2[%346] : memref<8192xf32>
    %347 = vector.extract %101[58] : vector<64xf32>
    %348 = arith.addi %313, %148 : index
    %349 = arith.addi %111, %348 : index
    memref.store %347, %arg2[%349] : memref<8192xf32>
    %350 = vector.extract %101[59] : vector<64xf32>
    %351 = arith.addi %318, %148 : index
    %352 = arith.addi %111, %351 : index
    memref.store %350, %arg2[%352] : memref<8192xf32>
    %353 = vector.extract %101[60] : vector<64xf32>
    %354 = arith.addi %323, %148 : index
    %355 = arith.addi %111, %354 : index
    memref.store %353, %arg2[%355] : memref<8192xf32>
    %356 = vector.extract %101[61] : vector<64xf32>
    %357 = arith.addi %328, %148 : index
    %358 = arith.addi %111, %357 : index
    memref.store %356, %arg2[%358] : memref<8192xf32>
    %359 = vector.extract %101[62] : vector<64xf32>
    %360 = arith.addi %333, %148 : index
    %361 = arith.addi %111, %360 : index
    memref.store %359, %arg2[%361] : memref<8192xf32>
    %362 = vector.extract %101[63] : vector<64xf32>
    %363 = arith.addi %338, %148 : index
    %364 = arith.addi %111, %363 : index
    memref.store %362, %arg2[%364] : memref<8192xf32>
    return
  }
}

