"""tessera.compile(): a Tessera program (.mlir text or file, or a compiled
.tsp) as a Python callable on numpy arrays, built on tessera::Program."""
import os

import numpy as np

from . import _tessera
from . import _runtime
from .errors import InvalidArgumentError
from .memory import Array, asarray, empty

# Element types as MLIR spells them -> numpy.  numpy has no bfloat16 and no
# fp8: those travel as their raw bits (uint16, uint8).
DTYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.uint16,
    "f8E4M3FN": np.uint8, "f8E5M2": np.uint8, "i64": np.int64, "i32": np.int32, "i16": np.int16,
    "i8": np.int8, "ui8": np.uint8, "i1": np.bool_, "index": np.int64,
}


def to_bf16_bits(values):
    """Float values rounded to bfloat16 (to nearest, ties to even; NaN stays
    NaN), as the uint16 bits a bf16 parameter takes."""
    x = np.asarray(values)
    if x.dtype.kind != "f" or x.dtype.itemsize > 4:
        # Wider than float32 (Python floats too): to float32 rounding to odd,
        # so the rounding to bf16 below is the only one (rounding to nearest
        # twice is off by one ulp when the first lands on a tie: 1 + 2^-8 +
        # 2^-30 became 1.0).
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            near = x.astype(np.float32)
            toward_zero = np.where(np.abs(near.astype(np.float64)) > np.abs(x),
                                   np.nextafter(near, np.float32(0)), near)
            inexact = (toward_zero.astype(np.float64) != x) & np.isfinite(x)
            odd = np.ascontiguousarray(toward_zero).view(np.uint32) | inexact.astype(np.uint32)
        a = np.where(np.isnan(x), np.float32("nan"), odd.view(np.float32))
    else:
        a = x.astype(np.float32)
    bits = np.ascontiguousarray(a).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet_nan = (bits >> np.uint32(16)) | np.uint32(0x40)
    return np.where(np.isnan(a), quiet_nan, rounded).astype(np.uint16)


def from_bf16_bits(bits):
    """bfloat16 values given as their uint16 bits (a bf16 result), as float32."""
    b = np.asarray(bits)
    if b.dtype != np.uint16:
        raise InvalidArgumentError("from_bf16_bits takes the uint16 bits of bfloat16 values; got %s" % b.dtype)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


# Element types that travel as raw bits, and how to make those bits.
_RAW_BITS = {
    "bf16": "numpy has no bfloat16: pass floats (rounded to bf16 for you) or the raw bits as uint16 "
            "(tessera.to_bf16_bits)",
    "f8E4M3FN": "numpy has no float8: pass the raw bits as uint8",
    "f8E5M2": "numpy has no float8: pass the raw bits as uint8",
}


def check_grid(grid):
    """A launch grid as a list of 1 to 3 ints (None or () for the program's own)."""
    if grid is None:
        return []
    dims = grid if isinstance(grid, (tuple, list)) else (grid,)
    out = []
    for d in dims:
        v = _runtime.int_or_none(d)
        if v is None or not 1 <= v <= 0xFFFFFFFF:
            raise InvalidArgumentError("grid=%r: every dimension is an int, a number of groups in 1..4294967295"
                                       % (grid,))
        out.append(v)
    if len(out) > 3:
        raise InvalidArgumentError("grid=%r: a grid has at most 3 dimensions" % (grid,))
    return out


def numpy_dtype(dtype):
    """The numpy dtype of a program's element type ("f32" -> float32)."""
    if dtype not in DTYPES:
        raise InvalidArgumentError("element type %s has no numpy dtype" % dtype)
    return np.dtype(DTYPES[dtype])


def _is_path(source):
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str):
        raise TypeError("compile() takes a path or the program's text, not %s" % type(source).__name__)
    # Text has lines or braces; a path has neither.
    return "\n" not in source and "{" not in source


def _check_cast_kept_values(p, a, cast):
    """An argument converted to its parameter's type must keep its values, as
    a scalar argument must: integers that do not fit would wrap (1000 as an
    i8 became -24) and finite floats beyond the type's range would become
    inf, silently."""
    if a.size == 0 or np.can_cast(a.dtype, cast.dtype, "safe"):
        return
    if cast.dtype.kind == "f" and np.isfinite(cast).all():
        return  # the common case: nothing overflowed
    if cast.dtype.kind in "iu" and a.dtype.kind in "iub":
        info = np.iinfo(cast.dtype)
        lo, hi = int(a.min()), int(a.max())
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise InvalidArgumentError(
                "argument %s is %s, which holds %d..%d; it has the value %d (of %s): convert it "
                "yourself if wrapping is meant" % (p["name"], p["dtype"], info.min, info.max, bad, a.dtype))
    elif cast.dtype.kind == "f" and a.dtype.kind in "fiub":
        # floats, and integers too (70000 for an f16 became inf)
        overflow = np.isinf(cast) & (np.isfinite(a) if a.dtype.kind == "f" else True)
        if overflow.any():
            raise InvalidArgumentError(
                "argument %s is %s; its value %r (of %s) is beyond that type's range and would "
                "become inf" % (p["name"], p["dtype"], a[overflow].flat[0].item(), a.dtype))


class CompiledProgram:
    """A compiled program: call it with numpy arrays (or tessera Arrays) for
    its inputs; it returns its results as numpy arrays (a tuple when there
    are several).  An SPMD program takes and returns *global* arrays, cut
    and assembled by the arguments' shardings (docs/spmd.md)."""

    def __init__(self, program, mesh=None):
        self.program = program
        self.mesh = mesh
        self.params = program.params
        self.devices = list(program.devices)
        self.last_replica_difference = 0.0

    # ------------------------------------------------------------ description
    @property
    def spmd(self):
        return len(self.devices) > 1 or bool(self.program.mesh_axes)

    @property
    def inputs(self):
        """The parameters a call takes, in order."""
        return [p for p in self.params if p["role"] != "output"]

    @property
    def outputs(self):
        """The parameters a call returns: the results of a Graph IR function;
        the buffers of a Tile IR kernel (read and written)."""
        return [p for p in self.params if p["role"] in ("output", "inout")]

    @property
    def in_specs(self):
        from .dist import ShardSpec
        return [ShardSpec._of_param(p) for p in self.inputs]

    @property
    def out_specs(self):
        from .dist import ShardSpec
        return [ShardSpec._of_param(p) for p in self.outputs]

    def __repr__(self):
        def one(p):
            return "%s: %s[%s]" % (p["name"], p["dtype"], "x".join("?" if d is None else str(d) for d in p["global_shape"]))
        return "<tessera.CompiledProgram %s(%s) -> (%s) on %d %s device(s)>" % (
            self.program.function, ", ".join(one(p) for p in self.inputs),
            ", ".join(one(p) for p in self.outputs), len(self.devices), self.devices[0].backend)

    def save(self, path):
        """Writes the compiled program (a .tsp file; tessera.compile and
        tessera-run load it)."""
        self.program.save(_runtime.path_bytes(path, "CompiledProgram.save: the path"))

    # ---------------------------------------------------------------- running
    def _host_input(self, p, value, shape_key):
        want = numpy_dtype(p["dtype"])
        a = np.asarray(value)
        if p["dtype"] == "bf16" and a.dtype.kind == "f":
            a = to_bf16_bits(a)
        if a.dtype != want:
            if p["dtype"] in _RAW_BITS or not np.can_cast(a.dtype, want, "same_kind"):
                why = _RAW_BITS.get(p["dtype"], "numpy %s" % want)
                raise InvalidArgumentError("argument %s is %s (%s); got %s" % (p["name"], p["dtype"], why, a.dtype))
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                cast = a.astype(want)
            _check_cast_kept_values(p, a, cast)
            a = cast
        if not _shape_matches(a.shape, p[shape_key]):
            raise InvalidArgumentError("argument %s: shape %s expected, got %s" % (
                p["name"], tuple(p[shape_key]), tuple(a.shape)))
        return np.ascontiguousarray(a)

    def __call__(self, *args, grid=None):
        inputs = self.inputs
        if len(args) != len(inputs):
            raise InvalidArgumentError("%s takes %d argument(s) (%s), %d given" % (
                self.program.function, len(inputs), ", ".join(p["name"] for p in inputs), len(args)))
        given = dict(zip((p["name"] for p in inputs), args))
        if self.spmd:
            return self._call_spmd(given, grid)
        dev = self.devices[0]
        run_args = []
        for p in self.params:
            if p["role"] == "scalar":
                run_args.append(given[p["name"]])
            elif p["role"] == "output":
                run_args.append(empty(p["shape"], numpy_dtype(p["dtype"]), dev))
            else:
                v = given[p["name"]]
                if (isinstance(v, Array) and p["role"] == "input" and v.device == dev
                        and v.dtype == numpy_dtype(p["dtype"]) and _shape_matches(v.shape, p["shape"])):
                    run_args.append(v)  # used in place
                else:
                    host = v.numpy() if isinstance(v, Array) else v
                    run_args.append(asarray(self._host_input(p, host, "shape"), device=dev))
        s = _tessera.Stream.default(dev)
        self.program.run([s], [run_args], check_grid(grid))
        s.synchronize()
        results = [a.numpy() for p, a in zip(self.params, run_args) if p["role"] in ("output", "inout")]
        return results[0] if len(results) == 1 else tuple(results)

    def _call_spmd(self, given, grid):
        n = len(self.devices)
        per_device = [[] for _ in range(n)]
        for i, p in enumerate(self.params):
            if p["role"] == "scalar":
                for d in range(n):
                    per_device[d].append(given[p["name"]])
                continue
            dtype = numpy_dtype(p["dtype"])
            if p["role"] == "output":
                for d in range(n):
                    per_device[d].append(empty(p["shape"], dtype, self.devices[d]))
                continue
            v = given[p["name"]]
            host = self._host_input(p, v.numpy() if isinstance(v, Array) else v, "global_shape")
            locals_ = self.program.scatter_global(i, host.tobytes())
            for d in range(n):
                local = np.frombuffer(locals_[d], dtype=dtype).reshape(p["shape"])
                per_device[d].append(asarray(local, device=self.devices[d]))
        streams = [_tessera.Stream.default(d) for d in self.devices]
        self.program.run(streams, per_device, check_grid(grid))
        for s in streams:
            s.synchronize()
        results, worst = [], 0.0
        for i, p in enumerate(self.params):
            if p["role"] not in ("output", "inout"):
                continue
            global_bytes, difference = self.program.gather_global(i, [per_device[d][i].numpy().tobytes()
                                                                      for d in range(n)])
            worst = max(worst, difference)
            results.append(np.frombuffer(global_bytes, dtype=numpy_dtype(p["dtype"]))
                           .reshape(p["global_shape"]).copy())
        # Devices that should hold copies and differ mean a wrong sharding.
        self.last_replica_difference = worst
        return results[0] if len(results) == 1 else tuple(results)

    def enqueue(self, *args, stream, grid=None):
        """Queues one run on `stream` and returns at once (a program on one
        device).  Takes every parameter in order, outputs included: Arrays on
        the stream's device for buffers, numbers for scalars.  Works inside
        graph.capture()."""
        if self.spmd:
            raise InvalidArgumentError("enqueue runs a program of one device; %s runs on %d" % (
                self.program.function, len(self.devices)))
        if not isinstance(stream, _tessera.Stream):
            raise TypeError("enqueue: stream must be a tessera.Stream, not %s" % type(stream).__name__)
        self.program.run([stream], [list(args)], check_grid(grid))
        # The program (its executables) lives as long as the queued run, and
        # as long as a graph capturing it: a program made in a helper and
        # dropped after the capture made every replay fail.
        stream._keep(self)


def _shape_matches(got, want):
    """Whether an array's shape fits a parameter's (None: a dynamic dim, any extent)."""
    return len(got) == len(want) and all(w is None or w == g for w, g in zip(want, got))


def _dim_axes_of(spec, what):
    """A dist.ShardSpec (or None) as per-dim lists of axis names."""
    from .dist import ShardSpec
    if spec is None:
        return []
    if not isinstance(spec, ShardSpec):
        raise InvalidArgumentError("%s: a dist.ShardSpec or None per argument, not %r" % (what, spec))
    if spec.reduce:
        raise InvalidArgumentError("%s: %r holds partial sums; a sharding given at compile time splits or "
                                   "replicates" % (what, spec))
    return [[] if d is None else [d] if isinstance(d, str) else list(d) for d in spec.dims]


def compile(source, device=None, mesh=None, function=None, schedule=None, in_specs=None, out_specs=None,
            overlap_chunks=0, in_shardings=None, out_shardings=None):
    """Compiles a Tessera program for a device (or a mesh) and loads it.

    source: a path (str or os.PathLike; a .mlir, or a .tsp compiled ahead
    of time) or the program's text (a str with a newline or a brace).
    device: a Device, an ordinal, "backend[:ordinal]" or None (the default
    device).  mesh: a dist.Mesh for an SPMD program; without one, an SPMD
    program gets the first devices of the device's backend.  function: the
    function or kernel to run when the module has several.  schedule:
    --tessera-graph-to-schedule options ("tile-m=64").  in_specs /
    out_specs: the shardings the caller expects (dist.ShardSpec per input /
    output), checked against the program's.  overlap_chunks: an SPMD
    program's stage and its all_reduce pipelined in that many row blocks,
    each block's all_reduce on a communication stream while the next
    computes (docs/spmd.md, "Overlap"); the same results, bit for bit.
    in_shardings / out_shardings: place a program written on global tensors
    (one that declares no shardings) on `mesh`, as jax.jit does: a
    dist.ShardSpec (or None: replicated) per input / output; the compiler
    decides every intermediate (docs/spmd.md, "Shardings given at compile
    time").
    """
    is_path = _is_path(source)
    text = os.fspath(source) if is_path else source
    if isinstance(text, (str, bytes)) and not text:
        raise InvalidArgumentError("compile(): the source is empty: give a path (a .mlir or .tsp file) or the "
                                   "program's text")
    if "\0" in text:
        raise InvalidArgumentError("compile(): the %s holds a NUL character" % ("path" if is_path else "program text"))
    if is_path:
        text = _runtime.path_bytes(text, "compile(): the path")
    else:
        _runtime.check_text(text, "compile(): the program text")
    _runtime.check_str(function, "compile(): function")
    _runtime.check_str(schedule, "compile(): schedule")
    from .dist import check_mesh
    check_mesh(mesh, "compile()")
    if _runtime.int_or_none(overlap_chunks) is None or not 0 <= overlap_chunks < 2**31:
        raise InvalidArgumentError("overlap_chunks=%r: a number of row blocks >= 0 (0: no overlap)" % (overlap_chunks,))
    # Files are read once: the device count and the program come from the
    # same bytes, however the file changes meanwhile.
    image = None
    path = text
    if is_path and text.endswith(b".tsp"):
        image = _tessera.read_image(text)
    elif is_path and _tessera.has_compiler():
        text = _tessera.read_source(text)
    if mesh is not None:
        devices = list(mesh.devices)
    else:
        dev = _runtime.device(device)
        if image is not None:
            needed = image.devices
        else:
            needed = _tessera.devices_needed(text, is_path, function or "")
        if needed > 1:
            from .dist import _devices_for
            devices = _devices_for(needed, dev)
        else:
            devices = [dev]
    placed = in_shardings is not None or out_shardings is not None
    if placed and mesh is None:
        raise InvalidArgumentError("in_shardings / out_shardings place a program on a mesh: give mesh= too")
    if image is not None:
        if placed:
            raise InvalidArgumentError("%s is compiled already: in_shardings / out_shardings apply when compiling "
                                       "the .mlir" % os.fsdecode(path))
        program = _tessera.load_program_image(devices, image)
    elif placed:
        program = _tessera.compile_program(
            text, is_path, devices, function or "", schedule or "", "", int(overlap_chunks),
            list(zip(mesh.axis_names, mesh.shape)),
            [_dim_axes_of(s, "in_shardings") for s in (in_shardings or [])],
            [_dim_axes_of(s, "out_shardings") for s in (out_shardings or [])])
    else:
        program = _tessera.compile_program(text, is_path, devices, function or "", schedule or "", "",
                                           int(overlap_chunks))
    compiled = CompiledProgram(program, mesh)
    if mesh is not None and program.mesh_axes and (
            list(program.mesh_axes) != list(mesh.axis_names) or list(program.mesh_shape) != list(mesh.shape)):
        raise InvalidArgumentError("the program's mesh is %s %s; the mesh given is %s %s" % (
            list(program.mesh_axes), list(program.mesh_shape), list(mesh.axis_names), list(mesh.shape)))
    for name, want, have in (("in_specs", in_specs, compiled.in_specs), ("out_specs", out_specs, compiled.out_specs)):
        if want is None:
            continue
        want = list(want)
        if len(want) != len(have) or any(w != h for w, h in zip(want, have)):
            raise InvalidArgumentError("%s %s do not match the program's shardings %s" % (name, want, have))
    return compiled
