#include "host_reduce.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace tessera::plugin_support {
namespace {

uint32_t float_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float bits_float(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// a op b.  Integer sums and products wrap: computed in the unsigned type
// (signed overflow would be undefined behaviour in C++).
template <class A>
A combine(TsReduceOp op, A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    switch (op) {
      case TS_REDUCE_SUM: return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case TS_REDUCE_PROD: return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case TS_REDUCE_MAX: return a > b ? a : b;
      case TS_REDUCE_MIN: return a < b ? a : b;
    }
  } else {
    switch (op) {
      case TS_REDUCE_SUM: return a + b;
      case TS_REDUCE_PROD: return a * b;
      case TS_REDUCE_MAX: return a > b ? a : b;
      case TS_REDUCE_MIN: return a < b ? a : b;
    }
  }
  return a;
}

// Storage S, accumulated as A: load converts S -> A, store A -> S.
template <class S, class A, class Load, class Store>
void reduce_typed(TsReduceOp op, const std::vector<const void*>& in,
                  const std::vector<uint32_t>& order, bool deterministic, uint64_t n, void* out,
                  Load load, Store store) {
  constexpr uint64_t kBlock = 2048;
  const size_t ranks = in.size();
  std::vector<A> tmp((deterministic ? ranks : 1) * kBlock);
  for (uint64_t off = 0; off < n; off += kBlock) {
    const uint64_t m = n - off < kBlock ? n - off : kBlock;
    auto rank_block = [&](size_t r) { return static_cast<const S*>(in[r]) + off; };
    if (deterministic) {
      for (size_t r = 0; r < ranks; ++r) {
        const S* src = rank_block(r);
        for (uint64_t i = 0; i < m; ++i) tmp[r * kBlock + i] = load(src[i]);
      }
      for (size_t stride = 1; stride < ranks; stride *= 2)
        for (size_t r = 0; r + stride < ranks; r += 2 * stride)
          for (uint64_t i = 0; i < m; ++i)
            tmp[r * kBlock + i] = combine(op, tmp[r * kBlock + i], tmp[(r + stride) * kBlock + i]);
    } else {
      const S* first = rank_block(order[0]);
      for (uint64_t i = 0; i < m; ++i) tmp[i] = load(first[i]);
      for (size_t k = 1; k < ranks; ++k) {
        const S* src = rank_block(order[k]);
        for (uint64_t i = 0; i < m; ++i) tmp[i] = combine(op, tmp[i], load(src[i]));
      }
    }
    S* dst = static_cast<S*>(out) + off;
    for (uint64_t i = 0; i < m; ++i) dst[i] = store(tmp[i]);
  }
}

template <class T>
void reduce_native(TsReduceOp op, const std::vector<const void*>& in,
                   const std::vector<uint32_t>& order, bool deterministic, uint64_t n, void* out) {
  auto same = [](T x) { return x; };
  reduce_typed<T, T>(op, in, order, deterministic, n, out, same, same);
}

}  // namespace

size_t dtype_size(TsDataType t) {
  switch (t) {
    case TS_DTYPE_F64: case TS_DTYPE_I64: return 8;
    case TS_DTYPE_F32: case TS_DTYPE_I32: return 4;
    case TS_DTYPE_F16: case TS_DTYPE_BF16: return 2;
    case TS_DTYPE_I8: case TS_DTYPE_U8: return 1;
  }
  return 0;
}

const char* dtype_name(TsDataType t) {
  switch (t) {
    case TS_DTYPE_F32: return "F32";
    case TS_DTYPE_F64: return "F64";
    case TS_DTYPE_I32: return "I32";
    case TS_DTYPE_I64: return "I64";
    case TS_DTYPE_F16: return "F16";
    case TS_DTYPE_BF16: return "BF16";
    case TS_DTYPE_I8: return "I8";
    case TS_DTYPE_U8: return "U8";
  }
  return "unknown";
}

void host_reduce(TsDataType dtype, TsReduceOp op, const std::vector<const void*>& in,
                 const std::vector<uint32_t>& order, bool deterministic, uint64_t n, void* out) {
  switch (dtype) {
    case TS_DTYPE_F32: return reduce_native<float>(op, in, order, deterministic, n, out);
    case TS_DTYPE_F64: return reduce_native<double>(op, in, order, deterministic, n, out);
    case TS_DTYPE_I32: return reduce_native<int32_t>(op, in, order, deterministic, n, out);
    case TS_DTYPE_I64: return reduce_native<int64_t>(op, in, order, deterministic, n, out);
    case TS_DTYPE_I8: return reduce_native<int8_t>(op, in, order, deterministic, n, out);
    case TS_DTYPE_U8: return reduce_native<uint8_t>(op, in, order, deterministic, n, out);
    case TS_DTYPE_F16:
      return reduce_typed<uint16_t, float>(op, in, order, deterministic, n, out, half_to_float,
                                           float_to_half);
    case TS_DTYPE_BF16:
      return reduce_typed<uint16_t, float>(op, in, order, deterministic, n, out, bf16_to_float,
                                           float_to_bf16);
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN (quiet)
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: infinity
  if (a < 0x38800000u) {                        // below 2^-14: subnormal or zero
    // a * 2^24 is exact; rint rounds to nearest even (the default mode).
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(bits_float(a), 24)));
  }
  a += 0xfffu + ((a >> 13) & 1u);  // round the 13 dropped bits to nearest even
  return sign | static_cast<uint16_t>((a - 0x38000000u) >> 13);
}

float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

std::vector<uint8_t> host_collective(TsCollectiveOp op, TsDataType dtype, TsReduceOp reduce_op,
                                     uint32_t root, std::vector<std::vector<uint8_t>>& in,
                                     uint64_t send_elems) {
  std::vector<uint8_t> out;
  switch (op) {
    case TS_COLLECTIVE_ALL_REDUCE:
    case TS_COLLECTIVE_REDUCE_SCATTER: {
      std::vector<const void*> ranks;
      std::vector<uint32_t> order;
      for (size_t r = 0; r < in.size(); ++r) {
        ranks.push_back(in[r].data());
        order.push_back(static_cast<uint32_t>(r));
      }
      out.resize(send_elems * dtype_size(dtype));
      host_reduce(dtype, reduce_op, ranks, order, /*deterministic=*/true, send_elems, out.data());
      break;
    }
    case TS_COLLECTIVE_BROADCAST:
      out = std::move(in[root]);
      break;
    case TS_COLLECTIVE_ALL_GATHER:
      for (auto& v : in) out.insert(out.end(), v.begin(), v.end());
      break;
  }
  return out;
}

}  // namespace tessera::plugin_support
