// The rules here are written from their definitions (nearest representable
// value, ties to even, computed with frexp/ldexp/nearbyint on doubles), not
// from the bit tricks of the code generator (ir/lib/Conversion/ElementTypes.cpp),
// so that the reference checks the generated code rather than repeating it.
#include "tessera/element_types.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>


namespace tessera::elements {
namespace {

// A binary float format: sign, `exp` exponent bits, `man` mantissa bits.
// ieee: the all-ones exponent holds inf and NaN; else (e4m3fn) there is no
// inf and only all-ones exponent and mantissa is NaN.
struct Format {
  int exp, man, bias;
  bool ieee;
};
constexpr Format kF16{5, 10, 15, true};
constexpr Format kBF16{8, 7, 127, true};
constexpr Format kE4M3FN{4, 3, 7, false};
constexpr Format kE5M2{5, 2, 15, true};  // the top byte of an f16

const Format* FormatOf(const std::string& d) {
  if (d == "f16") return &kF16;
  if (d == "bf16") return &kBF16;
  if (d == "f8E4M3FN") return &kE4M3FN;
  if (d == "f8E5M2") return &kE5M2;
  return nullptr;
}

// An integer type as MLIR prints it: i8, si16, ui32, i24, index (64-bit on
// every target).  i1 is a bool byte and handled apart.  width 0: not one.
struct IntKind {
  int width = 0;
  bool is_unsigned = false;
  size_t bytes = 0;  // stored in the power-of-two bytes that hold it (i24 in 4)
};
IntKind IntegerKind(const std::string& d) {
  IntKind k;
  if (d == "index") return {64, false, 8};
  const size_t at = d.rfind("ui", 0) == 0 || d.rfind("si", 0) == 0 ? 2 : d.rfind('i', 0) == 0 ? 1 : 0;
  if (at == 0 || at >= d.size() || d.size() - at > 5) return k;
  int width = 0;
  for (size_t i = at; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') return k;
    width = width * 10 + (d[i] - '0');
  }
  if (width == 0 || width > 64) return k;
  k.width = width;
  k.is_unsigned = d[0] == 'u';
  k.bytes = 1;
  while (k.bytes * 8 < static_cast<size_t>(width)) k.bytes *= 2;
  return k;
}
// Integer types other than i1 (a bool): their width, or 0.
int IntWidth(const std::string& d) { return d == "i1" ? 0 : IntegerKind(d).width; }

double MaxFinite(const Format& f) {
  int emax = (1 << f.exp) - 1 - f.bias;  // exponent of the all-ones field
  if (f.ieee) return std::ldexp(2.0 - std::ldexp(1.0, -f.man), emax - 1);
  return std::ldexp(2.0 - std::ldexp(2.0, -f.man), emax);  // mantissa all ones but the last bit
}

// The nearest value of format f to v (ties to even); overflow: inf (ieee)
// or the largest finite value with v's sign (saturation, also for inf).
double RoundFormat(double v, const Format& f) {
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return f.ieee ? v : std::copysign(MaxFinite(f), v);
  if (v == 0) return v;
  double a = std::fabs(v);
  int e;
  std::frexp(a, &e);                        // a = m 2^e, m in [0.5, 1)
  int exp2 = std::max(e - 1, 1 - f.bias);   // subnormals share the smallest exponent
  double q = std::nearbyint(std::ldexp(a, f.man - exp2));  // FE_TONEAREST: ties to even
  double r = std::ldexp(q, exp2 - f.man);
  if (r > MaxFinite(f)) r = f.ieee ? std::numeric_limits<double>::infinity() : MaxFinite(f);
  return std::copysign(r, v);
}

uint32_t EncodeFormat(double v, const Format& f) {
  uint32_t sign = std::signbit(v) ? 1u << (f.exp + f.man) : 0;
  uint32_t expOnes = (1u << f.exp) - 1;
  if (std::isnan(v))
    return sign | (f.ieee ? (expOnes << f.man) | (1u << (f.man - 1)) : (1u << (f.exp + f.man)) - 1);
  double r = RoundFormat(v, f);
  if (std::isinf(r)) return sign | (expOnes << f.man);
  double a = std::fabs(r);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  int E = e - 1;
  if (E < 1 - f.bias)  // subnormal
    return sign | static_cast<uint32_t>(std::ldexp(a, f.bias - 1 + f.man));
  uint32_t m = static_cast<uint32_t>(std::ldexp(a, f.man - E)) - (1u << f.man);
  return sign | (static_cast<uint32_t>(E + f.bias) << f.man) | m;
}

double DecodeFormat(uint32_t bits, const Format& f) {
  uint32_t expOnes = (1u << f.exp) - 1, manMask = (1u << f.man) - 1;
  bool neg = (bits >> (f.exp + f.man)) & 1;
  uint32_t e = (bits >> f.man) & expOnes, m = bits & manMask;
  double v;
  if (f.ieee && e == expOnes) v = m ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (!f.ieee && e == expOnes && m == manMask) v = std::numeric_limits<double>::quiet_NaN();
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man);
  else v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.man), static_cast<int>(e) - f.bias);
  return neg ? -v : v;
}

// trunc(v) modulo 2^64 (NaN: 0), with no conversion out of range (which is
// undefined behaviour): the bits an integer of 64 bits or fewer keeps.
uint64_t Modulo2To64(double v) {
  if (!std::isfinite(v)) return 0;
  constexpr double k2To63 = 9223372036854775808.0, k2To64 = 18446744073709551616.0;
  double r = std::fmod(std::trunc(v), k2To64);  // exact, in (-2^64, 2^64)
  if (r >= k2To63) r -= k2To64;                 // exact: r is a multiple of 2^11 there
  if (r < -k2To63) r += k2To64;
  return static_cast<uint64_t>(static_cast<int64_t>(r));
}

// v wrapped to an integer of `width` bits (two's complement), as the value
// the type reads it as: signed, or unsigned (0 .. 2^width - 1).
double Wrap(double v, int width, bool is_unsigned = false) {
  uint64_t u = Modulo2To64(v);
  if (width < 64) {
    const uint64_t mask = (uint64_t{1} << width) - 1;
    u &= mask;
    if (!is_unsigned && (u >> (width - 1))) u |= ~mask;  // sign-extend
  }
  return is_unsigned ? static_cast<double>(u) : static_cast<double>(static_cast<int64_t>(u));
}

}  // namespace

bool IsFloatDtype(const std::string& d) { return d == "f32" || d == "f64" || FormatOf(d); }

double Decode(const unsigned char* p, const std::string& d) {
  if (d == "i1") return *p != 0 ? 1 : 0;  // a byte; any nonzero byte is true
  if (d == "f32") { float f; std::memcpy(&f, p, 4); return f; }
  if (d == "f64") { double v; std::memcpy(&v, p, 8); return v; }
  if (const IntKind k = IntegerKind(d); k.width) {
    uint64_t u = 0;
    for (size_t b = 0; b < k.bytes; ++b) u |= uint64_t{p[b]} << (8 * b);  // little-endian
    if (k.width < 64) {  // the bits above the width are not the value's
      const uint64_t mask = (uint64_t{1} << k.width) - 1;
      u &= mask;
      if (!k.is_unsigned && (u >> (k.width - 1))) u |= ~mask;
    }
    return k.is_unsigned ? static_cast<double>(u) : static_cast<double>(static_cast<int64_t>(u));
  }
  if (const Format* f = FormatOf(d)) {
    uint32_t bits = *p;
    if (f->exp + f->man + 1 == 16) bits = p[0] | (p[1] << 8);
    return DecodeFormat(bits, *f);
  }
  return 0;
}

std::vector<double> DecodeAll(const std::vector<unsigned char>& bytes, const std::string& d) {
  size_t s = DtypeSize(d);
  std::vector<double> out(bytes.size() / s);
  for (size_t i = 0; i < out.size(); ++i) out[i] = Decode(&bytes[i * s], d);
  return out;
}

void Encode(double v, unsigned char* p, const std::string& d) {
  if (d == "f32") { float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
  else if (d == "f64") std::memcpy(p, &v, 8);
  else if (d == "i1") *p = v != 0 ? 1 : 0;  // NaN is true
  else if (const IntKind k = IntegerKind(d); k.width) {
    // Wrapped to the width, then sign- or zero-extended to the bytes.
    uint64_t u = Modulo2To64(v);
    if (k.width < 64) {
      const uint64_t mask = (uint64_t{1} << k.width) - 1;
      u &= mask;
      if (!k.is_unsigned && (u >> (k.width - 1))) u |= ~mask;
    }
    for (size_t b = 0; b < k.bytes; ++b) p[b] = static_cast<unsigned char>(u >> (8 * b));
  }
  else if (const Format* f = FormatOf(d)) {
    uint32_t bits = EncodeFormat(static_cast<float>(v), *f);
    p[0] = bits & 0xFF;
    if (f->exp + f->man + 1 == 16) p[1] = bits >> 8;
  }
}

double RoundTo(double v, const std::string& d) {
  if (d == "i1") return v != 0 ? 1 : 0;
  if (d == "f32") return static_cast<float>(v);
  if (const Format* f = FormatOf(d)) return RoundFormat(static_cast<float>(v), *f);
  if (const IntKind k = IntegerKind(d); k.width) return Wrap(v, k.width, k.is_unsigned);
  return v;
}

float StochasticRound(float x, const std::string& to, uint64_t seed, uint64_t index) {
  // Philox-4x32-10 (Salmon et al., SC'11), the first word of the block.
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c0, p1 = uint64_t{0xCD9E8D57u} * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0, c2 = n2;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  const uint32_t random = c0;
  const int m = to == "bf16" ? 7 : to == "f16" ? 10 : to == "f8E5M2" ? 2 : 3;
  const int emin = to == "bf16" ? -126 : (to == "f16" || to == "f8E5M2") ? -14 : -6;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const uint32_t sign = bits & 0x80000000u, mag = bits & 0x7FFFFFFFu, exp_field = mag >> 23;
  if (exp_field == 255) return x;
  const int tiny_below = emin - m + 127;
  float out;
  if (static_cast<int>(exp_field) < tiny_below) {
    float abs_x;
    std::memcpy(&abs_x, &mag, 4);
    const float u = static_cast<float>(random >> 8) * std::ldexp(1.0f, -24);
    const bool hit = exp_field != 0 && u < abs_x * std::ldexp(1.0f, m - emin);
    const uint32_t r = sign | (hit ? static_cast<uint32_t>(tiny_below) << 23 : 0u);
    std::memcpy(&out, &r, 4);
    return out;
  }
  const int e1 = std::max<int>(static_cast<int>(exp_field), 1);
  const int drop = std::min(23 - m + std::max(0, emin + 127 - e1), 31);
  const uint32_t mask = (1u << drop) - 1;
  const uint32_t r = sign | ((mag + (random & mask)) & ~mask);
  std::memcpy(&out, &r, 4);
  return out;
}

double CastValue(double v, const std::string& from, const std::string& to) {
  bool fromFloat = IsFloatDtype(from), toFloat = IsFloatDtype(to);
  if (to == "i1") return v != 0 ? 1 : 0;  // x != 0: NaN is true, -0 false
  if (fromFloat && !toFloat) {
    if (std::isnan(v)) return 0;
    const IntKind k = IntegerKind(to);
    if (!k.width) return std::trunc(v);
    const double lo = k.is_unsigned ? 0 : -std::ldexp(1.0, k.width - 1);
    // 2^63 - 1 and 2^64 - 1 are not doubles (they round up, and would then
    // wrap when stored): the largest double below 2^63 / 2^64 instead.
    const double top = std::ldexp(1.0, k.width - (k.is_unsigned ? 0 : 1));
    const double hi = k.width >= 53 ? std::nextafter(top, 0.0) : top - 1;
    return std::min(std::max(std::trunc(v), lo), hi);
  }
  if (!fromFloat && toFloat) return RoundTo(static_cast<float>(v), to);
  return RoundTo(v, to);
}

double RandomValue(std::mt19937& rng, const std::string& d) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  if (IsFloatDtype(d)) return RoundTo(dist(rng), d);
  if (d == "i1") return dist(rng) < 0 ? 1 : 0;
  if (IntegerKind(d).is_unsigned) return std::floor((dist(rng) + 1) * 8);  // [0, 16)
  return std::floor(dist(rng) * 8);
}

double DefaultTolerance(const std::string& d) {
  if (d == "f16") return 4e-3;
  if (d == "bf16") return 1.6e-2;
  if (d == "f8E4M3FN") return 0.25;
  if (d == "f8E5M2") return 0.5;
  if (IntWidth(d) || d == "i1") return 0;
  return 1e-3;
}

void Compare(const std::vector<unsigned char>& got, const std::string& dtype,
             const std::vector<double>& want, Mismatch* m) {
  std::vector<double> g = DecodeAll(got, dtype);
  for (size_t k = 0; k < g.size() && k < want.size(); ++k) {
    double x = g[k], w = want[k];
    double err = std::isnan(x) || std::isnan(w) ? (std::isnan(x) && std::isnan(w) ? 0 : INFINITY)
                                                : x == w ? 0 : std::fabs(x - w);
    m->max_error = std::max(m->max_error, err);
    if (std::isfinite(w)) m->max_ref = std::max(m->max_ref, std::fabs(w));
  }
}

}  // namespace tessera::elements

namespace tessera::elements {
namespace {
// Bytes of an integer type as MLIR prints it (i8, ui32, si16, i1; index is
// 64-bit on every target), or 0 when `d` is not one.
size_t IntegerBytes(const std::string& d) { return IntegerKind(d).bytes; }
}  // namespace

bool HasElementSize(const std::string& d) {
  return d == "f64" || d == "f32" || d == "f16" || d == "bf16" || FormatOf(d) || IntegerBytes(d) != 0;
}

size_t DtypeSize(const std::string& d) {
  if (d == "f64") return 8;
  if (d == "f32") return 4;
  if (d == "f16" || d == "bf16") return 2;
  if (size_t n = IntegerBytes(d)) return n;
  return 1;
}
}  // namespace tessera::elements
