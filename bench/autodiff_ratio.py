#!/usr/bin/env python3
"""Backward / forward time of --tessera-grad programs (issue 15's figure).

For each model (the MLP of examples/mlp.mlir, the GPT-2 block of
examples/transformer_block.mlir) this makes a module with
  @loss(args..., r) = sum(model(args) * r)               (the forward)
  @loss_grad = the value and gradient of @loss w.r.t. every weight
and times both with tessera-run on the selected backend (TESSERA_BACKEND)
in the same run. Prints one JSON object: per model the forward and
forward+backward times, their ratio (the usual figure is about 3x for
forward+backward, i.e. backward ~2x forward), and the bytes the gradient
program keeps live for its backward (its plan's buffers beyond the
forward's).

  python3 bench/autodiff_ratio.py build/bin/tessera-run examples [iterations] [schedule]

`schedule` is passed to tessera-run as --schedule (e.g.
"attention-backward=false": the attention backward written out as matmuls
and a softmax instead of the blockwise flash_attention_grad).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

TIME = re.compile(r"time: ([0-9.]+) ms per iteration")
MODELS = {"mlp": ("mlp.mlir", "mlp"), "transformer_block": ("transformer_block.mlir", "transformer_block")}


def function_text(src, name):
    start = src.index(f"func.func @{name}(")
    depth, i = 0, src.index("{", src.index(")", start))
    # the body: from the signature's "{" to its matching "}"
    while True:
        if src[i] == "{":
            depth += 1
        elif src[i] == "}":
            depth -= 1
            if depth == 0:
                return src[start:i + 1]
        i += 1


def signature(fn_text):
    head = fn_text[:fn_text.index("{", fn_text.index("->"))]
    args = re.findall(r"(%\w+): (tensor<[^>]+>)", head[:head.index("->")])
    result = head[head.index("->") + 2:].strip()
    return args, result


def gradient_module(src, fn, wrt_input=False):
    """The text of a module holding @fn (from the example's text `src`),
    @loss = sum(fn(args) * r) and the declaration of @loss_grad: the loss
    and its gradient w.r.t. every weight (every argument but the first,
    the input, unless `wrt_input`)."""
    body = function_text(src, fn).replace(f"func.func @{fn}(", f"func.func private @{fn}(", 1)
    args, result = signature(body)
    dims = ", ".join(str(d) for d in range(result.count("x")))
    ones = "x".join("1" for _ in range(result.count("x"))) + "xf32"
    names = ", ".join(a for a, _ in args)
    types = ", ".join(t for _, t in args)
    loss = (f"func.func @loss({', '.join(f'{a}: {t}' for a, t in args)}, %r: {result}) -> tensor<{ones}> {{\n"
            f"  %y = func.call @{fn}({names}) : ({types}) -> {result}\n"
            f"  %p = tessera_graph.mul %y, %r : {result}, {result}\n"
            f"  %l = tessera_graph.reduce sum %p dims = [{dims}] order = pairwise : {result} -> tensor<{ones}>\n"
            f"  return %l : tensor<{ones}>\n}}\n")
    first = 0 if wrt_input else 1
    weights = list(range(first, len(args)))
    grads = ", ".join(t for _, t in args[first:])
    decl = (f"func.func private @loss_grad({types}, {result}) -> (tensor<{ones}>, {grads})\n"
            f"    attributes {{tessera.grad_of = @loss, tessera.wrt = {weights}}}\n")
    return body + "\n" + loss + decl


def time_of(path, function):
    extra = ["--schedule", SCHEDULE] if SCHEDULE else []
    out = subprocess.run([RUN, path, "--function", function, "--no-check", "--iterations", ITERS] + extra,
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"{function}: exit {out.returncode}\n{out.stdout}{out.stderr}")
    return float(TIME.search(out.stdout).group(1))


if __name__ == "__main__":
    RUN, EXAMPLES = sys.argv[1], sys.argv[2]
    ITERS = sys.argv[3] if len(sys.argv) > 3 else "5"
    SCHEDULE = sys.argv[4] if len(sys.argv) > 4 else ""
    report = {"backend": os.environ.get("TESSERA_BACKEND", "cpu"), "iterations": int(ITERS), "schedule": SCHEDULE,
              "models": {}}
    for model, (file, fn) in MODELS.items():
        src = open(os.path.join(EXAMPLES, file)).read()
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write(gradient_module(src, fn))
        try:
            fwd = time_of(f.name, "loss")
            both = time_of(f.name, "loss_grad")
            opt = subprocess.run([os.path.join(os.path.dirname(RUN), "tessera-opt"), "--tessera-grad", f.name],
                                 capture_output=True, text=True, timeout=600).stdout
            saved = int(re.search(r"tessera.saved_bytes = (\d+)", opt).group(1))
        finally:
            os.unlink(f.name)
        report["models"][model] = {"forward_ms": fwd, "forward_backward_ms": both,
                                   "backward_over_forward": round((both - fwd) / fwd, 3),
                                   "saved_for_backward_bytes": saved}
    print(json.dumps(report, indent=2))
