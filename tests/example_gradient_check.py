#!/usr/bin/env python3
"""ctest example.ir.<backend>.graph.<fn>.gradient: the gradient of an
example's function, checked by tessera-run against the reference.

Builds the module bench/autodiff_ratio.py times (@loss = sum(fn(args) * r)
and @loss_grad, here w.r.t. every argument, the input included), runs
`tessera-run MODULE --function loss_grad --iterations 1 [args...]` and
passes when it exits 0 and prints a PASS verification.

  example_gradient_check.py TESSERA_RUN EXAMPLE.mlir FUNCTION [tessera-run args...]
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from autodiff_ratio import gradient_module  # noqa: E402

run, example, fn, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with open(example) as f:
    module = gradient_module(f.read(), fn, wrt_input=True)
with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
    f.write(module)
try:
    out = subprocess.run([run, f.name, "--function", "loss_grad", "--iterations", "1"] + extra,
                         capture_output=True, text=True, timeout=1800)
finally:
    os.unlink(f.name)
sys.stdout.write(out.stdout + out.stderr)
if out.returncode != 0 or "verify:" not in out.stdout or ": PASS" not in out.stdout:
    sys.exit(f"FAIL: the gradient of @{fn} ({example}): exit {out.returncode}")
