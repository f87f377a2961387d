// Area "datatypes": every collective over every TsDataType, every
// reduce op and element counts 1, 17 and 1000, as parameterized cases, on a
// communicator of up to 4 devices (the runner gives the cpu plugin 4).
// Values are small integers chosen so that every result is exact in every
// type (|sum| <= 120 fits int8, products of 4 ranks stay within 16), so the
// comparison is exact whatever the order of the reduction.  A data type the
// plugin refuses with UNSUPPORTED is reported as
// unsupported: collectives.dtype.<TYPE>.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

struct CollectiveParam {
  TsCollectiveOp op;
  TsDataType dtype;
  TsReduceOp reduce;
  uint64_t count;
};

const char* TypeName(TsDataType t);
void PrintTo(const CollectiveParam& p, std::ostream* os) {
  *os << "op " << p.op << ", dtype " << TypeName(p.dtype) << ", reduce " << p.reduce
      << ", count " << p.count;
}

const char* TypeName(TsDataType t) {
  static const char* names[] = {"F32", "F64", "I32", "I64", "F16", "BF16", "I8", "U8"};
  return names[t];
}
size_t TypeSize(TsDataType t) {
  static const size_t sizes[] = {4, 8, 4, 8, 2, 2, 1, 1};
  return sizes[t];
}

// Exact for the small integers used here.
uint16_t ToHalf(int64_t v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  uint64_t m = static_cast<uint64_t>(v < 0 ? -v : v);
  int e = 63 - __builtin_clzll(m);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | ((m << (10 - e)) & 0x3ff));
}
int64_t FromHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  if (e == 0) return 0;
  const int64_t m = (h & 0x3ff) | 0x400;
  const int64_t v = e >= 25 ? m << (e - 25) : m >> (25 - e);
  return (h & 0x8000) ? -v : v;
}

void Encode(TsDataType t, int64_t v, uint8_t* out) {
  switch (t) {
    case TS_DTYPE_F32: { float f = float(v); std::memcpy(out, &f, 4); break; }
    case TS_DTYPE_F64: { double d = double(v); std::memcpy(out, &d, 8); break; }
    case TS_DTYPE_I32: { int32_t i = int32_t(v); std::memcpy(out, &i, 4); break; }
    case TS_DTYPE_I64: std::memcpy(out, &v, 8); break;
    case TS_DTYPE_F16: { uint16_t h = ToHalf(v); std::memcpy(out, &h, 2); break; }
    case TS_DTYPE_BF16: {
      float f = float(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t h = uint16_t(bits >> 16);
      std::memcpy(out, &h, 2);
      break;
    }
    case TS_DTYPE_I8: *out = uint8_t(int8_t(v)); break;
    default: *out = uint8_t(v); break;
  }
}
// NaN-free decode to an integer: a non-integral float result compares wrong.
double Decode(TsDataType t, const uint8_t* in) {
  switch (t) {
    case TS_DTYPE_F32: { float f; std::memcpy(&f, in, 4); return f; }
    case TS_DTYPE_F64: { double d; std::memcpy(&d, in, 8); return d; }
    case TS_DTYPE_I32: { int32_t i; std::memcpy(&i, in, 4); return i; }
    case TS_DTYPE_I64: { int64_t i; std::memcpy(&i, in, 8); return double(i); }
    case TS_DTYPE_F16: { uint16_t h; std::memcpy(&h, in, 2); return double(FromHalf(h)); }
    case TS_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, in, 2);
      uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case TS_DTYPE_I8: return int8_t(*in);
    default: return *in;
  }
}

class DataTypes : public CtsTest, public ::testing::WithParamInterface<CollectiveParam> {
 protected:
  const CollectiveParam& p() const { return GetParam(); }
  // Rank k's element i of the send data.
  int64_t Value(size_t k, uint64_t i) const {
    if (p().reduce == TS_REDUCE_PROD && (p().op == TS_COLLECTIVE_ALL_REDUCE ||
                                         p().op == TS_COLLECTIVE_REDUCE_SCATTER)) {
      static const int64_t f[] = {1, 2, -1};
      int64_t v = f[(i + k) % 3];
      return p().dtype == TS_DTYPE_U8 && v < 0 ? 1 : v;
    }
    int64_t v = int64_t((i * 7 + k * 13) % 61);
    return p().dtype == TS_DTYPE_U8 ? v : v - 30;
  }
  int64_t Reduce(size_t ranks, uint64_t i) const {
    int64_t acc = Value(0, i);
    for (size_t k = 1; k < ranks; ++k) {
      int64_t x = Value(k, i);
      switch (p().reduce) {
        case TS_REDUCE_SUM: acc += x; break;
        case TS_REDUCE_PROD: acc *= x; break;
        case TS_REDUCE_MAX: acc = std::max(acc, x); break;
        default: acc = std::min(acc, x); break;
      }
    }
    return acc;
  }
};

TEST_P(DataTypes, ExactResult) {
  static const uint32_t bits[] = {TS_COLLECTIVE_CAP_ALL_REDUCE, TS_COLLECTIVE_CAP_BROADCAST,
                                  TS_COLLECTIVE_CAP_ALL_GATHER, TS_COLLECTIVE_CAP_REDUCE_SCATTER};
  static const char* caps[] = {"collectives.all_reduce", "collectives.broadcast",
                               "collectives.all_gather", "collectives.reduce_scatter"};
  CTS_REQUIRE(info().collectives & bits[p().op], caps[p().op]);
  const size_t n = std::min<size_t>(devices().size(), 4);
  const uint64_t count = p().count;
  const size_t es = TypeSize(p().dtype);
  // Elements per rank in the send and receive buffers.
  const uint64_t send_elems = p().op == TS_COLLECTIVE_REDUCE_SCATTER ? count * n : count;
  const uint64_t recv_elems = p().op == TS_COLLECTIVE_ALL_GATHER ? count * n : count;
  std::vector<tessera::Device> devs(devices().begin(), devices().begin() + n);
  CTS_ASSERT_OK_AND_ASSIGN(Communicator comm, runtime().create_communicator(devs));
  std::vector<Buffer> send, recv;
  std::vector<Stream> streams;
  for (size_t k = 0; k < n; ++k) {
    CTS_ASSERT_OK_AND_ASSIGN(Buffer sb, devs[k].allocate(send_elems * es));
    CTS_ASSERT_OK_AND_ASSIGN(Buffer rb, devs[k].allocate(recv_elems * es));
    CTS_ASSERT_OK_AND_ASSIGN(Stream s, devs[k].create_stream());
    std::vector<uint8_t> bytes(send_elems * es);
    for (uint64_t i = 0; i < send_elems; ++i) Encode(p().dtype, Value(k, i), &bytes[i * es]);
    CTS_ASSERT_OK(Upload(sb, bytes));
    send.push_back(sb);
    recv.push_back(rb);
    streams.push_back(s);
  }
  const uint32_t root = static_cast<uint32_t>(n - 1);
  Status st;
  switch (p().op) {
    case TS_COLLECTIVE_ALL_REDUCE:
      st = comm.all_reduce(send, recv, count, p().dtype, p().reduce, streams);
      break;
    case TS_COLLECTIVE_BROADCAST: st = comm.broadcast(send, recv, count, p().dtype, root, streams); break;
    case TS_COLLECTIVE_ALL_GATHER: st = comm.all_gather(send, recv, count, p().dtype, streams); break;
    default: st = comm.reduce_scatter(send, recv, count, p().dtype, p().reduce, streams); break;
  }
  if (st.code() == StatusCode::kUnsupported)
    CTS_UNSUPPORTED(std::string("collectives.dtype.") + TypeName(p().dtype) + " (" + st.message() + ")");
  CTS_ASSERT_OK(st);
  for (const Stream& s : streams) CTS_ASSERT_OK(s.synchronize());
  for (size_t k = 0; k < n; ++k) {
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> got, Download<uint8_t>(recv[k], recv_elems * es));
    for (uint64_t i = 0; i < recv_elems; ++i) {
      int64_t want;
      switch (p().op) {
        case TS_COLLECTIVE_ALL_REDUCE: want = Reduce(n, i); break;
        case TS_COLLECTIVE_BROADCAST: want = Value(root, i); break;
        case TS_COLLECTIVE_ALL_GATHER: want = Value(i / count, i % count); break;
        default: want = Reduce(n, k * count + i); break;
      }
      ASSERT_EQ(Decode(p().dtype, &got[i * es]), double(want))
          << "rank " << k << " of " << n << ", element " << i;
    }
  }
}

std::vector<CollectiveParam> AllParams() {
  std::vector<CollectiveParam> out;
  const TsDataType types[] = {TS_DTYPE_F32, TS_DTYPE_F64, TS_DTYPE_I32, TS_DTYPE_I64,
                              TS_DTYPE_F16, TS_DTYPE_BF16, TS_DTYPE_I8,  TS_DTYPE_U8};
  const TsReduceOp ops[] = {TS_REDUCE_SUM, TS_REDUCE_PROD, TS_REDUCE_MAX, TS_REDUCE_MIN};
  for (TsCollectiveOp op : {TS_COLLECTIVE_ALL_REDUCE, TS_COLLECTIVE_BROADCAST,
                            TS_COLLECTIVE_ALL_GATHER, TS_COLLECTIVE_REDUCE_SCATTER})
    for (TsDataType t : types)
      for (uint64_t count : {1, 17, 1000}) {
        const bool reduces = op == TS_COLLECTIVE_ALL_REDUCE || op == TS_COLLECTIVE_REDUCE_SCATTER;
        if (!reduces) {
          out.push_back({op, t, TS_REDUCE_SUM, count});
          continue;
        }
        for (TsReduceOp r : ops) out.push_back({op, t, r, count});
      }
  return out;
}

std::string CollectiveName(const ::testing::TestParamInfo<CollectiveParam>& info) {
  static const char* ops[] = {"AllReduce", "Broadcast", "AllGather", "ReduceScatter"};
  static const char* reduces[] = {"Sum", "Prod", "Max", "Min"};
  const CollectiveParam& p = info.param;
  const bool reduce = p.op == TS_COLLECTIVE_ALL_REDUCE || p.op == TS_COLLECTIVE_REDUCE_SCATTER;
  return std::string(ops[p.op]) + "_" + TypeName(p.dtype) + (reduce ? std::string("_") + reduces[p.reduce] : "") +
         "_Count" + std::to_string(p.count);
}

INSTANTIATE_TEST_SUITE_P(, DataTypes, ::testing::ValuesIn(AllParams()), CollectiveName);

}  // namespace
}  // namespace tessera::cts
