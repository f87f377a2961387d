// Element types of Tessera programs' buffers, on the host: the bytes <->
// value conversions, the rounding rules every backend follows (docs/ir.md,
// "Element types"), random inputs and verification tolerances per type.
// Used by the reference interpreter, by Program's SPMD helpers and by
// tessera-run; part of libtessera (no MLIR).
//
// Dtypes are spelled as MLIR prints the element type: f32, f16, bf16,
// f8E4M3FN, f8E5M2, f64, i1, and every integer type of 2 to 64 bits: i8,
// i16, i32, i64, i24 (stored in 4 bytes), signed si16 and unsigned ui8,
// and index (64-bit).  Values travel as double, which holds every value of
// these types exactly up to 2^53.  Integers are stored little-endian in
// the power-of-two bytes that hold them and wrap around at their width
// (two's complement; unsigned types from 0).  i1 is one byte holding 0 or
// 1 (numpy's bool); a nonzero byte reads as 1.
#ifndef TESSERA_ELEMENT_TYPES_HPP_
#define TESSERA_ELEMENT_TYPES_HPP_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessera::elements {

bool IsFloatDtype(const std::string& dtype);
// Bytes of one element: f64/i64 8, f32/i32 4, f16/bf16/i16 2, any other
// integer type (i1, ui8, si16, index) as it is stored, fp8 1; else 1.
size_t DtypeSize(const std::string& dtype);
// Whether DtypeSize knows `dtype` (a float or integer type), rather than
// guessing 1: a buffer of another element type cannot be sized by a runner.
bool HasElementSize(const std::string& dtype);

// The value of one stored element.
double Decode(const unsigned char* p, const std::string& dtype);
std::vector<double> DecodeAll(const std::vector<unsigned char>& bytes, const std::string& dtype);
// Stores `v` rounded as the cpu backend stores a computed value (RoundTo).
void Encode(double v, unsigned char* p, const std::string& dtype);

// The value a result of type `dtype` holds when the generated code stores
// `v` (an f32 value for float types, an integer for integer types):
//   f32: v as float; f16, bf16, f8E5M2: round to nearest even, overflow to
//   +-inf;
//   f8E4M3FN: round to nearest even, saturate to +-448 (+-inf too), NaN
//   stays NaN; integers: wrap-around at their width (two's complement,
//   unsigned types from 0); i1: v != 0.
double RoundTo(double v, const std::string& dtype);

// tessera_graph.cast of a value of type `from` to `to`:
//   float -> int: toward zero, saturated to the integer range, NaN -> 0;
//   int -> float: to f32 (nearest even), then RoundTo(to);
//   float -> float, int -> int: RoundTo(to);
//   any -> i1: v != 0 (NaN is true); i1 -> any: 0 or 1.
double CastValue(double v, const std::string& from, const std::string& to);

// tessera_graph.cast {rounding = "stochastic", seed} of the f32 `x` at
// element `index` to `to` ("bf16", "f16", "f8E4M3FN" or "f8E5M2"): the chosen
// neighbour as a float (CastValue(result, "f32", to) then overflows or
// saturates as the cast does).  The definition every backend computes
// (tessera::elements::emitStochasticRound, docs/ir.md): Philox-4x32-10
// keyed by `seed`, counter (index, 0), first word r; the bits of |x| below
// the target's precision at x's exponent are `drop`; |x| + (r mod 2^drop)
// with those bits cleared.  Below the smallest subnormal s (fp8): s when
// (r >> 8) 2^-24 < |x| / s, else 0; f32 subnormals give 0 there.  NaN and
// infinities are returned unchanged.
float StochasticRound(float x, const std::string& to, uint64_t seed, uint64_t index);

// Random input: floats uniform in [-1, 1) rounded to the type; integers in
// [-8, 8) (small enough that i8 products summed in i32 stay exact),
// unsigned ones in [0, 16); i1 0 or 1, each half the time.
double RandomValue(std::mt19937& rng, const std::string& dtype);

// Default relative verification tolerance for results of this type: f32
// 1e-3, f16 4e-3, bf16 1.6e-2 (about 4 ulp), f8E4M3FN 0.25 (2 ulp),
// f8E5M2 0.5 (2 ulp),
// integers 0 (exact).
double DefaultTolerance(const std::string& dtype);

// Differences between computed bytes of type `dtype` and expected values,
// accumulated over buffers: max |got - want| (NaN matches only NaN, an
// infinity only itself; any other mismatch is infinite) and max |want| over
// the finite expected values (the scale of a relative tolerance).
struct Mismatch {
  double max_error = 0, max_ref = 0;
};
void Compare(const std::vector<unsigned char>& got, const std::string& dtype,
             const std::vector<double>& want, Mismatch* m);

}  // namespace tessera::elements

#endif
