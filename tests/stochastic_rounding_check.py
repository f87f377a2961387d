"""Stochastic rounding against an independent definition (ctest
stochastic_rounding.independent): Philox-4x32-10 written here from the
paper (checked on Random123's known answers), the rounding of docs/ir.md in
numpy, and tessera-run's sr_bf16, sr_f16, sr_fp8 and sr_e5m2 results on cpu and vulkan from
the same inputs; and sr_matmul / sr_softmax (the cast in the matmul's and the
softmax's epilogue) against the definition applied to the same kernels' f32
values.  Exit 0 when every bit agrees; 77 when vulkan is missing
(the cpu part still ran).

    python3 tests/stochastic_rounding_check.py build/bin/tessera-run
"""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox(ctr, key):
    c = list(ctr)
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & 0xFFFFFFFF, p1 & 0xFFFFFFFF,
             ((p0 >> 32) ^ c[3] ^ k1) & 0xFFFFFFFF, p0 & 0xFFFFFFFF]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return c


def stochastic(x, seed, index, m, emin):
    """The chosen neighbour of f32 x as f32 (before the cast's overflow rule)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    r = philox((index & 0xFFFFFFFF, index >> 32, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))[0]
    sign, mag = bits & 0x80000000, bits & 0x7FFFFFFF
    exp_field = mag >> 23
    if exp_field == 255:
        return x
    tiny_below = emin - m + 127
    if exp_field < tiny_below:
        u = np.float32(r >> 8) * np.float32(2.0 ** -24)
        scaled = np.float32(struct.unpack("<f", struct.pack("<I", mag))[0]) * np.float32(2.0 ** (m - emin))
        hit = exp_field != 0 and u < scaled
        out = sign | ((tiny_below << 23) if hit else 0)
    else:
        drop = min(23 - m + max(0, emin + 127 - max(exp_field, 1)), 31)
        mask = (1 << drop) - 1
        out = sign | ((mag + (r & mask)) & ~mask & 0xFFFFFFFF)
    return struct.unpack("<f", struct.pack("<I", out))[0]


def fp8_value(byte):
    """f8E4M3FN bits -> float."""
    s = -1.0 if byte & 0x80 else 1.0
    e, f = (byte >> 3) & 0xF, byte & 7
    if e == 15 and f == 7:
        return float("nan")
    return s * (f / 8.0 * 2.0 ** -6 if e == 0 else (1 + f / 8.0) * 2.0 ** (e - 7))


def e5m2_value(byte):
    """f8E5M2 bits -> float: the top byte of an f16."""
    return float(np.array([byte << 8], np.uint16).view(np.float16)[0])


def main():
    run = sys.argv[1]
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "stochastic_rounding.mlir")
    assert [hex(v) for v in philox((0, 0, 0, 0), (0, 0))] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    assert [hex(v) for v in philox((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2)] == \
        ["0x408f276d", "0x41c83b0e", "0xa20bc7c6", "0x6d5451fd"]
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((300, 257)) * 4).astype(np.float32)
    x.ravel()[:4] = [np.inf, -np.inf, 1e-40, -3e38]  # special, f32 subnormal, overflow
    x8 = rng.standard_normal((37, 53)).astype(np.float32)
    x8.ravel()[:3] = [500.0, 2.0 ** -12, -(2.0 ** -10)]  # saturates, below the subnormals
    want16 = np.array([stochastic(float(v), 42, i, 7, -126) for i, v in enumerate(x.ravel())], np.float32)
    want8 = np.array([stochastic(float(v), 7, i, 3, -6) for i, v in enumerate(x8.ravel())], np.float64)
    want8 = np.clip(want8, -448, 448)  # the cast saturates fp8 (values from here are exact in it)
    x5 = (rng.standard_normal((41, 47)) * 1000).astype(np.float32)
    x5.ravel()[:4] = [70000.0, -60000.0, 2.0 ** -17, -np.inf]  # overflows, may overflow, below the subnormals
    # sr_e5m2 also rounds x * 2^-14 (into and below e5m2's subnormals).
    with np.errstate(over="ignore"):  # past 57344: inf, as the cast overflows
        want5 = [np.array([stochastic(float(np.float32(v) * np.float32(s)), 9, i, 2, -14)
                           for i, v in enumerate(x5.ravel())], np.float64) for s in (1.0, 2.0 ** -14)]
    want5 = [np.where(np.abs(w) > 57344, np.copysign(np.inf, w), w) for w in want5]
    xh = (rng.standard_normal((61, 130)) * 3000).astype(np.float32)
    xh.ravel()[:2] = [65519.0, -70000.0]  # rounds to 65504 or overflows; overflows
    # sr_f16 also rounds x * 2^-16 (f16 subnormals) and x * 2^-26 (below them).
    scales = [1.0, 2.0 ** -16, 2.0 ** -26]
    with np.errstate(over="ignore"):  # past 65504: inf, as the cast overflows
        wanth = [np.array([stochastic(float(np.float32(v) * np.float32(s)), 11, i, 10, -14)
                           for i, v in enumerate(xh.ravel())], np.float32).astype(np.float16) for s in scales]
    missing = False
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "x8.npy"), x8)
        np.save(os.path.join(d, "xh.npy"), xh)
        np.save(os.path.join(d, "x5.npy"), x5)
        np.save(os.path.join(d, "a.npy"), rng.standard_normal((130, 96)).astype(np.float32))
        np.save(os.path.join(d, "b.npy"), rng.standard_normal((96, 70)).astype(np.float32))
        np.save(os.path.join(d, "s.npy"), (rng.standard_normal((67, 40)) * 3).astype(np.float32))
        def run_outputs(env, backend, fn, given, n):
            """tessera-run `fn` on input file `given`: its first n results."""
            outs = [os.path.join(d, "%s_%d.npy" % (fn, k)) for k in range(n)]
            p = subprocess.run([run, example, "--function", fn, "--input", os.path.join(d, given)] +
                               sum((["--output", o] for o in outs), []) + ["--iterations", "1", "--no-check"],
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("tessera-run %s on %s failed:\n%s%s" % (fn, backend, p.stdout, p.stderr))
            return [np.load(o) for o in outs]

        for backend in ("cpu", "vulkan"):
            env = dict(os.environ, TESSERA_BACKEND=backend)
            out16, out8a, out8b = (os.path.join(d, n) for n in ("y16.npy", "y8a.npy", "y8b.npy"))
            p = subprocess.run([run, example, "--function", "sr_bf16", "--input", os.path.join(d, "x.npy"),
                                "--output", out16, "--iterations", "1", "--no-check"],
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                if backend == "vulkan" and p.returncode == 77:
                    missing = True
                    continue
                sys.exit("tessera-run sr_bf16 on %s failed:\n%s%s" % (backend, p.stdout, p.stderr))
            y = np.load(out16)
            got = (y.astype(np.uint32) << 16).view(np.float32).ravel()
            same = (got == want16) | (np.isnan(got) & np.isnan(want16))
            if not same.all():
                i = int(np.argmin(same))
                sys.exit("%s sr_bf16: element %d of %f is %r, the definition gives %r"
                         % (backend, i, x.ravel()[i], got[i], want16[i]))
            p = subprocess.run([run, example, "--function", "sr_fp8", "--input", os.path.join(d, "x8.npy"),
                                "--output", out8a, "--output", out8b, "--iterations", "1", "--no-check"],
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("tessera-run sr_fp8 on %s failed:\n%s%s" % (backend, p.stdout, p.stderr))
            got8 = np.array([fp8_value(int(b)) for b in np.load(out8a).ravel()])
            if not np.array_equal(got8, want8):
                i = int(np.argmin(got8 == want8))
                sys.exit("%s sr_fp8: element %d of %r is %r, the definition gives %r"
                         % (backend, i, x8.ravel()[i], got8[i], want8[i]))
            for k, y5 in enumerate(run_outputs(env, backend, "sr_e5m2", "x5.npy", 2)):
                got5 = np.array([e5m2_value(int(b)) for b in y5.ravel()])
                if not np.array_equal(got5, want5[k]):
                    i = int(np.argmin(got5 == want5[k]))
                    sys.exit("%s sr_e5m2 (output %d): element %d of %r is %r, the definition gives %r"
                             % (backend, k, i, x5.ravel()[i], got5[i], want5[k][i]))
            for k, yh in enumerate(run_outputs(env, backend, "sr_f16", "xh.npy", 3)):
                goth = yh.ravel()
                if not np.array_equal(goth, wanth[k].ravel()):
                    i = int(np.argmin(goth == wanth[k].ravel()))
                    sys.exit("%s sr_f16 (x * %g): element %d of %r is %r, the definition gives %r"
                             % (backend, scales[k], i, xh.ravel()[i], goth[i], wanth[k].ravel()[i]))
            # Epilogues: a matmul's and a softmax's results rounded where
            # they are computed; the same kernels' f32 values, rounded here.
            for fn, seed, inputs in (("sr_matmul", 3, ("a.npy", "b.npy")), ("sr_softmax", 5, ("s.npy",))):
                ins = sum((["--input", os.path.join(d, i)] for i in inputs), [])
                y, c = os.path.join(d, fn + ".npy"), os.path.join(d, fn + "_f32.npy")
                for f, o in ((fn, y), (fn + "_f32", c)):
                    p = subprocess.run([run, example, "--function", f] + ins + ["--output", o, "--iterations", "1",
                                       "--no-check"], env=env, capture_output=True, text=True)
                    if p.returncode != 0:
                        sys.exit("tessera-run %s on %s failed:\n%s%s" % (f, backend, p.stdout, p.stderr))
                cv = np.load(c).ravel()
                want = np.array([stochastic(float(v), seed, i, 7, -126) for i, v in enumerate(cv)], np.float32)
                got = (np.load(y).astype(np.uint32) << 16).view(np.float32).ravel()
                if not np.array_equal(got, want):
                    i = int(np.argmin(got == want))
                    sys.exit("%s %s (epilogue): element %d of %r is %r, the definition gives %r"
                             % (backend, fn, i, cv[i], got[i], want[i]))
            rounded_up = np.mean(np.abs(want16[4:]) > np.abs(x.ravel()[4:]))
            print("%s: %d bf16, %d f16, %d fp8 e4m3 and %d fp8 e5m2 elements, and a matmul's and a softmax's "
                  "epilogues, equal the definition (%.1f%% of the bf16 ones rounded up)"
                  % (backend, x.size, 3 * xh.size, got8.size, 2 * x5.size, 100 * rounded_up))
    sys.exit(77 if missing else 0)


if __name__ == "__main__":
    main()
