// Area "layouts": the five LayoutSpec layouts of the Graph IR (row_major,
// col_major, blocked<BM,BN>, tiled<TM,TN,tm,tn>, interleaved<K>).
//
// Implementation: the conversions run ON THE DEVICE as Tile IR kernels that
// the plugin under test compiles (conformance/kernels/tile/layout_blocked.mlir
// for row_major, col_major, blocked and interleaved, which are all blocked
// layouts; layout_tiled.mlir), one lane per logical element, specialised per
// layout.  The host keeps its own index map (kernels/layouts.h, written
// separately from the kernels) and checks the packed storage element by
// element, then that unpacking gives back the original bit for bit.  Sizes
// are deliberately not multiples of the blocks, so padding is covered.
#include <algorithm>
#include <map>

#include "cts/cts.hpp"
#include "layouts.h"

namespace tessera::cts {
namespace {

using cts_layouts::Layout;

struct NamedLayout {
  const char* name;
  Layout layout;
};

const NamedLayout kLayouts[] = {
    {"row_major", {cts_layouts::kRowMajor, {0, 0, 0, 0}}},
    {"col_major", {cts_layouts::kColMajor, {0, 0, 0, 0}}},
    {"blocked<8,16>", {cts_layouts::kBlocked, {8, 16, 0, 0}}},
    {"blocked<5,3>", {cts_layouts::kBlocked, {5, 3, 0, 0}}},
    {"tiled<16,32,4,8>", {cts_layouts::kTiled, {16, 32, 4, 8}}},
    {"interleaved<4>", {cts_layouts::kInterleaved, {4, 0, 0, 0}}},
    {"interleaved<32>", {cts_layouts::kInterleaved, {32, 0, 0, 0}}},
};

// Skips (unsupported: compiler) when the plugin compiles nothing.
#define CTS_REQUIRE_LAYOUT_KERNELS()                                              \
  do {                                                                            \
    auto [file, params] = SourceFor(kLayouts[0].layout);                          \
    CTS_TILE_KERNEL(probe, file, "layout_pack", params);                          \
  } while (0)

class Layouts : public CtsTest {
 protected:
  static constexpr uint32_t M = 37, N = 53;

  std::vector<float> Matrix() {
    std::vector<float> m(size_t(M) * N);
    for (size_t i = 0; i < m.size(); ++i)
      m[i] = static_cast<float>(i) * 0.37f - 100.0f + 1.0f / float(i + 3);
    return m;
  }
  // The Tile IR source and its parameters for layout `l`.
  std::pair<std::string, std::map<std::string, std::string>> SourceFor(const Layout& l) {
    auto s = [](uint64_t v) { return std::to_string(v); };
    std::map<std::string, std::string> p = {
        {"L", s(std::min<uint32_t>(64, info().max_group_size))}, {"MN", s(uint64_t(M) * N)}, {"N", s(N)}};
    if (l.kind == cts_layouts::kTiled) {
      const uint64_t TM = l.p[0], TN = l.p[1], tm = l.p[2], tn = l.p[3];
      p.insert({{"TM", s(TM)}, {"TN", s(TN)}, {"SM", s(tm)}, {"SN", s(tn)},
                {"MPR", s((N + TN - 1) / TN)}, {"MICRO_PER_ROW", s(TN / tn)},
                {"TMTN", s(TM * TN)}, {"SMSN", s(tm * tn)}});
      return {"layout_tiled", p};
    }
    // row_major = blocked<1,N>, col_major = blocked<M,1>,
    // interleaved<K> = blocked<K,1>.
    uint64_t BM = l.p[0], BN = l.p[1];
    if (l.kind == cts_layouts::kRowMajor) BM = 1, BN = N;
    if (l.kind == cts_layouts::kColMajor) BM = M, BN = 1;
    if (l.kind == cts_layouts::kInterleaved) BN = 1;
    p.insert({{"BM", s(BM)}, {"BN", s(BN)}, {"BPR", s((N + BN - 1) / BN)}, {"BMBN", s(BM * BN)}});
    return {"layout_blocked", p};
  }
  Status Convert(const char* kernel_name, const Buffer& dst, const Buffer& src,
                 const Layout& l) {
    auto [file, params] = SourceFor(l);
    TileKernel tk;
    std::string why;
    if (!CompileTileKernel(file, kernel_name, params, &tk, &why))
      return Status(why.rfind("unsupported: ", 0) == 0 ? StatusCode::kUnsupported : StatusCode::kInternal, why);
    Stream s = device().default_stream();
    TESSERA_RETURN_IF_ERROR(s.launch(tk.kernel, Dim(GroupsFor(uint64_t(M) * N, tk.group.x)), tk.group,
                                     {KernelArg::buffer(dst), KernelArg::buffer(src)},
                                     tk.shared_memory_bytes));
    return s.synchronize();
  }
  // Packs `m` (row-major) into `l` on the device; returns the storage.
  StatusOr<Buffer> Pack(const Buffer& rm, const Layout& l) {
    uint64_t storage = cts_layouts::StorageSize(l, M, N);
    StatusOr<Buffer> out = device().allocate(storage * 4);
    if (!out.ok()) return out.status();
    TESSERA_RETURN_IF_ERROR(tessera::memset(*out, 0, 0xFF, storage * 4));  // NaN padding
    TESSERA_RETURN_IF_ERROR(Convert("layout_pack", *out, rm, l));
    return out;
  }
  StatusOr<Buffer> Unpack(const Buffer& packed, const Layout& l) {
    StatusOr<Buffer> out = device().allocate(uint64_t(M) * N * 4);
    if (!out.ok()) return out.status();
    TESSERA_RETURN_IF_ERROR(Convert("layout_unpack", *out, packed, l));
    return out;
  }
};

TEST_F(Layouts, PackedStorageMatchesTheIndexMap) {
  CTS_REQUIRE_LAYOUT_KERNELS();
  auto m = Matrix();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer rm, device().allocate(m.size() * 4));
  CTS_ASSERT_OK(Upload(rm, m));
  for (const NamedLayout& nl : kLayouts) {
    SCOPED_TRACE(nl.name);
    CTS_ASSERT_OK_AND_ASSIGN(Buffer packed, Pack(rm, nl.layout));
    uint64_t storage = cts_layouts::StorageSize(nl.layout, M, N);
    CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(packed, storage));
    std::vector<bool> used(storage, false);
    for (uint64_t i = 0; i < M; ++i)
      for (uint64_t j = 0; j < N; ++j) {
        uint64_t off = cts_layouts::Offset(nl.layout, M, N, i, j);
        ASSERT_LT(off, storage);
        ASSERT_FALSE(used[off]) << "two elements map to offset " << off;
        used[off] = true;
        ASSERT_EQ(std::memcmp(&got[off], &m[i * N + j], 4), 0)
            << "(" << i << "," << j << ") at offset " << off;
      }
  }
}

TEST_F(Layouts, RoundTripsAreExact) {
  CTS_REQUIRE_LAYOUT_KERNELS();
  auto m = Matrix();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer rm, device().allocate(m.size() * 4));
  CTS_ASSERT_OK(Upload(rm, m));
  for (const NamedLayout& nl : kLayouts) {
    SCOPED_TRACE(nl.name);
    CTS_ASSERT_OK_AND_ASSIGN(Buffer packed, Pack(rm, nl.layout));
    CTS_ASSERT_OK_AND_ASSIGN(Buffer back, Unpack(packed, nl.layout));
    CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(back, m.size()));
    EXPECT_TRUE(BitwiseEqual(got, m)) << "round trip through " << nl.name << " is not exact";
  }
}

TEST_F(Layouts, ConversionsBetweenAnyTwoLayouts) {
  CTS_REQUIRE_LAYOUT_KERNELS();
  auto m = Matrix();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer rm, device().allocate(m.size() * 4));
  CTS_ASSERT_OK(Upload(rm, m));
  for (const NamedLayout& a : kLayouts)
    for (const NamedLayout& b : kLayouts) {
      SCOPED_TRACE(std::string(a.name) + " -> " + b.name);
      // a -> (logical) -> b -> (logical)
      CTS_ASSERT_OK_AND_ASSIGN(Buffer pa, Pack(rm, a.layout));
      CTS_ASSERT_OK_AND_ASSIGN(Buffer la, Unpack(pa, a.layout));
      CTS_ASSERT_OK_AND_ASSIGN(Buffer pb, Pack(la, b.layout));
      CTS_ASSERT_OK_AND_ASSIGN(Buffer lb, Unpack(pb, b.layout));
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(lb, m.size()));
      ASSERT_TRUE(BitwiseEqual(got, m));
    }
}

TEST_F(Layouts, HostCopiesOfPackedDataRoundTrip) {
  CTS_REQUIRE_LAYOUT_KERNELS();
  // Packed storage survives device -> host -> device copies unchanged, so a
  // layout is a property of the data, not of the buffer.
  auto m = Matrix();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer rm, device().allocate(m.size() * 4));
  CTS_ASSERT_OK(Upload(rm, m));
  const Layout& l = kLayouts[4].layout;  // tiled
  CTS_ASSERT_OK_AND_ASSIGN(Buffer packed, Pack(rm, l));
  uint64_t storage = cts_layouts::StorageSize(l, M, N);
  CTS_ASSERT_OK_AND_ASSIGN(auto host, Download<float>(packed, storage));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer again, device().allocate(storage * 4));
  CTS_ASSERT_OK(Upload(again, host));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer back, Unpack(again, l));
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(back, m.size()));
  EXPECT_TRUE(BitwiseEqual(got, m));
}

}  // namespace
}  // namespace tessera::cts
