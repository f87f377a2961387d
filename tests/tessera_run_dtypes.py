#!/usr/bin/env python3
"""tessera-run with every Graph IR element type, against an oracle written here.

    usage: tessera_run_dtypes.py TESSERA_RUN

1. Casts between every pair of f32, f16, bf16, f8E4M3FN, f8E5M2, i32, i8 on values
   chosen to hit the rules of docs/ir.md: ties to even, overflow (f16/bf16
   and fp8 e5m2 to inf, fp8 e4m3 saturating to +-448), inf, NaN, negative zero, subnormals of
   every format, float -> int truncation and saturation, int -> int wrap.
   The inputs are .npy files written here; tessera-run compiles and runs the
   cast, checks it against its reference with --tolerance 0 and writes the
   result, whose bits are compared with this script's oracle.  Casts from
   and to f16 run twice: for the host (F16C: vcvtph2ps / vcvtps2ph) and with
   --cpu x86-64 (no F16C: the generator's integer code).  The oracle
   rounds by enumerating every value of the narrow format (nearest, ties to
   the even code), so it shares nothing with the code generator's bit tricks
   or the reference's frexp arithmetic.
2. .npy round trips: a program returning its argument gives back the file's
   bytes with the dtype's spelling ('<f2', '<u2' for bf16, '|u1' for fp8,
   '|i1', '<i4'); bf16 / fp8 files spelled as raw void types ('<V2', '|V1')
   are accepted; a file of the wrong dtype gets the usual error.
3. Every op the cpu backend lowers, for every type it takes (elementwise
   with a broadcast operand, exp/gelu, softmax, reduce sum/max in both
   orders, splat constants, convert_layout) and matmuls of each legal type
   pair with fused epilogues, odd shapes, several K slices, a panel-packed
   group and a batch, on random inputs against tessera-run's reference:
   exactly (--tolerance 0: the reference computes in f32 in the kernel's
   order and rounds like it), except f32 exp and softmax (1e-6: the
   kernel's vector exp is a 2-ulp polynomial), gelu (tanh against the
   kernel's exp form) and matmuls (summation order), which get the type's
   default.

No NumPy: .npy files are read and written with struct.
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

TYPES = ["f32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "i32", "i8", "i1"]
N = 256
DESCR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "f8E4M3FN": "|u1", "f8E5M2": "|u1",
         "i32": "<i4", "i8": "|i1", "i1": "|b1"}
SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f8E4M3FN": 1, "f8E5M2": 1, "i32": 4, "i8": 1, "i1": 1}
# exponent bits, mantissa bits, bias, ieee (inf/NaN in the top exponent)
FORMATS = {"f16": (5, 10, 15, True), "bf16": (8, 7, 127, True),
           "f8E4M3FN": (4, 3, 7, False), "f8E5M2": (5, 2, 15, True)}
INT_BITS = {"i32": 32, "i8": 8}


def decode_format(code, fmt):
    e_bits, m_bits, bias, ieee = fmt
    sign = -1.0 if code >> (e_bits + m_bits) & 1 else 1.0
    e = code >> m_bits & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if ieee and e == (1 << e_bits) - 1:
        return sign * math.inf if m == 0 else math.nan
    if not ieee and e == (1 << e_bits) - 1 and m == (1 << m_bits) - 1:
        return math.nan
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp((1 << m_bits) + m, e - bias - m_bits)


class Narrow:
    """Round to nearest, ties to even, by search over all codes."""

    def __init__(self, fmt):
        self.fmt = fmt
        e_bits, m_bits, _, ieee = fmt
        top = 1 << (e_bits + m_bits)
        pos = [(decode_format(c, fmt), c) for c in range(top)]
        pos = [(v, c) for v, c in pos if math.isfinite(v)]
        pos.sort()
        self.values = pos                       # non-negative finite, ascending
        vmax, cmax = pos[-1]
        ulp = vmax - pos[-2][0]
        # The value past the largest with an unbounded exponent: where
        # rounding decides between the largest finite value and overflow.
        self.next = (vmax + ulp, cmax + 1)
        self.ieee = ieee
        self.sign_bit = top

    def encode(self, x):
        if math.isnan(x):
            return None                          # any NaN code
        sign = self.sign_bit if math.copysign(1.0, x) < 0 else 0
        a = abs(x)
        if math.isinf(a):
            if self.ieee:
                return sign | (((1 << self.fmt[0]) - 1) << self.fmt[1])
            return sign | self.values[-1][1]
        cands = self.values + [self.next]
        lo, hi = 0, len(cands) - 1
        if a >= cands[-1][0]:
            best = cands[-1]
        else:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if cands[mid][0] <= a:
                    lo = mid
                else:
                    hi = mid
            (vl, cl), (vh, ch) = cands[lo], cands[hi]
            if a - vl < vh - a or (a - vl == vh - a and cl % 2 == 0):
                best = cands[lo]
            else:
                best = cands[hi]
        if best is self.next:                    # overflow
            if self.ieee:
                return sign | (((1 << self.fmt[0]) - 1) << self.fmt[1])
            return sign | self.values[-1][1]     # saturate: +-448
        return sign | best[1]


NARROW = {t: Narrow(f) for t, f in FORMATS.items()}


def to_f32(x):
    """double -> nearest f32 (ties to even), as a double."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def encode(x, t):
    """Value -> bytes of type t (x must be exact in f32 for float types)."""
    if t == "i1":                                 # numpy's bool: one byte, 0 or 1
        return bytes([1 if x != 0 else 0])
    if t == "f32":
        return struct.pack("<f", x)
    if t in FORMATS:
        code = NARROW[t].encode(x)
        if code is None:                          # canonical NaN
            code = {"f16": 0x7E00, "bf16": 0x7FC0, "f8E4M3FN": 0x7F, "f8E5M2": 0x7E}[t]
        return code.to_bytes(SIZE[t], "little")
    return wrap(int(x), INT_BITS[t]).to_bytes(SIZE[t], "little", signed=True)


def decode(b, t):
    if t == "i1":
        return 1 if b[0] else 0
    if t == "f32":
        return struct.unpack("<f", b)[0]
    if t in FORMATS:
        return decode_format(int.from_bytes(b, "little"), FORMATS[t])
    return int.from_bytes(b, "little", signed=True)


def cast(x, frm, to):
    """The expected bytes of tessera_graph.cast (docs/ir.md)."""
    if to == "i1":                               # x != 0: NaN is true, -0 false
        return encode(1 if x != 0 else 0, to)
    if frm == "i1":                              # 0 or 1
        return encode(x if to in INT_BITS else float(x), to)
    if frm in INT_BITS and to in INT_BITS:
        return encode(x, to)                     # wraps
    if frm in INT_BITS:                          # int -> f32 -> to
        return encode(to_f32(float(x)), to)
    if to in INT_BITS:                           # toward zero, saturate, NaN -> 0
        if math.isnan(x):
            return encode(0, to)
        bits = INT_BITS[to]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if math.isinf(x):
            v = hi if x > 0 else lo
        else:
            v = min(max(math.trunc(x), lo), hi)
        return encode(v, to)
    return encode(x, to)                         # float -> float: round once


def special_floats():
    p = math.ldexp
    v = [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 0.1, -0.3, 3.14159265, 100.0,
         # fp8 e4m3fn: largest 448, ties at 464 (to 448), above saturates
         448.0, -448.0, 449.0, 464.0, 465.0, -470.0, 480.0, 500.0, 1e4, -1e6,
         # fp8 subnormals: 2^-9 smallest, 2^-10 ties to 0, 3*2^-10 to 2^-8
         p(1, -6), p(1, -7), p(1, -9), -p(1, -9), p(1, -10), p(3, -10), p(5, -10),
         p(1, -11), p(7, -11), p(15, -10),
         # fp8 normal ties: 1 + 1/16 (to 1), 1 + 3/16 (to 1.25)
         1.0625, 1.1875, -1.1875, 17.0, 19.0, 240.0, 248.0, 232.0,
         # f16: largest 65504, 65519 rounds down, 65520 ties to inf
         65504.0, 65519.0, 65520.0, -65520.0, 70000.0, 2048.0, 2049.0, 2051.0,
         # f16 subnormals: 2^-24 smallest, 2^-25 ties to 0, 3*2^-25 to 2^-23
         p(1, -14), p(1, -15), p(1, -24), p(1, -25), p(3, -25), -p(3, -25), p(1, -26),
         p(1023, -24), p(2047, -25),
         # fp8 e5m2: largest 57344, 61440 ties to inf (the even code), 61439
         # rounds down; normal ties 1.125 (to 1), 1.375 (to 1.5); subnormals:
         # 2^-16 smallest, 2^-17 ties to 0, 3 * 2^-17 to 2^-15
         57344.0, -57344.0, 61439.0, 61440.0, -61440.0, 49152.0, 1.125, 1.375, -1.375,
         p(1, -16), p(1, -17), p(3, -17), -p(3, -17), p(3, -16), p(1, -18),
         # bf16: ties 1 + 2^-8 (to 1), 1 + 3 * 2^-8 (to 1 + 2^-6)
         1.00390625, 1.01171875, -1.01171875, 1.0000001, 255.5, 256.5,
         # bf16 overflow and subnormals
         3.3895314e38, 3.4028235e38, -3.4028235e38, p(1, -126), p(1, -130),
         p(1, -133), p(3, -134), p(1, -149), -p(1, -149),
         # ints: truncation and saturation of i8 / i32
         127.0, 127.5, 127.99, 128.0, -128.0, -128.5, -129.0, 255.0, 256.0,
         0.999, -0.999, 2147483520.0, 2147483648.0, -2147483648.0,
         -2147483904.0, 1e10, -1e10, 16777216.0, 16777218.0,
         math.inf, -math.inf, math.nan, -math.nan]
    return [to_f32(x) for x in v]


def values_for(t, rng):
    if t == "i1":
        return [rng.randint(0, 1) for _ in range(N)]
    if t in INT_BITS:
        v = [0, 1, -1, 2, -2, 7, 100, 127, 128, -128, -129, 255, 256, 448, 449,
             464, 465, 480, 1000, -1000, 65504, 65519, 65520, 70000,
             16777216, 16777217, -16777217, 33554435, 2147483647,
             -2147483648, -2147483647, 123456789]
        v += list(range(-128, 128))
        v += [rng.randint(-(1 << 31), (1 << 31) - 1) for _ in range(N)]
        v = [wrap(x, INT_BITS[t]) for x in v]
    else:
        v = special_floats()
        v += [to_f32(rng.uniform(-2, 2) * math.ldexp(1, rng.randint(-30, 20))) for _ in range(N)]
        # what the file can hold: values of type t
        v = [decode(encode(x, t), t) for x in v]
    return v[:N]


def write_npy(path, descr, shape, data):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    d = d.encode()
    d += b" " * ((64 - (10 + len(d) + 1) % 64) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + data)


def read_npy(path):
    with open(path, "rb") as f:
        raw = f.read()
    hlen = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + hlen].decode()
    return header, raw[10 + hlen:]


def T(shape, t):
    return "tensor<" + "x".join(map(str, shape)) + "x" + t + ">"


def op_programs():
    """name -> (function text, exact)"""
    progs = {}
    floats = ["f32", "f16", "bf16", "f8E4M3FN", "f8E5M2"]
    # compare (every predicate; broadcast rhs) and select, bit-exact
    for t in TYPES:
        s, b, m = T([24, 40], t), T([40], t), T([24, 40], "i1")
        preds = ["eq", "ne"] if t == "i1" else ["eq", "ne", "lt", "le", "gt", "ge"]
        for pred in preds:
            progs[f"compare_{pred}_{t}"] = (f"(%x: {s}, %y: {b}) -> {m} {{\n"
                                            f"  %r = tessera_graph.compare {pred} %x, %y : {s}, {b} -> {m}\n"
                                            f"  return %r : {m}\n}}", True)
        progs[f"select_{t}"] = (f"(%c: {m}, %x: {s}, %y: {b}) -> {s} {{\n"
                                f"  %r = tessera_graph.select %c, %x, %y : {m}, {s}, {b} -> {s}\n"
                                f"  return %r : {s}\n}}", True)
    for t in TYPES:
        if t == "i1":  # a truth value: only compare, select, cast and copies take it
            continue
        s, b = T([24, 40], t), T([40], t)
        for op in ["add", "sub", "mul", "div", "max"]:
            progs[f"{op}_{t}"] = (f"(%x: {s}, %y: {b}) -> {s} {{\n"
                                  f"  %r = tessera_graph.{op} %x, %y : {s}, {b}\n  return %r : {s}\n}}", True)
        # exp in f32 vectors is a polynomial (Cephes' expf, about 2 ulp:
        # ExpandVectorExp.cpp), not libm's expf: f32 exp and softmax are
        # checked to 1e-6; rounded to a narrower type they are exact.
        near = "1e-6" if t == "f32" else True
        for op in ["relu"] + (["exp", "gelu"] if t in floats else []):
            progs[f"{op}_{t}"] = (f"(%x: {s}) -> {s} {{\n"
                                  f"  %r = tessera_graph.{op} %x : {s}\n  return %r : {s}\n}}",
                                  {"relu": True, "exp": near, "gelu": False}[op])
        if t in floats:
            progs[f"softmax_{t}"] = (f"(%x: {s}) -> {s} {{\n"
                                     f"  %r = tessera_graph.softmax %x dim = 1 : {s}\n  return %r : {s}\n}}", near)
        for kind in ["sum", "max"]:
            for order in ["sequential", "pairwise"]:
                i, o = T([24, 37], t), T([24], t)
                progs[f"reduce_{kind}_{order}_{t}"] = (
                    f"(%x: {i}) -> {o} {{\n  %r = tessera_graph.reduce {kind} %x dims = [1] order = {order}"
                    f" : {i} -> {o}\n  return %r : {o}\n}}", True)
        cm = f"tensor<24x40x{t}, #tessera_graph.layout<col_major>>"
        progs[f"layout_{t}"] = (f"(%x: {s}) -> {cm} {{\n"
                                f"  %r = tessera_graph.convert_layout %x : {s} -> {cm}\n  return %r : {cm}\n}}", True)
        # x * 100 wraps in i8; x / 0 is 0 for integers (no trap), inf for floats
        c = T([40], t)
        for name, op, v in (("const", "mul", "1.5" if t in floats else "100"), ("divzero", "div", "0.0" if t in floats else "0")):
            progs[f"{name}_{t}"] = (f"(%x: {s}) -> {s} {{\n  %c = arith.constant dense<{v}> : {c}\n"
                                    f"  %r = tessera_graph.{op} %x, %c : {s}, {c}\n  return %r : {s}\n}}", True)
    # matmuls: (lhs type, result type, M, K, N, bias): K = 300 and 600 need
    # 2 and 3 K slices; 300 rows make groups of 150 > MC (panel packing).
    for a, r, M, K, N in [("f32", "f32", 300, 64, 20), ("f16", "f16", 50, 300, 40),
                          ("f16", "f32", 33, 70, 17), ("bf16", "bf16", 300, 300, 40),
                          ("f8E4M3FN", "f32", 64, 600, 24), ("f8E5M2", "f32", 70, 300, 24),
                          ("i8", "i8", 50, 300, 40),
                          ("i8", "i32", 300, 70, 17), ("i32", "i32", 33, 70, 33)]:
        x, w, bias, y = T([M, K], a), T([K, N], a), T([N], r), T([M, N], r)
        progs[f"matmul_{a}_{r}_{M}x{K}x{N}"] = (
            f"(%x: {x}, %w: {w}, %b: {bias}) -> {y} {{\n"
            f"  %m = tessera_graph.matmul %x, %w : {x}, {w} -> {y}\n"
            f"  %a = tessera_graph.add %m, %b : {y}, {bias}\n"
            f"  %r = tessera_graph.relu %a : {y}\n  return %r : {y}\n}}", False)
    # fp8 training's mix: e5m2 gradients times e4m3 weights, f32 accumulation.
    x, w, y = T([40, 200], "f8E5M2"), T([200, 30], "f8E4M3FN"), T([40, 30], "f32")
    progs["matmul_f8E5M2_f8E4M3FN_f32"] = (f"(%x: {x}, %w: {w}) -> {y} {{\n"
                                           f"  %m = tessera_graph.matmul %x, %w : {x}, {w} -> {y}\n"
                                           f"  return %m : {y}\n}}", False)
    x, w, y = T([3, 20, 300], "bf16"), T([3, 300, 21], "bf16"), T([3, 20, 21], "f32")
    progs["matmul_batched_bf16_f32"] = (f"(%x: {x}, %w: {w}) -> {y} {{\n"
                                        f"  %m = tessera_graph.matmul %x, %w : {x}, {w} -> {y}\n"
                                        f"  return %m : {y}\n}}", False)
    return progs


def main():
    run = sys.argv[1]
    env = dict(os.environ, TESSERA_BACKEND="cpu")
    rng = random.Random(7)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        env["TESSERA_CACHE_DIR"] = os.path.join(tmp, "cache")
        prog = os.path.join(tmp, "casts.mlir")
        with open(prog, "w") as f:
            for a in TYPES:
                f.write(f"func.func @id_{a}(%x: tensor<{N}x{a}>) -> tensor<{N}x{a}> {{\n"
                        f"  return %x : tensor<{N}x{a}>\n}}\n")
                for b in TYPES:
                    if a != b:
                        f.write(f"func.func @cast_{a}_to_{b}(%x: tensor<{N}x{a}>) -> tensor<{N}x{b}> {{\n"
                                f"  %r = tessera_graph.cast %x : tensor<{N}x{a}> -> tensor<{N}x{b}>\n"
                                f"  return %r : tensor<{N}x{b}>\n}}\n")
        inputs = {}
        for a in TYPES:
            vals = values_for(a, rng)
            inputs[a] = vals
            data = b"".join(encode(x, a) for x in vals)
            write_npy(os.path.join(tmp, f"in_{a}.npy"), DESCR[a], [N], data)

        def tessera_run(kernel, *args):
            return subprocess.run([run, prog, "--kernel", kernel, "--iterations", "1", *args],
                                  env=env, capture_output=True, text=True)

        # 1. casts (f16 also without F16C)
        cases = [(a, b, []) for a in TYPES for b in TYPES if a != b]
        cases += [(a, b, ["--cpu", "x86-64"]) for a, b, _ in cases if "f16" in (a, b)]
        for a, b, extra in cases:
            what = f"cast {a} -> {b}" + (" " + " ".join(extra) if extra else "")
            out = os.path.join(tmp, "out.npy")
            r = tessera_run(f"cast_{a}_to_{b}", "--input", os.path.join(tmp, f"in_{a}.npy"),
                            "--output", out, "--tolerance", "0", *extra)
            verdict = [l for l in r.stdout.splitlines() if l.startswith("verify:")]
            if r.returncode != 0 or not verdict or "PASS" not in verdict[0]:
                print(f"FAIL {what}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                failures += 1
                continue
            header, data = read_npy(out)
            if f"'descr': '{DESCR[b]}'" not in header:
                print(f"FAIL {what}: header {header!r}")
                failures += 1
                continue
            bad = []
            for i, x in enumerate(inputs[a]):
                got = data[i * SIZE[b]:(i + 1) * SIZE[b]]
                want = cast(x, a, b)
                gv, wv = decode(got, b), decode(want, b)
                if got != want and not (isinstance(gv, float) and math.isnan(gv) and math.isnan(wv)):
                    bad.append(f"{x!r} -> {gv!r} ({got.hex()}), want {wv!r} ({want.hex()})")
            if bad:
                print(f"FAIL {what}: {len(bad)} of {N} differ from the oracle, e.g.")
                for line in bad[:6]:
                    print("    " + line)
                failures += 1
            else:
                print(f"ok   {what} ({N} values, bit-exact; {verdict[0][8:]})")

        # 2. .npy round trips and spellings
        for a in TYPES:
            src = os.path.join(tmp, f"in_{a}.npy")
            out = os.path.join(tmp, "rt.npy")
            r = tessera_run(f"id_{a}", "--input", src, "--output", out)
            header, data = read_npy(out)
            _, want = read_npy(src)
            if r.returncode != 0 or data != want or f"'descr': '{DESCR[a]}'" not in header:
                print(f"FAIL round trip {a}: exit {r.returncode}, header {header!r}, "
                      f"bytes {'equal' if data == want else 'differ'}\n{r.stdout}{r.stderr}")
                failures += 1
            else:
                print(f"ok   round trip {a} ({DESCR[a]})")
        for a, descr in (("bf16", "<V2"), ("bf16", "|V2"), ("f8E4M3FN", "|V1")):
            _, data = read_npy(os.path.join(tmp, f"in_{a}.npy"))
            src = os.path.join(tmp, "void.npy")
            write_npy(src, descr, [N], data)
            out = os.path.join(tmp, "rt.npy")
            r = tessera_run(f"id_{a}", "--input", src, "--output", out)
            if r.returncode != 0 or read_npy(out)[1] != data:
                print(f"FAIL {a} read as {descr}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                failures += 1
            else:
                print(f"ok   {a} read as {descr}")
        for kernel, file, want in (("id_bf16", "in_f16.npy", "expects bf16 [256], the file holds f16 [256]"),
                                   ("id_f8E4M3FN", "in_i8.npy", "expects f8E4M3FN [256], the file holds i8 [256]"),
                                   ("id_i8", "in_f8E4M3FN.npy", "expects i8 [256], the file holds f8E4M3FN [256]")):
            r = tessera_run(kernel, "--input", os.path.join(tmp, file))
            if r.returncode != 1 or want not in r.stderr:
                print(f"FAIL {kernel} given {file}: exit {r.returncode} (want 1, '{want}')\n{r.stderr}")
                failures += 1
            else:
                print(f"ok   {kernel} given {file}: {r.stderr.strip()}")

        # 3. every op for every type
        progs = op_programs()
        prog = os.path.join(tmp, "ops.mlir")
        with open(prog, "w") as f:
            for name, (text, _) in progs.items():
                f.write(f"func.func @{name}{text}\n")
        for name, (_, exact) in progs.items():
            tol = "0" if exact is True else (exact or None)  # True: exact; "1e-6": that; False: the default
            r = tessera_run(name, *(["--tolerance", tol] if tol else []))
            verdict = [l for l in r.stdout.splitlines() if l.startswith("verify:")]
            if r.returncode != 0 or not verdict or any("PASS" not in v for v in verdict):
                print(f"FAIL {name}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                failures += 1
            else:
                print(f"ok   {name}: {verdict[0][8:]}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
