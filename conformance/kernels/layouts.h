// The five matrix layouts of the Graph IR's LayoutSpec, as index maps from a
// logical (row, col) of an M x N matrix to an element offset in storage:
// the host reference of areas/layouts_test.cpp.  The device side is Tile IR
// (kernels/tile/layout_blocked.mlir, layout_tiled.mlir), written separately,
// so the test checks one against the other.
//
//   row_major            (i, j) -> i*N + j
//   col_major            (i, j) -> j*M + i
//   blocked<BM,BN>       BM x BN blocks in row-major order, row-major inside;
//                        storage padded to whole blocks
//   tiled<TM,TN,tm,tn>   hierarchical: TM x TN macro tiles in row-major
//                        order, tm x tn micro tiles row-major inside each
//                        macro tile, row-major inside each micro tile;
//                        TM % tm == 0, TN % tn == 0; padded to macro tiles
//   interleaved<K>       groups of K consecutive rows stored column by
//                        column, the K elements of a column adjacent
//                        ((i/K)*N + j)*K + i%K; padded to whole groups
// Padding elements are never written by a pack and never read by an unpack.
#ifndef TESSERA_CONFORMANCE_LAYOUTS_H_
#define TESSERA_CONFORMANCE_LAYOUTS_H_

#include <stdint.h>

namespace cts_layouts {

enum Kind : uint32_t {
  kRowMajor = 0,
  kColMajor = 1,
  kBlocked = 2,
  kTiled = 3,
  kInterleaved = 4,
};

struct Layout {
  uint32_t kind;
  uint32_t p[4];  // blocked: BM,BN; tiled: TM,TN,tm,tn; interleaved: K
};

inline uint64_t RoundUp(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

// Elements of storage the layout needs for an M x N matrix.
inline uint64_t StorageSize(const Layout& l, uint64_t M, uint64_t N) {
  switch (l.kind) {
    case kBlocked: return RoundUp(M, l.p[0]) * RoundUp(N, l.p[1]);
    case kTiled: return RoundUp(M, l.p[0]) * RoundUp(N, l.p[1]);
    case kInterleaved: return RoundUp(M, l.p[0]) * N;
    default: return M * N;
  }
}

inline uint64_t Offset(const Layout& l, uint64_t M, uint64_t N, uint64_t i,
                       uint64_t j) {
  switch (l.kind) {
    case kRowMajor:
      return i * N + j;
    case kColMajor:
      return j * M + i;
    case kBlocked: {
      const uint64_t BM = l.p[0], BN = l.p[1];
      const uint64_t blocks_per_row = RoundUp(N, BN) / BN;
      const uint64_t block = (i / BM) * blocks_per_row + j / BN;
      return block * BM * BN + (i % BM) * BN + j % BN;
    }
    case kTiled: {
      const uint64_t TM = l.p[0], TN = l.p[1], tm = l.p[2], tn = l.p[3];
      const uint64_t macro_per_row = RoundUp(N, TN) / TN;
      const uint64_t macro = (i / TM) * macro_per_row + j / TN;
      const uint64_t ii = i % TM, jj = j % TN;
      const uint64_t micro = (ii / tm) * (TN / tn) + jj / tn;
      return macro * TM * TN + micro * tm * tn + (ii % tm) * tn + jj % tn;
    }
    case kInterleaved: {
      const uint64_t K = l.p[0];
      return ((i / K) * N + j) * K + i % K;
    }
  }
  return 0;
}

}  // namespace cts_layouts

#endif  // TESSERA_CONFORMANCE_LAYOUTS_H_
