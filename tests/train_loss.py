#!/usr/bin/env python3
"""Training programs through tessera-run (docs/autodiff.md).

examples/train_mlp.mlir must bring its loss down (below a tenth of the
first step's in 100 SGD steps) on cpu and, where lavapipe runs, on vulkan
with the cpu's losses; examples/train_tp_mlp.mlir and train_dp_mlp.mlir
(the same model tensor- and data-parallel over 2 devices) must print the
single-device losses. Relative tolerance
1e-4 between runs: the backends and the split sum in other orders.
Then the bad `tessera.update` marks: each an error naming what is wrong.
"""
import os
import re
import subprocess
import sys
import tempfile

RUN, EXAMPLES = sys.argv[1], sys.argv[2]
STEP = re.compile(r"^step (\d+): result 0 = (\S+)$", re.M)


def run(program, backend="cpu", iterations=100, expect=0):
    env = dict(os.environ, TESSERA_BACKEND=backend)
    p = subprocess.run([RUN, program, "--iterations", str(iterations)], env=env,
                       capture_output=True, text=True, timeout=600)
    if backend == "vulkan" and p.returncode == 77:
        return None
    if p.returncode != expect:
        sys.exit(f"{program} on {backend}: exit {p.returncode}, wanted {expect}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def losses(out):
    return {int(s): float(v) for s, v in STEP.findall(out)}


def same(a, b, what):
    if a.keys() != b.keys():
        sys.exit(f"{what}: steps {sorted(a)} vs {sorted(b)}")
    for s in a:
        if abs(a[s] - b[s]) > 1e-4 * abs(a[s]):
            sys.exit(f"{what}: step {s} loss {b[s]} vs {a[s]}")


cpu = losses(run(os.path.join(EXAMPLES, "train_mlp.mlir")))
steps = sorted(cpu)
if len(steps) < 10 or steps[0] != 1:
    sys.exit(f"expected the losses of steps 1..102, got {cpu}")
if not cpu[steps[-1]] < 0.1 * cpu[1]:
    sys.exit(f"the loss did not fall: {cpu}")
if any(cpu[b] > cpu[a] for a, b in zip(steps, steps[1:])):
    sys.exit(f"the loss rose between printed steps: {cpu}")
print(f"cpu: loss {cpu[1]:.4g} -> {cpu[steps[-1]]:.4g} in {steps[-1]} steps")

same(cpu, losses(run(os.path.join(EXAMPLES, "train_tp_mlp.mlir"))), "train_tp_mlp (2 devices)")
print("train_tp_mlp on 2 devices: the single-device losses")
same(cpu, losses(run(os.path.join(EXAMPLES, "train_dp_mlp.mlir"))), "train_dp_mlp (2 devices)")
print("train_dp_mlp on 2 devices: the single-device losses")

vk = run(os.path.join(EXAMPLES, "train_mlp.mlir"), backend="vulkan")
if vk is None:
    print("vulkan: not available here (exit 77), not compared")
else:
    same(cpu, losses(vk), "train_mlp on vulkan")
    print("vulkan: the cpu's losses")

# Bad marks: each an error (exit 1) that says what is wrong.
BAD = {
    "updates argument 7": "tessera.update = 7",
    "of another type": "tessera.update = 0",
}
src = open(os.path.join(EXAMPLES, "train_mlp.mlir")).read()
for message, mark in BAD.items():
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(src.replace("tessera.update = 2", mark, 1))
    try:
        out = run(f.name, iterations=1, expect=1)
        if message not in out:
            sys.exit(f"'{mark}': wanted an error with '{message}', got:\n{out}")
    finally:
        os.unlink(f.name)
print("bad tessera.update marks: errors")
