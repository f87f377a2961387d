#!/usr/bin/env python3
"""End-to-end programs with expected outputs, on every backend present.

Each case is a program (a .mlir here or in examples/), inputs made here from
a fixed seed, and the expected results computed here with NumPy in float64:
an oracle that shares nothing with Tessera (not its reference interpreter,
not its element-type code).  Every case runs through `tessera-run` on every
backend `tessera-info --json` reports with a device (cpu always; vulkan on
lavapipe here; cuda, hip, level_zero where their hardware is), and every
result must match the oracle within the case's tolerance.

usage: run_e2e.py <bin dir> <repo root> [--backend NAME]...
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

BIN, ROOT = sys.argv[1], sys.argv[2]
ONLY = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--backend" and i + 1 < len(sys.argv)]
E2E = os.path.join(ROOT, "tests", "e2e")
EXAMPLES = os.path.join(ROOT, "examples")


# --------------------------------------------------------------- dtypes
def to_bf16_bits(a):
    """float -> bf16 bit patterns (round to nearest even), as uint16."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bf16_bits(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def gelu(x):  # the tanh form Graph IR's gelu is defined as (docs/ir.md)
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------- cases
rng = np.random.default_rng(20261125)


def uniform(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def case_mlp_small():
    x, w1, b1 = uniform((37, 130)), uniform((130, 70)), uniform((70,))
    w2, b2 = uniform((70, 19)), uniform((19,))
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    return [x, w1, b1, w2, b2], [], [h @ w2 + b2], [1e-4]


def case_softmax_rows():
    x = uniform((33, 100), -30, 30)
    return [x], [], [softmax(x.astype(np.float64), 1)], [1e-4]


def case_attention_small():
    q, kt, v = uniform((48, 16)), uniform((16, 80)), uniform((80, 16))
    p = softmax((q.astype(np.float64) @ kt) * 0.25, 1)
    return [q, kt, v], [], [p @ v], [1e-4]


def case_int8_matmul():
    x = rng.integers(-128, 128, size=(96, 300)).astype(np.int8)
    w = rng.integers(-128, 128, size=(300, 200)).astype(np.int8)
    b = rng.integers(-5000, 5000, size=(200,)).astype(np.int32)
    y = np.maximum(x.astype(np.int64) @ w.astype(np.int64) + b, 0)
    q = (y & 0xFF).astype(np.uint8).view(np.int8)  # two's complement wrap-around
    return [x, w, b], [], [y.astype(np.int32), q], [0, 0]


def case_batched_matmul():
    q, k, b = uniform((4, 33, 300)), uniform((4, 300, 20)), uniform((33, 20))
    return [q, k, b], [], [q.astype(np.float64) @ k + b], [1e-4]


def case_mixed_precision():
    x, w, b = to_bf16_bits(uniform((128, 512))), to_bf16_bits(uniform((512, 1024), -0.1, 0.1)), uniform((1024,))
    h = from_bf16_bits(x).astype(np.float64) @ from_bf16_bits(w) + b
    # One rounding to bf16 at the end: compared in f32 with bf16's tolerance.
    return [x, w, b], [], [gelu(h)], [1.6e-2]


def case_saxpy():
    x, y = uniform((65536,)), uniform((65536,))
    return [x, y], ["2.5"], [2.5 * x.astype(np.float64) + y], [1e-6]


def case_reduction():
    x = uniform((65536,))
    return [x, np.zeros(64, np.float32)], [], [x.astype(np.float64).reshape(64, 1024).sum(axis=1)], [1e-5]


CASES = [
    # name, program, function, case
    ("mlp_small", os.path.join(E2E, "mlp_small.mlir"), None, case_mlp_small),
    ("softmax_rows", os.path.join(E2E, "softmax_rows.mlir"), None, case_softmax_rows),
    ("attention_small", os.path.join(E2E, "attention_small.mlir"), None, case_attention_small),
    ("int8_matmul", os.path.join(EXAMPLES, "int8_matmul.mlir"), None, case_int8_matmul),
    ("batched_matmul", os.path.join(EXAMPLES, "batched_matmul.mlir"), None, case_batched_matmul),
    ("mixed_precision", os.path.join(EXAMPLES, "mixed_precision.mlir"), None, case_mixed_precision),
    ("saxpy (Tile IR)", os.path.join(EXAMPLES, "saxpy.mlir"), None, case_saxpy),
    ("reduction (Tile IR)", os.path.join(EXAMPLES, "reduction.mlir"), None, case_reduction),
]


# --------------------------------------------------------------- running
def backends_present():
    info = subprocess.run([os.path.join(BIN, "tessera-info"), "--json"], capture_output=True, text=True)
    names = []
    for p in json.loads(info.stdout)["plugins"]:
        if p.get("state") in ("available", "loaded") and p.get("devices"):
            names.append(p["name"])
    return [n for n in names if not ONLY or n in ONLY]


def max_error(got, want):
    """max |got - want| / max(1, max |want|), in float64."""
    got = got.astype(np.float64)
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    return float(np.abs(got - want).max()) / scale if want.size else 0.0


def run_case(backend, name, program, function, make, work):
    inputs, scalars, expected, tolerances = make()
    args = [os.path.join(BIN, "tessera-run"), program, "--iterations", "1", "--warmup", "0"]
    if function:
        args += ["--function", function]
    for i, a in enumerate(inputs):
        path = os.path.join(work, f"in{i}.npy")
        np.save(path, a)
        args += ["--input", path]
    for s in scalars:
        args += ["--scalar", s]
    outputs = [os.path.join(work, f"out{i}.npy") for i in range(len(expected))]
    for o in outputs:
        args += ["--output", o]
    env = dict(os.environ, TESSERA_BACKEND=backend)
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return f"tessera-run exited {r.returncode}:\n{r.stdout}{r.stderr}"
    problems = []
    for i, (o, want, tol) in enumerate(zip(outputs, expected, tolerances)):
        got = np.load(o)
        if got.dtype == np.uint16 and want.dtype != np.uint16:  # bf16 bit patterns
            got = from_bf16_bits(got)
        if got.shape != want.shape:
            problems.append(f"result {i}: shape {got.shape}, expected {want.shape}")
            continue
        if tol == 0:
            bad = np.flatnonzero(got.astype(np.int64).ravel() != want.astype(np.int64).ravel())
            if bad.size:
                problems.append(f"result {i}: {bad.size} values differ (exact expected), first at {bad[0]}: "
                                f"{got.ravel()[bad[0]]} vs {want.ravel()[bad[0]]}")
            continue
        err = max_error(got, want)
        if not err <= tol:
            problems.append(f"result {i}: error {err:.3g} > tolerance {tol:g}")
    return "; ".join(problems)


def main():
    backends = backends_present()
    if "cpu" not in backends and not ONLY:
        print("FAIL: tessera-info reports no cpu backend with a device")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for backend in backends:
            for name, program, function, make in CASES:
                problem = run_case(backend, name, program, function, make, work)
                print(f"{'FAIL' if problem else 'PASS'}  {backend:<8} {name}" + (f": {problem}" if problem else ""))
                failures += bool(problem)
    print(f"e2e: {len(CASES)} programs on {', '.join(backends)}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
