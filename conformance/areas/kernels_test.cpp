// Area "kernels": Tile IR kernels run on the device and checked against
// host references: saxpy, a shared-memory reduction with barriers, atomics
// at each scope, subgroup shuffles, GEMM, softmax.
//
// Every kernel here is Tile IR (conformance/kernels/tile/*.mlir and the
// examples), compiled for the device under test BY ITS PLUGIN's compiler at
// test time (CompileTileKernel): a vendor certifies its compiler and its
// runtime together.  A plugin that compiles nothing reports these tests
// unsupported: compiler.
#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Kernels : public CtsTest {
 protected:
  std::vector<float> Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& f : v) f = dist(gen);
    return v;
  }
  void Atomics(uint32_t scope_bit, uint32_t scope);

  // The kernel's fixed group size must be the program's where it has one.
  static bool GroupMatches(const Kernel& k, TsDim3 g) {
    const TsDim3 r = k.info().required_group_size;
    return !r.x || (r.x == g.x && r.y == g.y && r.z == g.z);
  }
};

TEST_F(Kernels, Saxpy) {
  CTS_TILE_KERNEL(tk, "saxpy", "saxpy", {{"L", std::to_string(std::min<uint32_t>(128, info().max_group_size))}});
  const Kernel& k = tk.kernel;
  const uint64_t n = 100003;  // not a multiple of the group size
  auto x = Random(n, 1), y = Random(n, 2);
  const float a = 2.5f;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bx, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer by, device().allocate(n * 4));
  CTS_ASSERT_OK(Upload(bx, x));
  CTS_ASSERT_OK(Upload(by, y));
  Stream s = device().default_stream();
  const uint32_t group = tk.group.x;
  CTS_ASSERT_OK(s.launch(k, Dim(GroupsFor(n, group)), tk.group,
                         {KernelArg::buffer(by), KernelArg::buffer(bx), KernelArg::scalar(a),
                          KernelArg::scalar(n)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(by, n));
  for (uint64_t i = 0; i < n; ++i) {
    // Exact up to FMA contraction, which a GPU compiler may use.
    const double want = double(a) * x[i] + y[i];
    ASSERT_NEAR(got[i], want, 1e-6 * (std::fabs(a * x[i]) + std::fabs(y[i]) + 1e-30))
        << "element " << i;
  }
}

TEST_F(Kernels, ArgumentsAtBufferOffsets) {
  CTS_TILE_KERNEL(tk, "saxpy", "saxpy", {{"L", std::to_string(std::min<uint32_t>(64, info().max_group_size))}});
  const Kernel& k = tk.kernel;
  // Offsets are multiples of 256 bytes, the largest storage-buffer offset
  // alignment Vulkan allows a device to require (minStorageBufferOffset-
  // Alignment); the second one is not a multiple of 512.
  const uint64_t n = 1000, y_at = 256, x_at = 256 * 17;  // x_at >= y_at + 4n
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(x_at + 4 * n + 40));
  std::vector<float> x(n, 2.0f), y(n, 1.0f);
  CTS_ASSERT_OK(Upload(b, y, y_at));
  CTS_ASSERT_OK(Upload(b, x, x_at));
  Stream s = device().default_stream();
  const uint32_t group = tk.group.x;
  CTS_ASSERT_OK(s.launch(k, Dim(GroupsFor(n, group)), tk.group,
                         {KernelArg::buffer(b, y_at), KernelArg::buffer(b, x_at),
                          KernelArg::scalar(3.0f), KernelArg::scalar(n)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<float>(b, n, y_at));
  EXPECT_EQ(v, std::vector<float>(n, 7.0f));
}

TEST_F(Kernels, MultiDimensionalGrid) {
  // A 3-D grid of 1-D groups covers a flat array exactly once.
  CTS_TILE_KERNEL(tk, "mul_add_u32", "mul_add_u32", {{"L", "16"}});
  const Kernel& k = tk.kernel;
  const uint32_t group = tk.group.x;
  const uint64_t n = 4 * 3 * 5 * uint64_t(group);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
  CTS_ASSERT_OK(tessera::memset(b, 0, 0, n * 4));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(4, 3, 5), tk.group,
                         {KernelArg::buffer(b), KernelArg::scalar(1u), KernelArg::scalar(1u),
                          KernelArg::scalar(n)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(b, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 1u)) << "an element was missed or run twice";
}

TEST_F(Kernels, SharedMemoryReductionWithBarriers) {
  uint32_t L = 256;
  while (L > info().max_group_size || L * 4 > info().shared_memory_per_group) L /= 2;
  CTS_REQUIRE(L >= 2, "max_group_size>=2 and shared_memory_per_group>=8");
  uint32_t log2 = 0;
  while ((1u << log2) < L) ++log2;
  CTS_TILE_KERNEL(tk, "group_reduce_f32", "group_reduce_f32",
                  {{"L", std::to_string(L)}, {"LOG2L", std::to_string(log2)}});
  const Kernel& k = tk.kernel;
  const uint32_t groups = 97;
  const uint64_t n = uint64_t(L) * groups - 17;
  auto in = Random(n, 3);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bin, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bout, device().allocate(groups * 4));
  CTS_ASSERT_OK(Upload(bin, in));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(groups), Dim(L),
                         {KernelArg::buffer(bout), KernelArg::buffer(bin), KernelArg::scalar(n)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(bout, groups));
  // The same fixed tree on the host: bitwise equal.
  for (uint32_t g = 0; g < groups; ++g) {
    std::vector<float> t(L);
    for (uint32_t l = 0; l < L; ++l) {
      uint64_t i = uint64_t(g) * L + l;
      t[l] = i < n ? in[i] : 0.0f;
    }
    for (uint32_t st = L / 2; st > 0; st /= 2)
      for (uint32_t l = 0; l < st; ++l) t[l] += t[l + st];
    ASSERT_EQ(got[g], t[0]) << "group " << g;
  }
}

void Kernels::Atomics(uint32_t scope_bit, uint32_t scope) {
  // Scopes tile, group and device are one kernel; mesh (system scope) its
  // own, which a plugin without mesh atomics need not compile.
  const char* file = scope == 3 ? "atomic_add_mesh" : "atomic_add";
  const std::map<std::string, std::string> params = {
      {"L", std::to_string(std::min<uint32_t>(64, info().max_group_size))}};
  CTS_TILE_KERNEL(tk, file, file, params);
  const Kernel& k = tk.kernel;
  const uint32_t L = tk.group.x;
  const uint32_t groups = 40, iters = 50;
  std::vector<KernelArg> args;
  if (scope == 3) {
    // System scope: a host-visible counter that the host and every device
    // increment at the same time.
    CTS_REQUIRE(info().supports(TS_BUFFER_HOST_PINNED), "buffer_kinds.host_pinned");
    CTS_ASSERT_OK_AND_ASSIGN(Buffer c, device().allocate(64, TS_BUFFER_HOST_PINNED));
    auto* host = static_cast<uint32_t*>(c.host_pointer());
    ASSERT_NE(host, nullptr);
    __atomic_store_n(host, 0u, __ATOMIC_SEQ_CST);
    size_t used = 0;
    std::vector<Stream> streams;
    for (size_t d = 0; d < devices().size(); ++d) {
      if (!(devices()[d].info().atomic_scopes & TS_ATOMIC_SCOPE_MESH)) continue;
      TileKernel kd;
      std::string why;
      ASSERT_TRUE(CompileTileKernel(file, file, params, &kd, &why, d)) << "device " << d << ": " << why;
      CTS_ASSERT_OK_AND_ASSIGN(Stream sd, devices()[d].create_stream());
      CTS_ASSERT_OK(sd.launch(kd.kernel, Dim(groups), kd.group,
                              {KernelArg::buffer(c), KernelArg::scalar(3u),
                               KernelArg::scalar(iters)},
                              kd.shared_memory_bytes));
      streams.push_back(sd);
      ++used;
    }
    const uint32_t host_adds = 100000;
    for (uint32_t i = 0; i < host_adds; ++i) __atomic_fetch_add(host, 1u, __ATOMIC_SEQ_CST);
    for (Stream& sd : streams) CTS_ASSERT_OK(sd.synchronize());
    EXPECT_EQ(__atomic_load_n(host, __ATOMIC_SEQ_CST),
              host_adds + used * groups * L * iters)
        << "increments lost between the host and " << used << " device(s)";
    return;
  }
  const uint64_t words = scope == 0 ? uint64_t(groups) * L : groups;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer c, device().allocate(words * 4));
  CTS_ASSERT_OK(tessera::memset(c, 0, 0, words * 4));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(groups), tk.group,
                         {KernelArg::buffer(c), KernelArg::scalar(scope),
                          KernelArg::scalar(iters)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(c, words));
  if (scope == 0) {
    EXPECT_EQ(v, std::vector<uint32_t>(words, iters));
  } else if (scope == 1) {
    EXPECT_EQ(v, std::vector<uint32_t>(words, L * iters));
  } else {
    EXPECT_EQ(v[0], groups * L * iters);
  }
  (void)scope_bit;
}

TEST_F(Kernels, AtomicsTileScope) {
  CTS_REQUIRE(info().atomic_scopes & TS_ATOMIC_SCOPE_TILE, "atomic_scopes.tile");
  Atomics(TS_ATOMIC_SCOPE_TILE, 0);
}
TEST_F(Kernels, AtomicsGroupScope) {
  CTS_REQUIRE(info().atomic_scopes & TS_ATOMIC_SCOPE_GROUP, "atomic_scopes.group");
  Atomics(TS_ATOMIC_SCOPE_GROUP, 1);
}
TEST_F(Kernels, AtomicsDeviceScope) {
  CTS_REQUIRE(info().atomic_scopes & TS_ATOMIC_SCOPE_DEVICE, "atomic_scopes.device");
  Atomics(TS_ATOMIC_SCOPE_DEVICE, 2);
}
TEST_F(Kernels, AtomicsMeshScope) {
  CTS_REQUIRE(info().atomic_scopes & TS_ATOMIC_SCOPE_MESH, "atomic_scopes.mesh");
  Atomics(TS_ATOMIC_SCOPE_MESH, 3);
}

TEST_F(Kernels, SubgroupShuffle) {
  const uint32_t sg = info().subgroup_size;
  CTS_REQUIRE(sg >= 1 && sg <= info().max_group_size, "subgroup_size");
  uint32_t L = sg;
  while (L * 2 <= std::min<uint32_t>(128, info().max_group_size)) L *= 2;
  const uint32_t groups = 9;
  const uint64_t n = uint64_t(L) * groups;
  std::vector<uint32_t> in(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 31 + 7);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bin, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bout, device().allocate(n * 4));
  CTS_ASSERT_OK(Upload(bin, in));
  Stream s = device().default_stream();
  for (const char* name : {"shuffle_xor", "shuffle_down"})
    for (uint32_t p = 0; p < sg; p = p ? p * 2 : 1) {
      SCOPED_TRACE(std::string(name) + " " + std::to_string(p) + ", subgroup " + std::to_string(sg));
      CTS_TILE_KERNEL(tk, name, name, {{"L", std::to_string(L)}});
      ASSERT_EQ(tk.group.x, L) << "compiled for groups of " << L;
      CTS_ASSERT_OK(s.launch(tk.kernel, Dim(groups), tk.group,
                             {KernelArg::buffer(bout), KernelArg::buffer(bin),
                              KernelArg::scalar(sg), KernelArg::scalar(p)},
                             tk.shared_memory_bytes));
      CTS_ASSERT_OK(s.synchronize());
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<uint32_t>(bout, n));
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t base = i / sg * sg;
        const uint32_t l = static_cast<uint32_t>(i % sg);
        const uint32_t partner = std::string(name) == "shuffle_xor" ? (l ^ p)
                                 : (l + p < sg ? l + p : l);
        ASSERT_EQ(got[i], in[base + partner]) << "lane " << i;
      }
      if (sg == 1) break;  // the only shuffle of a 1-lane subgroup
    }
}

TEST_F(Kernels, Gemm) {
  const uint32_t T = 8;
  CTS_REQUIRE(info().max_group_size >= T * T, "max_group_size>=64");
  CTS_REQUIRE(info().shared_memory_per_group >= 2 * T * T * 4, "shared_memory_per_group>=512");
  const uint32_t M = 67, N = 45, K = 33;  // not multiples of the tile
  auto A = Random(size_t(M) * K, 4), B = Random(size_t(K) * N, 5);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bA, device().allocate(A.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bB, device().allocate(B.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bC, device().allocate(size_t(M) * N * 4));
  CTS_ASSERT_OK(Upload(bA, A));
  CTS_ASSERT_OK(Upload(bB, B));
  CTS_TILE_KERNEL(tk, "gemm_f32", "gemm_f32", {});
  const TsDim3 g = tk.group;
  ASSERT_TRUE(g.x == T && g.y == T && g.z == 1) << "the kernel's group size must be 8x8";
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(tk.kernel, Dim(GroupsFor(N, T), GroupsFor(M, T)), g,
                         {KernelArg::buffer(bC), KernelArg::buffer(bA), KernelArg::buffer(bB),
                          KernelArg::scalar(M), KernelArg::scalar(N), KernelArg::scalar(K)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto C, Download<float>(bC, size_t(M) * N));
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (uint32_t kk = 0; kk < K; ++kk) {
        ref += double(A[i * K + kk]) * B[kk * N + j];
        mag += std::fabs(double(A[i * K + kk]) * B[kk * N + j]);
      }
      ASSERT_NEAR(C[i * N + j], ref, 1e-6 * K * (mag + 1.0)) << "C[" << i << "][" << j << "]";
    }
}

TEST_F(Kernels, Softmax) {
  const uint32_t L = std::min<uint32_t>(64, info().max_group_size);
  CTS_REQUIRE(info().shared_memory_per_group >= (L + 2) * 4, "shared_memory_per_group");
  CTS_TILE_KERNEL(tk, "softmax_f32", "softmax_f32",
                  {{"L", std::to_string(L)}, {"L1", std::to_string(L + 1)}, {"L2", std::to_string(L + 2)}});
  const uint32_t rows = 37, cols = 1000;
  auto in = Random(size_t(rows) * cols, 6, -8.0f, 8.0f);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bin, device().allocate(in.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bout, device().allocate(in.size() * 4));
  CTS_ASSERT_OK(Upload(bin, in));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(tk.kernel, Dim(rows), tk.group,
                         {KernelArg::buffer(bout), KernelArg::buffer(bin),
                          KernelArg::scalar(rows), KernelArg::scalar(cols)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(bout, in.size()));
  for (uint32_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0, total = 0;
    for (uint32_t c = 0; c < cols; ++c) mx = std::max<double>(mx, in[r * cols + c]);
    for (uint32_t c = 0; c < cols; ++c) sum += std::exp(double(in[r * cols + c]) - mx);
    for (uint32_t c = 0; c < cols; ++c) {
      double ref = std::exp(double(in[r * cols + c]) - mx) / sum;
      ASSERT_NEAR(got[r * cols + c], ref, 1e-6 + 1e-4 * ref) << "row " << r << " col " << c;
      total += got[r * cols + c];
    }
    EXPECT_NEAR(total, 1.0, 1e-4) << "row " << r;
  }
}

TEST_F(Kernels, LaunchesOnEveryDevice) {
  CTS_TILE_KERNEL(first, "fill_u32", "fill_u32", {{"L", "64"}});
  (void)first;
  for (size_t d = 0; d < devices().size(); ++d) {
    TileKernel tk;
    std::string why;
    if (!CompileTileKernel("fill_u32", "fill_u32", {{"L", "64"}}, &tk, &why, d)) {
      ADD_FAILURE() << "device " << d << ": " << why;
      continue;
    }
    CTS_ASSERT_OK_AND_ASSIGN(Buffer b, devices()[d].allocate(1024));
    Stream s = devices()[d].default_stream();
    const uint32_t group = tk.group.x;
    CTS_ASSERT_OK(s.launch(tk.kernel, Dim(GroupsFor(256, group)), tk.group,
                           {KernelArg::buffer(b), KernelArg::scalar(uint32_t(d + 1)),
                            KernelArg::scalar(uint64_t(256))},
                           tk.shared_memory_bytes));
    CTS_ASSERT_OK(s.synchronize());
    CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(b, 256));
    EXPECT_EQ(v, std::vector<uint32_t>(256, uint32_t(d + 1))) << "device " << d;
  }
}

// ---------------------------------------------------------------- examples
// The Tile IR examples themselves (examples/saxpy.mlir, reduction.mlir,
// tiled_gemm.mlir, pipeline.mlir; copied into <kernels dir>/tile/), with
// their own grids, group sizes and shared memory.

TEST_F(Kernels, TileIrSaxpy) {
  // func @saxpy(%a: f32, %x: memref<65536xf32>, %y: memref<65536xf32>),
  // grid 64, group 128, 8 elements per lane: y = a * x + y.
  CTS_REQUIRE(info().max_group_size >= 128, "max_group_size>=128");
  CTS_TILE_KERNEL(tk, "example_saxpy", "saxpy", {});
  const Kernel& k = tk.kernel;
  ASSERT_TRUE(GroupMatches(k, Dim(128)) && tk.group.x == 128) << "the example's group size is 128";
  const uint64_t n = 65536;
  auto x = Random(n, 11), y = Random(n, 12);
  const float a = 2.5f;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bx, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer by, device().allocate(n * 4));
  CTS_ASSERT_OK(Upload(bx, x));
  CTS_ASSERT_OK(Upload(by, y));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(64), Dim(128),
                         {KernelArg::scalar(a), KernelArg::buffer(bx), KernelArg::buffer(by)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(by, n));
  for (uint64_t i = 0; i < n; ++i) {
    const double want = double(a) * x[i] + y[i];  // tessera_tile.math fma
    ASSERT_NEAR(got[i], want, 1e-6 * (std::fabs(a * x[i]) + std::fabs(y[i]) + 1e-30))
        << "element " << i;
  }
}

TEST_F(Kernels, TileIrReduction) {
  // func @block_sum(%x: memref<65536xf32>, %partial: memref<64xf32>), grid
  // 64, group 256, 1 KiB of shared memory: partial[g] = sum of x[g*1024, +1024).
  CTS_REQUIRE(info().max_group_size >= 256, "max_group_size>=256");
  CTS_REQUIRE(info().shared_memory_per_group >= 1024, "shared_memory_per_group>=1024");
  CTS_TILE_KERNEL(tk, "example_reduction", "block_sum", {});
  const Kernel& k = tk.kernel;
  ASSERT_TRUE(GroupMatches(k, Dim(256)) && tk.group.x == 256) << "the example's group size is 256";
  const uint64_t n = 65536, groups = 64;
  auto x = Random(n, 13);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bx, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bp, device().allocate(groups * 4));
  CTS_ASSERT_OK(Upload(bx, x));
  CTS_ASSERT_OK(Upload(bp, std::vector<float>(groups, -1.0f)));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(groups), Dim(256),
                         {KernelArg::buffer(bx), KernelArg::buffer(bp)}, tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(bp, groups));
  // The order of the additions depends on the subgroup size (the tree stops
  // there and subgroup_reduce finishes): compare within rounding.
  for (uint64_t g = 0; g < groups; ++g) {
    double want = 0, mag = 0;
    for (uint64_t i = g * 1024; i < (g + 1) * 1024; ++i) want += x[i], mag += std::fabs(x[i]);
    ASSERT_NEAR(got[g], want, 1e-6 * (mag + 1.0)) << "group " << g;
  }
}

TEST_F(Kernels, TileIrGemm) {
  // func @tiled_gemm(%A, %B, %C: memref<128x128xf32>), grid 4x4, group 4x4,
  // 8 KiB of shared memory (cp_async staging, mma): C = A x B.
  CTS_REQUIRE(info().max_group_size >= 16, "max_group_size>=16");
  CTS_REQUIRE(info().shared_memory_per_group >= 8192, "shared_memory_per_group>=8192");
  CTS_TILE_KERNEL(tk, "example_tiled_gemm", "tiled_gemm", {});
  const Kernel& k = tk.kernel;
  ASSERT_TRUE(GroupMatches(k, Dim(4, 4)) && tk.group.x == 4 && tk.group.y == 4)
      << "the example's group size is 4x4";
  const uint32_t M = 128, N = 128, K = 128;
  auto A = Random(size_t(M) * K, 14), B = Random(size_t(K) * N, 15);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bA, device().allocate(A.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bB, device().allocate(B.size() * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bC, device().allocate(size_t(M) * N * 4));
  CTS_ASSERT_OK(Upload(bA, A));
  CTS_ASSERT_OK(Upload(bB, B));
  CTS_ASSERT_OK(Upload(bC, std::vector<float>(size_t(M) * N, -1.0f)));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(k, Dim(4, 4), Dim(4, 4),
                         {KernelArg::buffer(bA), KernelArg::buffer(bB), KernelArg::buffer(bC)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto C, Download<float>(bC, size_t(M) * N));
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (uint32_t kk = 0; kk < K; ++kk) {
        ref += double(A[i * K + kk]) * B[kk * N + j];
        mag += std::fabs(double(A[i * K + kk]) * B[kk * N + j]);
      }
      ASSERT_NEAR(C[i * N + j], ref, 1e-6 * K * (mag + 1.0)) << "C[" << i << "][" << j << "]";
    }
}

TEST_F(Kernels, TileIrPipeline) {
  // func @pipelined_scale(%x, %y: memref<16384xf32>), grid 8, group 64: a
  // Schedule IR pipeline whose double-buffered prefetch streams x through
  // shared memory: y = 2 x.
  CTS_REQUIRE(info().max_group_size >= 64, "max_group_size>=64");
  CTS_REQUIRE(info().shared_memory_per_group >= 2048, "shared_memory_per_group>=2048");
  CTS_TILE_KERNEL(tk, "example_pipeline", "pipelined_scale", {});
  const uint64_t n = 16384;
  auto x = Random(n, 16);
  CTS_ASSERT_OK_AND_ASSIGN(Buffer bx, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer by, device().allocate(n * 4));
  CTS_ASSERT_OK(Upload(bx, x));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(tk.kernel, Dim(8), tk.group, {KernelArg::buffer(bx), KernelArg::buffer(by)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto y, Download<float>(by, n));
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * x[i]) << "element " << i;
}

}  // namespace
}  // namespace tessera::cts
