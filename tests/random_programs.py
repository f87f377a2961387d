#!/usr/bin/env python3
"""Differential testing of the code generators against the reference.

Generates random Graph IR functions (elementwise ops with broadcasting,
matmuls, transposes, reshapes, slices, pads, concats, broadcasts,
reductions, softmax, layernorm, compare + select, constants, iota,
attention chains with and without a causal mask) with
several results of different shapes, and runs each with `tessera-run`,
which compiles it for the selected backend and checks every result against
the reference interpreter (ir/lib/Reference). Any program that fails to
compile, crashes, or differs from the reference is a bug in a code
generator (or the reference); the program is kept for the report.

    python3 tests/random_programs.py --bin build/bin --count 40 --seed 1
    TESSERA_BACKEND=vulkan python3 tests/random_programs.py --bin build/bin --count 10
    python3 tests/random_programs.py --bin build/bin --seed 1 --only 17 --print   # one program

Program i of seed S is generated from random.Random(S * 100003 + i) alone,
so `--seed S --only i` gives the same program as in the run that found it.
Values stay in a range where f32 and the reference agree to the default
tolerance: exp only after tanh, no division, no casts to narrow types.
Exit status: 0 when every program verifies, 1 otherwise (each failing
program's path and tessera-run's output are printed).
"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time

DIMS = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 24, 31, 32, 33, 48, 64, 65, 100]
# --spmd: mostly sizes that divide over 2 and 4 devices, so that most
# arguments and results can be split.
SPMD_DIMS = [1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 36, 48, 64, 96]
# --dtype bf16/f16: mostly the multiples of 16 and 64 that the tensor-core
# tiers take (the others fall back to the lanes' FMAs), and a few that do not.
MMA_DIMS = [8, 16, 17, 32, 48, 64, 96, 128, 192, 256]
MAX_ELEMENTS = 1 << 15


ELEM = "f32"  # --dtype: the element type of every float tensor


def ttype(shape, elem=None):
    elem = elem or ELEM
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Program:
    """One random function: arguments, ops and results, as MLIR text."""

    def __init__(self, rng, dims=DIMS):
        self.rng = rng
        self.dims = dims
        self.args = []  # (name, shape)
        self.lines = []
        self.values = []  # (name, shape): f32 values available to ops
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def argument(self, shape):
        name = f"%a{len(self.args)}"
        self.args.append((name, list(shape)))
        self.values.append((name, list(shape)))
        return name

    def emit(self, text, shape):
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        self.values.append((name, list(shape)))
        return name

    def dim(self):
        return self.rng.choice(self.dims)

    def pick(self, pred=lambda s: True):
        # Prefer recent values (deeper programs), any that fits.
        cands = [v for v in self.values if pred(v[1])]
        if not cands:
            return None
        if self.rng.random() < 0.6:
            return cands[-1 - self.rng.randrange(min(3, len(cands)))]
        return self.rng.choice(cands)

    # --- ops -----------------------------------------------------------
    def unary(self):
        x, s = self.pick()
        op = self.rng.choice(["relu", "neg", "tanh", "gelu", "exp"])
        if op == "exp":  # keep it bounded
            x = self.emit(f"tessera_graph.tanh {x} : {ttype(s)}", s)
        return self.emit(f"tessera_graph.{op} {x} : {ttype(s)}", s)

    def binary(self):
        x, s = self.pick()
        op = self.rng.choice(["add", "sub", "mul", "max", "min"])
        form = self.rng.random()
        if form < 0.5:
            y = self.pick(lambda t: t == s)
            ys = s
            y = y[0] if y else self.argument(s)
        elif form < 0.75 and len(s) >= 1:  # a row vector over the last dim
            ys = [s[-1]]
            y = self.pick(lambda t: t == ys)
            y = y[0] if y else self.argument(ys)
        elif len(s) == 2:  # a column [M, 1]
            ys = [s[0], 1]
            y = self.pick(lambda t: t == ys)
            y = y[0] if y else self.argument(ys)
        else:  # a scalar constant
            ys = []
            y = self.emit(f"arith.constant dense<{self.rng.choice([0.5, -1.25, 2.0])}> : {ttype([])}", [])
            self.values.pop()
        if self.rng.random() < 0.5:
            x, y, s1, s2 = y, x, ys, s
        else:
            s1, s2 = s, ys
        return self.emit(f"tessera_graph.{op} {x}, {y} : {ttype(s1)}, {ttype(s2)}", s)

    def matmul(self):
        if self.dims is MMA_DIMS and self.rng.random() < 0.5:
            # A tile-aligned product: what the tensor-core tiers take whole.
            m, k, n = (self.rng.choice([64, 128, 192]) for _ in range(3))
            x = self.argument([m, k])
            w = self.argument([k, n])
            return self.emit(f"tessera_graph.matmul {x}, {w} : {ttype([m, k])}, {ttype([k, n])} -> {ttype([m, n])}",
                             [m, n])
        v = self.pick(lambda t: len(t) == 2 and t[1] <= 100)
        if not v:
            return None
        x, (m, k) = v
        n = self.dim()
        w = self.pick(lambda t: t == [k, n])
        w = w[0] if w else self.argument([k, n])
        return self.emit(f"tessera_graph.matmul {x}, {w} : {ttype([m, k])}, {ttype([k, n])} -> {ttype([m, n])}",
                         [m, n])

    def batched_matmul(self):
        v = self.pick(lambda t: len(t) == 3 and t[2] <= 100)
        if not v:
            return None
        x, (b, m, k) = v
        n = self.dim()
        w = self.pick(lambda t: t == [b, k, n])
        w = w[0] if w else self.argument([b, k, n])
        return self.emit(f"tessera_graph.matmul {x}, {w} : {ttype([b, m, k])}, {ttype([b, k, n])} -> "
                         f"{ttype([b, m, n])}", [b, m, n])

    def transpose(self):
        v = self.pick(lambda t: len(t) in (2, 3))
        if not v:
            return None
        x, s = v
        perm = list(range(len(s)))
        while perm == list(range(len(s))):
            self.rng.shuffle(perm)
        r = [s[p] for p in perm]
        return self.emit(f"tessera_graph.transpose {x} perm = {perm} : {ttype(s)} -> {ttype(r)}", r)

    def reshape(self):
        v = self.pick(lambda t: len(t) in (2, 3))
        if not v:
            return None
        x, s = v
        n = numel(s)
        if len(s) == 3 or self.rng.random() < 0.4:
            divs = [d for d in range(1, n + 1) if n % d == 0]
            a = self.rng.choice(divs)
            r = [a, n // a]
        else:  # split the last dim
            divs = [d for d in range(2, s[1]) if s[1] % d == 0]
            if not divs:
                return None
            b = self.rng.choice(divs)
            r = [s[0], s[1] // b, b]
        return self.emit(f"tessera_graph.reshape {x} : {ttype(s)} -> {ttype(r)}", r)

    def slice(self):
        x, s = self.pick(lambda t: len(t) >= 1)
        offs, strides, r = [], [], []
        for d in s:
            st = self.rng.choice([1, 1, 1, 2])
            size = self.rng.randint(1, max(1, (d + st - 1) // st))
            span = (size - 1) * st + 1
            off = self.rng.randint(0, d - span)
            offs.append(off)
            strides.append(st)
            r.append(size)
        return self.emit(f"tessera_graph.slice {x} offsets = {offs} strides = {strides} : {ttype(s)} -> {ttype(r)}",
                         r)

    def pad(self):
        x, s = self.pick(lambda t: len(t) >= 1)
        lo = [self.rng.choice([0, 0, 1, 2]) for _ in s]
        hi = [self.rng.choice([0, 0, 1, 3]) for _ in s]
        r = [d + a + b for d, a, b in zip(s, lo, hi)]
        if numel(r) > MAX_ELEMENTS:
            return None
        val = self.rng.choice(["0.0", "1.5", "-2.0"])
        return self.emit(f"tessera_graph.pad {x} low = {lo} high = {hi} value = {val} : {ttype(s)} -> {ttype(r)}", r)

    def concat(self):
        x, s = self.pick(lambda t: len(t) == 2)
        dim = self.rng.randrange(2)
        other = self.pick(lambda t: len(t) == 2 and t[1 - dim] == s[1 - dim])
        if other is None:
            ys = list(s)
            ys[dim] = self.dim()
            y = self.argument(ys)
        else:
            y, ys = other
        r = list(s)
        r[dim] = s[dim] + ys[dim]
        if numel(r) > MAX_ELEMENTS:
            return None
        return self.emit(f"tessera_graph.concat {x}, {y} dim = {dim} : {ttype(s)}, {ttype(ys)} -> {ttype(r)}", r)

    def broadcast(self):
        x, s = self.pick(lambda t: len(t) == 1)
        m = self.dim()
        if self.rng.random() < 0.5:
            r, dims = [m, s[0]], [1]
        else:
            r, dims = [s[0], m], [0]
        return self.emit(f"tessera_graph.broadcast_in_dim {x} dims = {dims} : {ttype(s)} -> {ttype(r)}", r)

    def reduce(self):
        v = self.pick(lambda t: len(t) in (2, 3))
        if not v:
            return None
        x, s = v
        kind = self.rng.choice(["sum", "max", "min", "mean"])
        dims = sorted(self.rng.sample(range(len(s)), self.rng.randint(1, len(s) - 1)))
        keep = self.rng.random() < 0.5
        r = [1 if k in dims else n for k, n in enumerate(s)] if keep else [n for k, n in enumerate(s) if k not in dims]
        order = self.rng.choice(["pairwise", "sequential"])
        return self.emit(f"tessera_graph.reduce {kind} {x} dims = {dims} order = {order} : {ttype(s)} -> {ttype(r)}",
                         r)

    def gather(self):
        # An embedding lookup: a table argument, indices from iota (some past
        # the table's end: gather clamps them).
        n, rows, width = self.dim(), self.dim(), self.dim()
        table = self.argument([rows, width])
        idx = self.fresh()
        self.lines.append(f"  {idx} = tessera_graph.iota dim = 0 : {ttype([n], 'i32')}")
        return self.emit(f"tessera_graph.gather {table}, {idx} : {ttype([rows, width])}, {ttype([n], 'i32')} -> "
                         f"{ttype([n, width])}", [n, width])

    def softmax(self):
        x, s = self.pick(lambda t: len(t) >= 1)
        d = self.rng.randrange(len(s))
        return self.emit(f"tessera_graph.softmax {x} dim = {d} : {ttype(s)}", s)

    def layernorm(self):
        v = self.pick(lambda t: len(t) == 2 and t[1] >= 2)
        if not v:
            return None
        x, s = v
        g = self.argument([s[1]])
        b = self.argument([s[1]])
        return self.emit(f"tessera_graph.layernorm {x}, {g}, {b} : {ttype(s)}, {ttype([s[1]])}, {ttype([s[1]])}", s)

    def select(self):
        x, s = self.pick()
        y = self.pick(lambda t: t == s)
        y = y[0] if y else self.argument(s)
        pred = self.rng.choice(["lt", "le", "gt", "ge"])
        c = self.fresh()
        self.lines.append(f"  {c} = tessera_graph.compare {pred} {x}, {y} : {ttype(s)}, {ttype(s)} -> {ttype(s, 'i1')}")
        a, b = (x, y) if self.rng.random() < 0.5 else (y, x)
        return self.emit(f"tessera_graph.select {c}, {a}, {b} : {ttype(s, 'i1')}, {ttype(s)}, {ttype(s)}", s)

    def attention(self):
        """softmax(scale * Q K^T [+ a causal mask]) V, one matrix or heads:
        what graph-to-schedule turns into flash_attention (the lanes' kernel
        for f32, the warpgroup kernel for bf16 / f16 with mma=wgmma) when
        the form and shapes allow, the unfused ops otherwise."""
        rng = self.rng
        if self.dims is MMA_DIMS:
            sq, skv = rng.choice([64, 128, 192, 256]), rng.choice([64, 128, 136, 256])
            d, dv = rng.choice([64, 64, 128, 48]), rng.choice([64, 128, 192])
        else:
            sq, skv, d, dv = (rng.choice([1, 3, 8, 17, 33, 64, 65, 100]) for _ in range(4))
        causal = rng.random() < 0.5
        if causal:
            skv = sq
        heads = [rng.choice([2, 3])] if rng.random() < 0.4 else []
        q = self.argument(heads + [sq, d])
        kt = self.argument(heads + [d, skv])
        v = self.argument(heads + [skv, dv])
        st = heads + [sq, skv]
        # The intermediates are not offered to later ops (a second use
        # would keep the chain unfused): only the output is.
        def inner(text):
            name = self.fresh()
            self.lines.append(f"  {name} = {text}")
            return name

        scores = inner(f"tessera_graph.matmul {q}, {kt} : {ttype(heads + [sq, d])}, {ttype(heads + [d, skv])} -> "
                           f"{ttype(st)}")
        if rng.random() < 0.7:
            c = self.fresh()
            self.lines.append(f"  {c} = arith.constant dense<{rng.choice([0.125, 0.25, 0.5])}> : {ttype(st)}")
            scores = inner(f"tessera_graph.{rng.choice(['mul', 'div'])} {scores}, {c} : {ttype(st)}, {ttype(st)}")
        if causal:
            ms = [sq, skv]
            qi, ki = self.fresh(), self.fresh()
            if rng.random() < 0.5:
                # keep = key <= query on i32 iotas; the scores or -inf.
                self.lines.append(f"  {qi} = tessera_graph.iota dim = 0 : {ttype(ms, 'i32')}")
                self.lines.append(f"  {ki} = tessera_graph.iota dim = 1 : {ttype(ms, 'i32')}")
                keep, ninf = self.fresh(), self.fresh()
                self.lines.append(f"  {keep} = tessera_graph.compare le {ki}, {qi} : {ttype(ms, 'i32')}, "
                                  f"{ttype(ms, 'i32')} -> {ttype(ms, 'i1')}")
                neg = {"f32": "0xFF800000", "bf16": "0xFF80", "f16": "0xFC00"}[ELEM]
                self.lines.append(f"  {ninf} = arith.constant dense<{neg}> : {ttype([])}")
                scores = inner(f"tessera_graph.select {keep}, {scores}, {ninf} : {ttype(ms, 'i1')}, {ttype(st)}, "
                               f"{ttype([])}")
            else:
                # The decoder's additive form: min(relu(key - query), 1) * big.
                self.lines.append(f"  {qi} = tessera_graph.iota dim = 0 : {ttype(ms)}")
                self.lines.append(f"  {ki} = tessera_graph.iota dim = 1 : {ttype(ms)}")
                dd, above, one, m, big, mask = (self.fresh() for _ in range(6))
                self.lines.append(f"  {dd} = tessera_graph.sub {ki}, {qi} : {ttype(ms)}, {ttype(ms)}")
                self.lines.append(f"  {above} = tessera_graph.relu {dd} : {ttype(ms)}")
                self.lines.append(f"  {one} = arith.constant dense<1.0> : {ttype(ms)}")
                self.lines.append(f"  {m} = tessera_graph.min {above}, {one} : {ttype(ms)}, {ttype(ms)}")
                # (f16 holds at most 65504: -1e4 is still taken as -inf.)
                self.lines.append(f"  {big} = arith.constant dense<{'-1.0e4' if ELEM == 'f16' else '-1.0e9'}> : "
                                  f"{ttype(ms)}")
                self.lines.append(f"  {mask} = tessera_graph.mul {m}, {big} : {ttype(ms)}, {ttype(ms)}")
                scores = inner(f"tessera_graph.add {scores}, {mask} : {ttype(st)}, {ttype(ms)}")
        p = inner(f"tessera_graph.softmax {scores} dim = {len(st) - 1} : {ttype(st)}")
        return self.emit(f"tessera_graph.matmul {p}, {v} : {ttype(st)}, {ttype(heads + [skv, dv])} -> "
                         f"{ttype(heads + [sq, dv])}", heads + [sq, dv])

    def constant(self):
        s = [self.dim(), self.dim()] if self.rng.random() < 0.7 else [self.dim()]
        if self.rng.random() < 0.5:
            return self.emit(f"arith.constant dense<{self.rng.choice([0.25, -0.5, 1.0, 3.0])}> : {ttype(s)}", s)
        d = self.rng.randrange(len(s))
        return self.emit(f"tessera_graph.iota dim = {d} : {ttype(s)}", s)

    OPS = [("unary", 3), ("binary", 4), ("matmul", 3), ("batched_matmul", 1), ("transpose", 2), ("reshape", 1), ("slice", 2),
           ("pad", 1), ("concat", 1), ("broadcast", 1), ("reduce", 2), ("softmax", 1), ("layernorm", 1),
           ("select", 1), ("constant", 1), ("gather", 1), ("attention", 1)]

    def build(self):
        for _ in range(self.rng.randint(1, 3)):
            self.argument([self.dim(), self.dim()] if self.rng.random() < 0.8 else [self.dim()])
        names = [n for n, w in self.OPS for _ in range(w)]
        for _ in range(self.rng.randint(2, 16)):
            for _attempt in range(10):
                op = self.rng.choice(names)
                before = len(self.values)
                try:
                    made = getattr(self, op)()
                except (TypeError, ValueError):  # nothing fits: try another op
                    made = None
                if made is not None and numel(self.values[-1][1]) <= MAX_ELEMENTS:
                    break
                # Undo a value over the size limit (its line stays out).
                if made is not None:
                    self.values.pop()
                    self.lines.pop()
                del self.values[before:]
        # Results: the last value, and up to two others of any shape (a
        # function whose results have different row counts).
        made = [v for v in self.values if not v[0].startswith("%a")]
        if not made:
            made = [self.unary_of(self.values[0])]
        results = [made[-1]]
        if self.dims is MMA_DIMS:
            # Every value nothing reads (up to 6), so that no matmul is dead
            # code: these programs are for the tensor-core tiers.
            text = "\n".join(self.lines)
            sinks = [v for v in made[:-1] if not re.search(re.escape(v[0]) + r"\b(?!\s*=)", text)]
            mm = [v for v in sinks if re.search(re.escape(v[0]) + r" = tessera_graph\.matmul", text)]
            results += (mm + [v for v in sinks if v not in mm])[:7]
        else:
            for v in self.rng.sample(made[:-1], min(len(made) - 1, self.rng.randint(0, 3))):
                results.append(v)
        return self.text(results)

    def unary_of(self, v):
        x, s = v
        return (self.emit(f"tessera_graph.relu {x} : {ttype(s)}", s), s)

    def text(self, results, arg_attrs=None, result_attrs=None, fn_attrs=""):
        self.results = results
        arg_attrs = arg_attrs or [""] * len(self.args)
        result_attrs = result_attrs or [""] * len(results)
        args = ", ".join(f"{n}: {ttype(s)}{a}" for (n, s), a in zip(self.args, arg_attrs))
        rtypes = ", ".join(ttype(s) for _, s in results)
        rdecl = ", ".join(ttype(s) + a for (_, s), a in zip(results, result_attrs))
        body = "\n".join(self.lines)
        rets = ", ".join(n for n, _ in results)
        return (f"func.func @random({args}) -> ({rdecl}){fn_attrs} {{\n{body}\n"
                f"  return {rets} : {rtypes}\n}}\n")

    def sharded(self, rng):
        """The same function in the global view over a random mesh, with a
        random sharding (dims split over axes that divide them) on every
        argument and result: what --tessera-shard-propagation must make
        SPMD with the single-device program's results."""
        axes, shape = rng.choice([(["tp"], [2]), (["dp", "tp"], [2, 2]), (["dp"], [4])])
        size = dict(zip(axes, shape))

        def shard(s, force=False):
            # Per dim: "", one axis, or (on the 2 x 2 mesh) both axes in
            # either order: a dim split over several axes.
            dims, used = [], set()
            for d in s:
                fits = [(a,) for a in axes if a not in used and d % size[a] == 0]
                fits += [(a, b) for a in axes for b in axes
                         if a != b and not {a, b} & used and d % (size[a] * size[b]) == 0]
                a = rng.choice(fits) if fits and (force or rng.random() < 0.6) else ()
                used.update(a)
                dims.append(a)
            if not any(dims):
                return ""
            quoted = ", ".join(f'"{a[0]}"' if len(a) == 1 else "[" + ", ".join(f'"{x}"' for x in a) + "]"
                               if a else '""' for a in dims)
            return (f" {{tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [{quoted}], "
                    f"replicate = [], reduce = []>}}")

        mesh = "tessera_graph.mesh @mesh axes = [" + ", ".join(f'"{a}"' for a in axes) + \
               "] shape = [" + ", ".join(str(n) for n in shape) + "]\n"
        arg_attrs = [shard(s) for _, s in self.args]
        result_attrs = [shard(s) for _, s in self.results]
        if not any(arg_attrs + result_attrs):  # split the first that can be
            for attrs, values in ((arg_attrs, self.args), (result_attrs, self.results)):
                for k, (_, s) in enumerate(values):
                    if not any(attrs) and not any(arg_attrs + result_attrs):
                        attrs[k] = shard(s, force=True)
        if not any(arg_attrs + result_attrs):
            return None  # no dim divides over the mesh
        return mesh + self.text(self.results, arg_attrs, result_attrs, " attributes {tessera.global_view}")


# cpu schedules (--schedule) a program may get: small tiles make remainders
# and several groups likely at these sizes; fusion and row stages off
# compare the other code paths on the same program.
CPU_SCHEDULES = ["", "", "tile-m=12 tile-n=32 tile-k=16 micro-m=6 micro-n=16",
                 "tile-m=8 tile-n=64 micro-m=4 micro-n=32", "micro-m=4 micro-n=8", "fuse=0", "row-stages=0",
                 "fuse-reductions=0", "row-tile=3"]


def generate(seed, i):
    return Program(random.Random(seed * 100003 + i), DIMS if ELEM == "f32" else MMA_DIMS).build()


def generate_spmd(seed, i):
    """(single-device text, global-view text, argument shapes, result count)."""
    p = Program(random.Random(seed * 100003 + i), SPMD_DIMS)
    single = p.build()
    return single, p.sharded(random.Random(seed * 100003 + i + 11)), [s for _, s in p.args], len(p.results)


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % \
        "".join(f"{d}, " for d in shape).rstrip(" ")
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}f", *values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode()
    if "'<f4'" not in header:
        raise ValueError(f"{path}: not f32: {header}")
    body = data[10 + n:]
    return list(struct.unpack(f"<{len(body) // 4}f", body))


def run_spmd(args, run, folder, i):
    """The global-view program over its mesh against the single-device one
    on the same inputs: (ok, report)."""
    single, spmd, shapes, nres = generate_spmd(args.seed, i)
    if spmd is None:
        return None, "no dim of an argument or result divides over the mesh"
    base = os.path.join(folder, f"random_s{args.seed}_{i}")
    paths = {"single": base + ".mlir", "spmd": base + "_spmd.mlir"}
    for k, text in (("single", single), ("spmd", spmd)):
        with open(paths[k], "w") as f:
            f.write(f"// tests/random_programs.py --spmd --seed {args.seed} --only {i}\n{text}")
    rng = random.Random(args.seed * 7919 + i)
    inputs = []
    for k, s in enumerate(shapes):
        inputs += ["--input", f"{base}_in{k}.npy"]
        write_npy(f"{base}_in{k}.npy", s, [rng.uniform(-1, 1) for _ in range(numel(s))])
    outs, report = {}, ""
    for k in ("single", "spmd"):
        files = [f"{base}_{k}_out{r}.npy" for r in range(nres)]
        cmd = [run, paths[k], "--iterations", "1", "--warmup", "0"] + inputs
        for f in files:
            cmd += ["--output", f]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=args.timeout)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = f"(timed out after {args.timeout} s)", -1
        report += f"--- {' '.join(cmd)}\n{out[-2000:]}\n"
        if rc != 0:
            return False, report
        outs[k] = [read_npy(f) for f in files]
    for r, (a, b) in enumerate(zip(outs["single"], outs["spmd"])):
        scale = max([1.0] + [abs(x) for x in a])
        worst = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
        if len(a) != len(b) or not worst <= 2e-3 * scale:
            return False, report + f"result {r}: max abs difference {worst} (scale {scale}), sizes {len(a)} {len(b)}\n"
    return True, report


def schedule(seed, i):
    return random.Random(seed * 100003 + i + 7).choice(CPU_SCHEDULES)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the folder with tessera-run")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", type=int, default=None, help="run program i of the seed only")
    ap.add_argument("--print", action="store_true", help="print the programs, run nothing")
    ap.add_argument("--keep", default=None, help="write every program to this folder")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per program")
    ap.add_argument("--compile", default=None, metavar="TARGET",
                    help="only compile each program for TARGET with tessera-compile (cuda:sm_90a, hip:gfx90a, "
                         "level_zero: targets that cannot run here; the vendors' assemblers check the code)")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                    help="element type of the tensors (bf16 and f16 matmuls take the tensor-core tiers: "
                         "wgmma on sm_90a, mma.sync on sm_80, MFMA on gfx90a)")
    ap.add_argument("--spmd", action="store_true",
                    help="run each program in the global view over a random mesh with random shardings "
                         "against the single-device program on the same inputs")
    args = ap.parse_args()
    global ELEM
    ELEM = args.dtype
    if args.spmd and args.dtype != "f32":
        ap.error("--spmd writes f32 inputs: use --dtype f32")

    indices = [args.only] if args.only is not None else list(range(args.count))
    if args.print:
        for i in indices:
            text = generate_spmd(args.seed, i)[1] if args.spmd else generate(args.seed, i)
            print(f"// seed {args.seed} program {i}\n{text}")
        return 0
    folder = args.keep or tempfile.mkdtemp(prefix="tessera-random-")
    os.makedirs(folder, exist_ok=True)
    run = os.path.join(args.bin, "tessera-run")
    failures = []
    skipped = 0
    start = time.time()
    for i in indices:
        if args.spmd:
            ok, report = run_spmd(args, run, folder, i)
            path = os.path.join(folder, f"random_s{args.seed}_{i}_spmd.mlir")
            if ok is None:
                print(f"program {i}: skipped ({report})", flush=True)
                skipped += 1
                continue
            print(f"program {i}: {'PASS' if ok else 'FAIL'} ({path})", flush=True)
            if not ok:
                failures.append((i, path, 1, report))
            continue
        path = os.path.join(folder, f"random_s{args.seed}_{i}.mlir")
        with open(path, "w") as f:
            f.write(f"// tests/random_programs.py --seed {args.seed} --only {i}\n{generate(args.seed, i)}")
        cmd = [run, path, "--iterations", "1", "--warmup", "0"]
        if args.compile:
            cmd = [os.path.join(args.bin, "tessera-compile"), "--target", args.compile, path, "-o", path + ".tsp"]
        elif os.environ.get("TESSERA_BACKEND", "cpu") == "cpu" and schedule(args.seed, i):
            cmd += ["--schedule", schedule(args.seed, i)]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), -1
            out += f"\n(timed out after {args.timeout} s)"
        ok = rc == 0 and (args.compile or ("verify:" in out and ": PASS" in out and ": FAIL" not in out))
        print(f"program {i}: {'PASS' if ok else 'FAIL'} ({path}{' --schedule ' + repr(cmd[-1]) if '--schedule' in cmd else ''})",
              flush=True)
        if not ok:
            failures.append((i, path, rc, out))
    for i, path, rc, out in failures:
        print(f"\n=== program {i} failed (exit {rc}): {path}\n{open(path).read()}\n--- tessera-run:\n{out[-3000:]}")
    print(f"\n{len(indices) - len(failures) - skipped} of {len(indices) - skipped} programs "
          f"{'compiled' if args.compile else 'verified'} "
          f"({skipped} skipped) "
          f"(seed {args.seed}, {'target ' + args.compile if args.compile else 'backend ' + os.environ.get('TESSERA_BACKEND', 'default')}, "
          f"{time.time() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
