// Area "collectives": all_reduce (sum, max, min), broadcast, all_gather and
// reduce_scatter over communicators of 1..N devices, f32 / f64 / i32 (and
// every TsDataType through all_reduce and all_gather), and
// deterministic mode giving bitwise-identical results run to run.
//
// The runner gives the cpu plugin 4 devices (TESSERA_CPU_DEVICES=4) for this
// area.  Values are small integers where the order of a reduction must not
// matter, so every result is compared exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Collectives : public CtsTest {
 protected:
  struct Ranks {
    Communicator comm;
    std::vector<Stream> streams;
    std::vector<Buffer> send, recv;
  };

  uint32_t caps() const { return info().collectives; }

  // A communicator over the first n devices with one stream per rank and
  // send/recv buffers of the given byte sizes.
  Status Make(size_t n, uint64_t send_bytes, uint64_t recv_bytes, Ranks* r) {
    std::vector<tessera::Device> devs(devices().begin(), devices().begin() + n);
    StatusOr<Communicator> c = runtime().create_communicator(devs);
    if (!c.ok()) return c.status();
    r->comm = *c;
    for (const tessera::Device& d : devs) {
      StatusOr<Stream> s = d.create_stream();
      if (!s.ok()) return s.status();
      StatusOr<Buffer> sb = d.allocate(send_bytes);
      if (!sb.ok()) return sb.status();
      StatusOr<Buffer> rb = d.allocate(recv_bytes);
      if (!rb.ok()) return rb.status();
      r->streams.push_back(*s);
      r->send.push_back(*sb);
      r->recv.push_back(*rb);
    }
    return Status::Ok();
  }
  Status SyncAll(const Ranks& r) {
    for (const Stream& s : r.streams) TESSERA_RETURN_IF_ERROR(s.synchronize());
    return Status::Ok();
  }

  template <typename T>
  void AllReduce(TsDataType dtype, TsReduceOp op) {
    const uint64_t count = 1003;
    for (size_t n = 1; n <= devices().size(); ++n) {
      SCOPED_TRACE(std::to_string(n) + " rank(s)");
      Ranks r;
      CTS_ASSERT_OK(Make(n, count * sizeof(T), count * sizeof(T), &r));
      EXPECT_EQ(r.comm.size(), n);
      for (size_t k = 0; k < n; ++k) {
        std::vector<T> v(count);
        for (uint64_t i = 0; i < count; ++i)
          v[i] = static_cast<T>(static_cast<int>((i * 7 + k * 13) % 61) - 30);
        CTS_ASSERT_OK(Upload(r.send[k], v));
      }
      CTS_ASSERT_OK(r.comm.all_reduce(r.send, r.recv, count, dtype, op, r.streams));
      CTS_ASSERT_OK(SyncAll(r));
      std::vector<T> want(count);
      for (uint64_t i = 0; i < count; ++i) {
        T acc{};
        for (size_t k = 0; k < n; ++k) {
          T x = static_cast<T>(static_cast<int>((i * 7 + k * 13) % 61) - 30);
          if (k == 0) acc = x;
          else if (op == TS_REDUCE_SUM) acc = acc + x;
          else if (op == TS_REDUCE_MAX) acc = std::max(acc, x);
          else acc = std::min(acc, x);
        }
        want[i] = acc;
      }
      for (size_t k = 0; k < n; ++k) {
        CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<T>(r.recv[k], count));
        EXPECT_TRUE(got == want) << "rank " << k;
      }
    }
  }
};

#define CTS_REQUIRE_COLLECTIVE(bit, name) \
  CTS_REQUIRE(caps() & (bit), "collectives." name)

TEST_F(Collectives, AllReduceSumF32) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  AllReduce<float>(TS_DTYPE_F32, TS_REDUCE_SUM);
}
TEST_F(Collectives, AllReduceMaxF32) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  AllReduce<float>(TS_DTYPE_F32, TS_REDUCE_MAX);
}
TEST_F(Collectives, AllReduceMinF32) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  AllReduce<float>(TS_DTYPE_F32, TS_REDUCE_MIN);
}
TEST_F(Collectives, AllReduceSumF64) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  AllReduce<double>(TS_DTYPE_F64, TS_REDUCE_SUM);
}
TEST_F(Collectives, AllReduceSumMaxMinI32) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  AllReduce<int32_t>(TS_DTYPE_I32, TS_REDUCE_SUM);
  AllReduce<int32_t>(TS_DTYPE_I32, TS_REDUCE_MAX);
  AllReduce<int32_t>(TS_DTYPE_I32, TS_REDUCE_MIN);
}

TEST_F(Collectives, BroadcastFromEveryRoot) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_BROADCAST, "broadcast");
  const uint64_t count = 777;
  for (size_t n = 1; n <= devices().size(); ++n)
    for (uint32_t root = 0; root < n; ++root) {
      SCOPED_TRACE(std::to_string(n) + " rank(s), root " + std::to_string(root));
      Ranks r;
      CTS_ASSERT_OK(Make(n, count * 4, count * 4, &r));
      for (size_t k = 0; k < n; ++k) {
        CTS_ASSERT_OK(Upload(r.send[k], std::vector<int32_t>(count, int32_t(k * 100 + 1))));
        CTS_ASSERT_OK(tessera::memset(r.recv[k], 0, 0, count * 4));
      }
      CTS_ASSERT_OK(r.comm.broadcast(r.send, r.recv, count, TS_DTYPE_I32, root, r.streams));
      CTS_ASSERT_OK(SyncAll(r));
      for (size_t k = 0; k < n; ++k) {
        CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<int32_t>(r.recv[k], count));
        EXPECT_EQ(got, std::vector<int32_t>(count, int32_t(root * 100 + 1))) << "rank " << k;
      }
    }
}

TEST_F(Collectives, AllGather) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_GATHER, "all_gather");
  const uint64_t count = 501;
  for (size_t n = 1; n <= devices().size(); ++n) {
    SCOPED_TRACE(std::to_string(n) + " rank(s)");
    Ranks r;
    CTS_ASSERT_OK(Make(n, count * 4, n * count * 4, &r));
    std::vector<float> want;
    for (size_t k = 0; k < n; ++k) {
      std::vector<float> v(count);
      for (uint64_t i = 0; i < count; ++i) v[i] = float(k) * 1000.0f + float(i) + 0.5f;
      CTS_ASSERT_OK(Upload(r.send[k], v));
      want.insert(want.end(), v.begin(), v.end());
    }
    CTS_ASSERT_OK(r.comm.all_gather(r.send, r.recv, count, TS_DTYPE_F32, r.streams));
    CTS_ASSERT_OK(SyncAll(r));
    for (size_t k = 0; k < n; ++k) {
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(r.recv[k], n * count));
      EXPECT_TRUE(BitwiseEqual(got, want)) << "rank " << k;
    }
  }
}

TEST_F(Collectives, ReduceScatterSum) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_REDUCE_SCATTER, "reduce_scatter");
  const uint64_t count = 257;  // per rank, in recv
  for (size_t n = 1; n <= devices().size(); ++n) {
    SCOPED_TRACE(std::to_string(n) + " rank(s)");
    Ranks r;
    CTS_ASSERT_OK(Make(n, n * count * 4, count * 4, &r));
    for (size_t k = 0; k < n; ++k) {
      std::vector<int32_t> v(n * count);
      for (uint64_t i = 0; i < v.size(); ++i) v[i] = int32_t(i % 97) + int32_t(k);
      CTS_ASSERT_OK(Upload(r.send[k], v));
    }
    CTS_ASSERT_OK(r.comm.reduce_scatter(r.send, r.recv, count, TS_DTYPE_I32, TS_REDUCE_SUM,
                                        r.streams));
    CTS_ASSERT_OK(SyncAll(r));
    for (size_t k = 0; k < n; ++k) {
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<int32_t>(r.recv[k], count));
      for (uint64_t i = 0; i < count; ++i) {
        int32_t want = 0;
        for (size_t j = 0; j < n; ++j) want += int32_t((k * count + i) % 97) + int32_t(j);
        ASSERT_EQ(got[i], want) << "rank " << k << " element " << i;
      }
    }
  }
}

TEST_F(Collectives, DeterministicModeIsBitwiseIdentical) {
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_DETERMINISTIC, "deterministic");
  const uint64_t count = 4099;
  const size_t n = devices().size();
  Ranks r;
  CTS_ASSERT_OK(Make(n, count * 4, count * 4, &r));
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  std::vector<double> ref(count, 0.0);
  for (size_t k = 0; k < n; ++k) {
    std::vector<float> v(count);
    for (uint64_t i = 0; i < count; ++i) {
      // Mixed magnitudes: a different association order changes the bits.
      v[i] = dist(gen) * (i % 3 == 0 ? 1e-3f : 1.0f);
      ref[i] += v[i];
    }
    CTS_ASSERT_OK(Upload(r.send[k], v));
  }
  std::vector<float> first;
  for (int run = 0; run < 5; ++run) {
    CTS_ASSERT_OK(r.comm.all_reduce(r.send, r.recv, count, TS_DTYPE_F32, TS_REDUCE_SUM,
                                    r.streams, /*deterministic=*/true));
    CTS_ASSERT_OK(SyncAll(r));
    for (size_t k = 0; k < n; ++k) {
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(r.recv[k], count));
      if (first.empty()) {
        first = got;
        for (uint64_t i = 0; i < count; ++i)
          ASSERT_NEAR(got[i], ref[i], 1e-3 * n) << "element " << i;
      }
      EXPECT_TRUE(BitwiseEqual(got, first)) << "run " << run << " rank " << k;
    }
  }
  // Reduce-scatter too, when offered.
  if (!(caps() & TS_COLLECTIVE_CAP_REDUCE_SCATTER)) return;
  Ranks rs;
  const uint64_t per = 1001;
  CTS_ASSERT_OK(Make(n, n * per * 4, per * 4, &rs));
  for (size_t k = 0; k < n; ++k) {
    std::vector<float> v(n * per);
    for (float& f : v) f = dist(gen);
    CTS_ASSERT_OK(Upload(rs.send[k], v));
  }
  std::vector<std::vector<float>> firsts(n);
  for (int run = 0; run < 3; ++run) {
    CTS_ASSERT_OK(rs.comm.reduce_scatter(rs.send, rs.recv, per, TS_DTYPE_F32, TS_REDUCE_SUM,
                                         rs.streams, true));
    CTS_ASSERT_OK(SyncAll(rs));
    for (size_t k = 0; k < n; ++k) {
      CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(rs.recv[k], per));
      if (run == 0) firsts[k] = got;
      EXPECT_TRUE(BitwiseEqual(got, firsts[k])) << "run " << run << " rank " << k;
    }
  }
}

// Every TsDataType, stored exactly: small integers, which every type
// (including F16 and BF16) represents without rounding, so every result is
// compared exactly.  Encoded by hand so the suite needs no half library.
std::vector<uint8_t> EncodeInts(TsDataType t, const std::vector<int64_t>& v) {
  auto f32bits = [](float f) { uint32_t x; std::memcpy(&x, &f, 4); return x; };
  std::vector<uint8_t> out;
  for (int64_t x : v) {
    uint8_t b[8] = {};
    size_t n = 0;
    switch (t) {
      case TS_DTYPE_F32: { float f = float(x); std::memcpy(b, &f, n = 4); break; }
      case TS_DTYPE_F64: { double d = double(x); std::memcpy(b, &d, n = 8); break; }
      case TS_DTYPE_I32: { int32_t i = int32_t(x); std::memcpy(b, &i, n = 4); break; }
      case TS_DTYPE_I64: std::memcpy(b, &x, n = 8); break;
      case TS_DTYPE_I8: b[0] = uint8_t(int8_t(x)); n = 1; break;
      case TS_DTYPE_U8: b[0] = uint8_t(x); n = 1; break;
      case TS_DTYPE_BF16: { uint16_t h = uint16_t(f32bits(float(x)) >> 16); std::memcpy(b, &h, n = 2); break; }
      case TS_DTYPE_F16: {  // |x| < 2048: sign, exponent, 10-bit mantissa
        uint16_t h = x < 0 ? 0x8000 : 0;
        uint64_t a = uint64_t(x < 0 ? -x : x);
        if (a) {
          int e = 63 - __builtin_clzll(a);
          h |= uint16_t((e + 15) << 10) | uint16_t(((a << 10) >> e) & 0x3ff);
        }
        std::memcpy(b, &h, n = 2);
        break;
      }
    }
    out.insert(out.end(), b, b + n);
  }
  return out;
}
std::vector<int64_t> DecodeInts(TsDataType t, const std::vector<uint8_t>& bytes, size_t count) {
  std::vector<int64_t> out(count);
  for (size_t i = 0; i < count; ++i) {
    switch (t) {
      case TS_DTYPE_F32: { float f; std::memcpy(&f, &bytes[4 * i], 4); out[i] = int64_t(f); break; }
      case TS_DTYPE_F64: { double d; std::memcpy(&d, &bytes[8 * i], 8); out[i] = int64_t(d); break; }
      case TS_DTYPE_I32: { int32_t v; std::memcpy(&v, &bytes[4 * i], 4); out[i] = v; break; }
      case TS_DTYPE_I64: std::memcpy(&out[i], &bytes[8 * i], 8); break;
      case TS_DTYPE_I8: out[i] = int8_t(bytes[i]); break;
      case TS_DTYPE_U8: out[i] = bytes[i]; break;
      case TS_DTYPE_BF16: {
        uint32_t x = uint32_t(bytes[2 * i] | bytes[2 * i + 1] << 8) << 16;
        float f;
        std::memcpy(&f, &x, 4);
        out[i] = int64_t(f);
        break;
      }
      case TS_DTYPE_F16: {
        uint16_t h = uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8);
        int e = (h >> 10) & 0x1f;
        int64_t a = e ? ((int64_t(h & 0x3ff) | 0x400) << e) >> 25 : 0;  // normal numbers only
        out[i] = (h & 0x8000) ? -a : a;
        break;
      }
    }
  }
  return out;
}

TEST_F(Collectives, EveryDataType) {
  const TsDataType types[] = {TS_DTYPE_F32, TS_DTYPE_F64, TS_DTYPE_I32, TS_DTYPE_I64,
                              TS_DTYPE_F16, TS_DTYPE_BF16, TS_DTYPE_I8,  TS_DTYPE_U8};
  const char* names[] = {"F32", "F64", "I32", "I64", "F16", "BF16", "I8", "U8"};
  const size_t sizes[] = {4, 8, 4, 8, 2, 2, 1, 1};
  const uint64_t count = 777;  // odd: a wrong element size shows
  const size_t n = devices().size();
  std::vector<std::string> unsupported;
  auto note = [&](const char* name) {
    if (std::find(unsupported.begin(), unsupported.end(), name) == unsupported.end())
      unsupported.push_back(name);
  };
  for (size_t ti = 0; ti < 8; ++ti) {
    const TsDataType t = types[ti];
    const size_t es = sizes[ti];
    SCOPED_TRACE(names[ti]);
    // Rank k's element i; non-negative for U8.  |sum| <= 4 * 30 fits I8.
    auto value = [&](size_t k, uint64_t i) {
      int64_t v = int64_t((i * 7 + k * 13) % 61);
      return t == TS_DTYPE_U8 ? v : v - 30;
    };
    // all_reduce sum and max.
    for (TsReduceOp op : {TS_REDUCE_SUM, TS_REDUCE_MAX}) {
      if (!(caps() & TS_COLLECTIVE_CAP_ALL_REDUCE)) break;
      Ranks r;
      CTS_ASSERT_OK(Make(n, count * es, count * es, &r));
      for (size_t k = 0; k < n; ++k) {
        std::vector<int64_t> v(count);
        for (uint64_t i = 0; i < count; ++i) v[i] = value(k, i);
        CTS_ASSERT_OK(Upload(r.send[k], EncodeInts(t, v)));
      }
      Status st = r.comm.all_reduce(r.send, r.recv, count, t, op, r.streams);
      if (st.code() == StatusCode::kUnsupported) { note(names[ti]); break; }
      CTS_ASSERT_OK(st);
      CTS_ASSERT_OK(SyncAll(r));
      for (size_t k = 0; k < n; ++k) {
        CTS_ASSERT_OK_AND_ASSIGN(auto bytes, Download<uint8_t>(r.recv[k], count * es));
        std::vector<int64_t> got = DecodeInts(t, bytes, count);
        for (uint64_t i = 0; i < count; ++i) {
          int64_t want = value(0, i);
          for (size_t j = 1; j < n; ++j)
            want = op == TS_REDUCE_SUM ? want + value(j, i) : std::max(want, value(j, i));
          ASSERT_EQ(got[i], want) << (op == TS_REDUCE_SUM ? "sum" : "max") << ", rank " << k
                                  << ", element " << i;
        }
      }
    }
    // all_gather: rank-major concatenation, byte for byte.
    if (caps() & TS_COLLECTIVE_CAP_ALL_GATHER) {
      Ranks r;
      CTS_ASSERT_OK(Make(n, count * es, n * count * es, &r));
      for (size_t k = 0; k < n; ++k) {
        std::vector<int64_t> v(count);
        for (uint64_t i = 0; i < count; ++i) v[i] = value(k, i);
        CTS_ASSERT_OK(Upload(r.send[k], EncodeInts(t, v)));
      }
      Status st = r.comm.all_gather(r.send, r.recv, count, t, r.streams);
      if (st.code() == StatusCode::kUnsupported) { note(names[ti]); continue; }
      CTS_ASSERT_OK(st);
      CTS_ASSERT_OK(SyncAll(r));
      for (size_t k = 0; k < n; ++k) {
        CTS_ASSERT_OK_AND_ASSIGN(auto bytes, Download<uint8_t>(r.recv[k], n * count * es));
        std::vector<int64_t> got = DecodeInts(t, bytes, n * count);
        for (size_t q = 0; q < n; ++q)
          for (uint64_t i = 0; i < count; ++i)
            ASSERT_EQ(got[q * count + i], value(q, i)) << "rank " << k << " part " << q;
      }
    }
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ",") + u;
    CTS_UNSUPPORTED("collectives.dtype." + list);
  }
}

TEST_F(Collectives, SpansSeveralDevices) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  CTS_REQUIRE_COLLECTIVE(TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce");
  // Every rank's device really holds its part: rank k's result is on
  // device k and the buffers of different ranks are different memory.
  Ranks r;
  const size_t n = devices().size();
  CTS_ASSERT_OK(Make(n, 64, 64, &r));
  for (size_t k = 0; k < n; ++k) {
    EXPECT_EQ(r.recv[k].device(), devices()[k]);
    CTS_ASSERT_OK(Upload(r.send[k], std::vector<int32_t>(16, 1)));
  }
  CTS_ASSERT_OK(r.comm.all_reduce(r.send, r.recv, 16, TS_DTYPE_I32, TS_REDUCE_SUM, r.streams));
  CTS_ASSERT_OK(SyncAll(r));
  for (size_t k = 0; k < n; ++k) {
    CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<int32_t>(r.recv[k], 16));
    EXPECT_EQ(got, std::vector<int32_t>(16, int32_t(n)));
  }
}

}  // namespace
}  // namespace tessera::cts
