#!/usr/bin/env python3
"""Runs the level_zero compiler's SPIR-V kernels on a CPU and checks them.

No Intel GPU is reachable here, and Debian 12's OpenCL implementations take
no SPIR-V (PoCL 3.1 has no IL version). PoCL does take SPIR 1.2 bitcode
(cl_khr_spir), and the Khronos translator (llvm-spirv-15 -r) turns an
OpenCL Kernel SPIR-V module into it: the module the level_zero plugin would
hand zeModuleCreate, with the same entry points, argument list, workgroup
size, barriers, atomics and Workgroup-storage variables. So each kernel is

    tessera-compile --target level_zero --emit spirv   (spirv-val checked)
    -> llvm-spirv-15 -r -> clCreateProgramWithBinary("-x spir") on PoCL
    -> clEnqueueNDRangeKernel(grid x group, group)

and every buffer it leaves is compared with the cpu plugin's run of the same
Tile IR on the same inputs (through the Python package), to the tolerance
tessera-run uses (relative to max(1, max |reference|)). What this checks:
the lowering's semantics (indexing, shared memory, barriers, atomics,
control flow), not Intel's driver or its subgroup sizes.

Kernels: every Tile IR kernel of examples/ (random inputs, the kernel's own
grid); every conformance Tile IR kernel (conformance/kernels/tile, filled
from tests/cts_kernel_params.txt, launched as its area launches it); every
kernel of the conformance suite's hand-written spirv-kernel module (checked
against the semantics its header states); and with --graph every kernel the
GPU pipeline makes of the Graph IR examples (random inputs).

Each PoCL run is a child process with a time limit: a kernel that writes out
of bounds or never ends fails its case, not the test.

    /usr/bin/python3 tests/spirv_kernels_on_pocl.py --bin build/bin --src . \\
        --python build/python [--only NAME] [--keep DIR]

Exit status: 0 every kernel matches; 1 a kernel failed or differs; 77 the
tools are missing (PoCL with cl_khr_spir: pocl-opencl-icd; llvm-spirv-15).
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

import numpy as np

SKIP = 77
CHILD_SECONDS = 120

# ----------------------------------------------------------------- OpenCL
# The few OpenCL 1.2 entry points the runs need, through ctypes (the ICD
# loader is dlopen'ed, as every vendor library is).
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_NAME = 0x102B
CL_DEVICE_EXTENSIONS = 0x1030
CL_PROGRAM_BUILD_LOG = 0x1183
CL_MEM_READ_WRITE = 1
CL_MEM_COPY_HOST_PTR = 1 << 5
CL_KERNEL_WORK_GROUP_SIZE = 0x11B0

vp = ctypes.c_void_p


class OpenCL:
    def __init__(self):
        self.lib = ctypes.CDLL("libOpenCL.so.1")
        lib = self.lib
        for name, restype in [("clCreateContext", vp), ("clCreateCommandQueue", vp),
                              ("clCreateProgramWithBinary", vp), ("clCreateKernel", vp),
                              ("clCreateBuffer", vp)]:
            getattr(lib, name).restype = restype

    def check(self, err, what):
        if err != 0:
            raise RuntimeError(f"{what} failed: OpenCL error {err}")

    def info_string(self, fn, obj, param, extra=()):
        size = ctypes.c_size_t()
        self.check(fn(vp(obj), *extra, ctypes.c_uint(param), ctypes.c_size_t(0), None, ctypes.byref(size)), fn.__name__)
        buf = ctypes.create_string_buffer(size.value + 1)
        self.check(fn(vp(obj), *extra, ctypes.c_uint(param), size, buf, None), fn.__name__)
        return buf.value.decode(errors="replace")

    def spir_device(self):
        """(device, name) of the first device with cl_khr_spir, or (None, why)."""
        n = ctypes.c_uint()
        if self.lib.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
            return None, "no OpenCL platform (install pocl-opencl-icd)"
        plats = (vp * n.value)()
        self.check(self.lib.clGetPlatformIDs(n.value, plats, None), "clGetPlatformIDs")
        seen = []
        for p in plats:
            m = ctypes.c_uint()
            if self.lib.clGetDeviceIDs(vp(p), ctypes.c_uint64(CL_DEVICE_TYPE_ALL), 0, None, ctypes.byref(m)) != 0:
                continue
            devs = (vp * m.value)()
            self.check(self.lib.clGetDeviceIDs(vp(p), ctypes.c_uint64(CL_DEVICE_TYPE_ALL), m.value, devs, None),
                       "clGetDeviceIDs")
            for d in devs:
                name = self.info_string(self.lib.clGetDeviceInfo, d, CL_DEVICE_NAME)
                if "cl_khr_spir" in self.info_string(self.lib.clGetDeviceInfo, d, CL_DEVICE_EXTENSIONS).split():
                    return d, name
                seen.append(name)
        return None, "no OpenCL device takes SPIR bitcode (cl_khr_spir): " + (", ".join(seen) or "none")


SCALAR_CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "i8": ctypes.c_int8,
                 "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64}


def run_child(spec_path, build_only):
    """The child: one kernel on PoCL; writes each buffer back to its .npy.
    build_only: build the program and launch it once (PoCL makes the
    work-group function at the first launch), leaving both in PoCL's kernel
    cache, and write nothing back."""
    with open(spec_path) as f:
        spec = json.load(f)
    ocl = OpenCL()
    lib = ocl.lib
    dev, name = ocl.spir_device()
    if dev is None:
        print(name)
        return SKIP
    err = ctypes.c_int()
    devs = (vp * 1)(dev)
    ctx = lib.clCreateContext(None, 1, devs, None, None, ctypes.byref(err))
    ocl.check(err.value, "clCreateContext")
    queue = lib.clCreateCommandQueue(vp(ctx), vp(dev), ctypes.c_uint64(0), ctypes.byref(err))
    ocl.check(err.value, "clCreateCommandQueue")
    with open(spec["bitcode"], "rb") as f:
        bitcode = f.read()
    length = ctypes.c_size_t(len(bitcode))
    data = ctypes.c_char_p(bitcode)
    status = ctypes.c_int()
    prog = lib.clCreateProgramWithBinary(vp(ctx), 1, devs, ctypes.byref(length), ctypes.byref(data),
                                         ctypes.byref(status), ctypes.byref(err))
    ocl.check(err.value, "clCreateProgramWithBinary")
    if lib.clBuildProgram(vp(prog), 1, devs, b"-x spir -spir-std=1.2", None, None) != 0:
        log = ocl.info_string(lib.clGetProgramBuildInfo, prog, CL_PROGRAM_BUILD_LOG, (vp(dev),))
        print("clBuildProgram failed:\n" + log)
        return 1
    kernel = lib.clCreateKernel(vp(prog), spec["kernel"].encode(), ctypes.byref(err))
    ocl.check(err.value, "clCreateKernel " + spec["kernel"])
    arrays, mems, keep = [], [], []
    for i, a in enumerate(spec["args"]):
        if a["kind"] == "buffer":
            host = np.load(a["npy"])
            nbytes = max(host.nbytes, 1)
            # An empty buffer is one byte with nothing copied (COPY_HOST_PTR
            # with a NULL pointer is CL_INVALID_HOST_PTR).
            flags = CL_MEM_READ_WRITE | (CL_MEM_COPY_HOST_PTR if host.nbytes else 0)
            mem = vp(lib.clCreateBuffer(vp(ctx), ctypes.c_uint64(flags), ctypes.c_size_t(nbytes),
                                        host.ctypes.data_as(vp) if host.nbytes else None, ctypes.byref(err)))
            ocl.check(err.value, f"clCreateBuffer (argument {i}, {nbytes} bytes)")
            arrays.append((a["npy"], host, mem))
            mems.append(mem)
            ocl.check(lib.clSetKernelArg(vp(kernel), ctypes.c_uint(i), ctypes.c_size_t(ctypes.sizeof(vp)),
                                         ctypes.byref(mem)), f"clSetKernelArg {i}")
        else:
            value = SCALAR_CTYPES[a["type"]](a["value"])
            keep.append(value)
            ocl.check(lib.clSetKernelArg(vp(kernel), ctypes.c_uint(i), ctypes.c_size_t(ctypes.sizeof(value)),
                                         ctypes.byref(value)), f"clSetKernelArg {i}")
    dims = len(spec["global"])
    gsize = (ctypes.c_size_t * dims)(*spec["global"])
    lsize = (ctypes.c_size_t * dims)(*spec["local"])
    ocl.check(lib.clEnqueueNDRangeKernel(vp(queue), vp(kernel), ctypes.c_uint(dims), None, gsize, lsize, 0, None,
                                         None), "clEnqueueNDRangeKernel")
    if build_only:  # the launch built PoCL's work-group function: cached now
        ocl.check(lib.clFinish(vp(queue)), "clFinish")
        return 0
    for path, host, mem in arrays:
        if host.nbytes:
            ocl.check(lib.clEnqueueReadBuffer(vp(queue), mem, 1, ctypes.c_size_t(0), ctypes.c_size_t(host.nbytes),
                                              host.ctypes.data_as(vp), 0, None, None), "clEnqueueReadBuffer")
        np.save(path, host)
    ocl.check(lib.clFinish(vp(queue)), "clFinish")
    return 0


# ------------------------------------------------------------------- cases
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64, "i32": np.int32,
          "i16": np.int16, "i8": np.int8, "bf16": np.uint16}
# tessera-run's defaults by numpy dtype (bf16: its bits decoded first);
# float32 / float64 1e-3, integers exact.
TOLERANCE = {"float16": 4e-3, "bf16": 1.6e-2}


class Case:
    """One kernel launch: the Tile IR text, its function, arguments in order
    (numpy arrays for buffers, Python numbers for scalars), the grid, and
    optionally a function giving the expected buffers (default: the cpu
    plugin's run of the same kernel on the same inputs)."""

    def __init__(self, name, text, function, args, grid, expect=None):
        self.name, self.text, self.function = name, text, function
        self.args, self.grid, self.expect = args, grid, expect
        self.error = None  # why the case could not be made
        self.bf16_bits = False  # its i16 buffers hold bf16 bits (the GPU kernels' bf16)
        self.spv = None  # a SPIR-V module already built (not compiled from `text`)
        self.local = None  # the group size, for kernels that fix none


def read_text(path):
    with open(path) as f:
        return f.read()


def case_rng(name):
    """Each case's inputs from its name alone: --only NAME reproduces them."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def random_array(rng, dtype, shape):
    """tessera-run's generated inputs: floats in [-1, 1), signed ints in [-8, 8)."""
    if dtype in ("f32", "f64", "f16"):
        return rng.uniform(-1, 1, shape).astype(DTYPES[dtype])
    if dtype in ("i64", "i32", "i16", "i8"):
        return np.floor(rng.uniform(-1, 1, shape) * 8).astype(DTYPES[dtype])
    raise ValueError(f"no generated inputs for {dtype}")


def kernel_functions(text):
    """(name, attribute text) of each func.func with Tile IR kernel attributes."""
    out = []
    for m in re.finditer(r"func\.func @([A-Za-z0-9_]+)\(", text):
        head = text[m.end():text.find("{\n", m.end())]  # the signature and attributes, up to the body
        if "tessera_tile." in head:
            out.append((m.group(1), head))
    return out


def fill_random_inputs(tessera, case):
    """case.args from the kernel's parameters (the cpu plugin's compile of
    it): tessera-run's scalars (1.5, 1) and generated buffers, bf16 bits
    where case.bf16_bits. A kernel the cpu plugin cannot compile is this
    case's failure."""
    rng = case_rng(case.name)
    try:
        fn = tessera.compile(case.text, device="cpu", function=case.function)
        for p in fn.inputs:
            if p["role"] == "scalar":
                case.args.append(1.5 if p["dtype"].startswith("f") else 1)
            elif case.bf16_bits and p["dtype"] == "i16":
                case.args.append(tessera.to_bf16_bits(rng.uniform(-1, 1, p["shape"]).astype(np.float32))
                                 .view(np.int16))
            else:
                case.args.append(random_array(rng, p["dtype"], p["shape"]))
    except Exception as e:  # reported with the case
        case.error = f"the cpu plugin could not compile it: {e}"


def example_cases(src, tessera):
    cases = []
    for f in sorted(os.listdir(os.path.join(src, "examples"))):
        if not f.endswith(".mlir"):
            continue
        text = read_text(os.path.join(src, "examples", f))
        for fn_name, head in kernel_functions(text):
            grid = re.search(r"tessera_tile\.grid = array<i64: ([0-9, ]+)>", head)
            case = Case(f"{f[:-5]}.{fn_name}", text, fn_name, [],
                        [int(x) for x in grid.group(1).split(",")] if grid else [1])
            fill_random_inputs(tessera, case)
            cases.append(case)
    return cases


def level_zero_schedule(bin_dir):
    """The level_zero target's GPU schedule, as tessera-info reports it."""
    r = subprocess.run([os.path.join(bin_dir, "tessera-info"), "--json"], capture_output=True, text=True, timeout=300)
    for plugin in json.loads(r.stdout).get("plugins", []):
        for t in plugin.get("compile_targets", []):
            if t.get("name") == "level_zero":
                return t["schedule"]
    raise RuntimeError("tessera-info lists no level_zero compile target")


def lower_spmd_stages(opt, path, pipeline):
    """An SPMD program as the program layer lowers it: cut at its
    collectives into stage functions (--tessera-spmd-stages), each stage
    lowered alone (made the module's one public function, the rest dropped).
    Returns [(stage, completed process)]; an empty list if no stage came."""
    staged = subprocess.run([opt, path, "--tessera-grad", "--inline", "--tessera-spmd-stages"], capture_output=True,
                            text=True, timeout=600)
    if staged.returncode != 0:
        return [("spmd-stages", staged)]
    out = []
    for stage in re.findall(r"func\.func private @(\w+_stage\d+)\(", staged.stdout):
        text = staged.stdout.replace(f"func.func private @{stage}(", f"func.func @{stage}(")
        out.append((stage, subprocess.run([opt, "-", f"--symbol-privatize=exclude={stage}", "--symbol-dce", pipeline],
                                          input=text, capture_output=True, text=True, timeout=600)))
    return out


def graph_cases(bin_dir, src, tessera, notes, only, work):
    """The kernels the level_zero compiler makes of each Graph IR example:
    tessera-opt's GPU pipeline with the level_zero schedule, then one
    kernel at a time (--tessera-strip-launch-plans=keep=NAME), each run on
    random inputs. Programs of gradients and calls go through
    --tessera-grad and --inline first, and SPMD programs are cut into
    stages lowered one at a time, as the program layer does."""
    schedule = level_zero_schedule(bin_dir)
    opt = os.path.join(bin_dir, "tessera-opt")
    pipeline = f"--tessera-gpu-graph-pipeline=backend=level_zero schedule={{{schedule}}}"
    cases = []
    for f in sorted(os.listdir(os.path.join(src, "examples"))):
        if not f.endswith(".mlir"):
            continue
        path = os.path.join(src, "examples", f)
        source = read_text(path)
        # The lowered modules (kernels and launch plans): the whole program,
        # else through --tessera-grad and --inline, else per SPMD stage.
        r = subprocess.run([opt, path, pipeline], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 and "'func.call' op is not lowered" in r.stderr:
            r = subprocess.run([opt, path, "--tessera-grad", "--inline", pipeline], capture_output=True, text=True,
                               timeout=600)
        units = [(f[:-5], r)]
        if r.returncode != 0 and re.search(r"'tessera_graph\.(all_reduce|all_gather|reduce_scatter|broadcast|"
                                           r"all_to_all)' op is not lowered", r.stderr):
            units = lower_spmd_stages(opt, path, pipeline)
            notes.append(f"{f}: SPMD, lowered per stage ({', '.join(name for name, _ in units) or 'no stage'})")
        for unit, r in units or [(f[:-5], r)]:
            kernels = kernel_functions(r.stdout) if r.returncode == 0 else []
            if r.returncode != 0 or not kernels:
                case = Case(f"{f[:-5]}.{unit}.lowering", "", "", [], [1])
                case.error = (f"tessera-opt's GPU pipeline (exit {r.returncode}) gave {len(kernels)} kernels:\n"
                              + r.stderr[-2000:])
                cases.append(case)
                continue
            lowered = os.path.join(work, unit + ".tile.mlir")
            with open(lowered, "w") as out:
                out.write(r.stdout)
            for kernel, head in kernels:
                if only and only not in f"{f[:-5]}.{kernel}":
                    continue
                k = subprocess.run([opt, lowered, f"--tessera-strip-launch-plans=keep={kernel}"],
                                   capture_output=True, text=True, timeout=600)
                if k.returncode != 0:
                    raise RuntimeError(f"tessera-opt could not keep kernel {kernel} of {f}:\n{k.stderr}")
                # The kernel alone: the declarations the module kept
                # (gradients of functions the pipeline removed) are not its.
                text = "\n".join(line for line in k.stdout.splitlines()
                                  if not (re.match(r"\s*func\.func private @", line) and
                                          not line.rstrip().endswith("{")))
                grid = re.search(r"tessera_tile\.grid = array<i64: ([0-9, ]+)>", head)
                case = Case(f"{f[:-5]}.{kernel}", text, kernel, [],
                            [int(x) for x in grid.group(1).split(",")] if grid else [1])
                # The GPU kernels keep bf16 as its bits in i16: in a program
                # of bf16 tensors, the i16 buffers get bf16 numbers, not
                # small ints (whose bits are NaNs and denormals).
                case.bf16_bits = "bf16" in source and "xi16>" not in source
                fill_random_inputs(tessera, case)
                cases.append(case)
    return cases


def cts_params(src):
    params = {}
    for line in read_text(os.path.join(src, "tests", "cts_kernel_params.txt")).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            params[k] = v
    return params


def cts_cases(src):
    """The conformance kernels, launched as conformance/areas launch them."""
    P = cts_params(src)
    L = int(P["L"])
    text = {}
    for f in os.listdir(os.path.join(src, "conformance", "kernels", "tile")):
        if f.endswith(".mlir"):
            t = read_text(os.path.join(src, "conformance", "kernels", "tile", f))
            text[f[:-5]] = re.sub(r"@([A-Z0-9_]+)@", lambda m: P[m.group(1)], t)
    rng = case_rng("cts")
    f32 = lambda n: rng.uniform(-1, 1, n).astype(np.float32)
    u32 = lambda n: rng.integers(0, 2**31, n, dtype=np.int64).astype(np.int32)
    n = 1000  # not a multiple of the group: the bounds checks run
    groups = -(-n // L)
    cases = [
        Case("cts.saxpy", text["saxpy"], "saxpy", [f32(n), f32(n), 2.5, n], [groups]),
        Case("cts.fill_u32", text["fill_u32"], "fill_u32", [np.zeros(groups * L, np.int32), -559038737, n], [groups]),
        Case("cts.mul_add_u32", text["mul_add_u32"], "mul_add_u32", [u32(groups * L), 1103515245, 12345, n],
             [groups]),
        Case("cts.group_reduce_f32", text["group_reduce_f32"], "group_reduce_f32",
             [np.zeros(groups, np.float32), f32(n), n], [groups]),
    ]
    M, N, K = 37, 53, 19
    cases.append(Case("cts.gemm_f32", text["gemm_f32"], "gemm_f32",
                      [np.zeros(M * N, np.float32), f32(M * K), f32(K * N), M, N, K], [-(-N // 8), -(-M // 8)]))
    rows, cols = 5, 300
    cases.append(Case("cts.softmax_f32", text["softmax_f32"], "softmax_f32",
                      [np.zeros(rows * cols, np.float32), f32(rows * cols), rows, cols], [rows]))
    mn = int(P["MN"])
    m_rows = mn // int(P["N"])
    for layout, bm, bn in [("blocked", "BM", "BN"), ("tiled", "TM", "TN")]:
        packed = -(-m_rows // int(P[bm])) * -(-int(P["N"]) // int(P[bn])) * int(P[bm]) * int(P[bn])
        cases.append(Case(f"cts.layout_{layout}.pack", text["layout_" + layout], "layout_pack",
                          [np.zeros(packed, np.float32), f32(mn)], [-(-mn // L)]))
        cases.append(Case(f"cts.layout_{layout}.unpack", text["layout_" + layout], "layout_unpack",
                          [np.zeros(mn, np.float32), f32(packed)], [-(-mn // L)]))
    # Subgroups are of one lane here (tests/pocl/missing_builtins.cl, and
    # the cpu plugin's): sg = 1, and every shuffle reads the lane's own value.
    for kind in ("shuffle_down", "shuffle_xor"):
        for p in (0, 1, 5):
            cases.append(Case(f"cts.{kind}.{p}", text[kind], kind,
                              [np.zeros(4 * L, np.int32), u32(4 * L), 1, p], [4]))
    lanes = 4 * L
    for scope, name in [(0, "tile"), (1, "group"), (2, "device")]:
        cases.append(Case(f"cts.atomic_add.{name}", text["atomic_add"], "atomic_add",
                          [np.zeros(lanes, np.int32), scope, 3], [4]))
    return cases


def cts_module_cases(module):
    """The conformance suite's hand-written spirv-kernel module
    (conformance/kernels/level_zero/basic.spvasm, the format the level_zero
    plugin loads for the suite's ABI tests), each kernel checked against
    the semantics its header states. Groups of 64 lanes over a 3-D grid of
    groups (element i = linear group * lanes + lane); the scheduling kernels
    act in lane 0 of each group."""
    rng = case_rng("cts_module")
    u32 = lambda n: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    n, grid, lanes = 1000, [4, 2, 2], 64
    size = 16 * lanes
    x, y, src = u32(size), rng.uniform(-1, 1, size).astype(np.float32), u32(size)
    xs = rng.uniform(-1, 1, size).astype(np.float32)

    def within(new, old):  # new[:n], old past n
        out = old.copy()
        out[:n] = new[:n]
        return out

    specs = [
        ("fill_u32", [np.zeros(size, np.uint32), 0xDEADBEEF, n], grid,
         lambda a: [within(np.full(size, 0xDEADBEEF, np.uint32), a[0])]),
        ("mul_add_u32", [x, 1103515245, 12345, n], grid,
         lambda a: [within((a[0].astype(np.uint64) * 1103515245 + 12345).astype(np.uint32), a[0])]),
        # A rounded multiply, then a rounded add (no FMA): exact in float32.
        ("saxpy", [y, xs, 2.5, n], grid, lambda a: [within(np.float32(2.5) * a[1] + a[0], a[0]), a[1]]),
        ("copy_u32", [np.zeros(size, np.uint32), src, n], grid, lambda a: [within(a[1], a[0]), a[1]]),
        ("count", [np.zeros(4, np.uint32), 2], grid, lambda a: [np.array([0, 0, 16, 0], np.uint32)]),
        # The gate open from the start: no group times out.
        ("gate", [np.array([1], np.uint32), np.zeros(1, np.uint32), 1000], [1],
         lambda a: [a[0], np.zeros(1, np.uint32)]),
        # Never opened: the one group gives up after 1 ms worth of polls.
        ("gate", [np.zeros(1, np.uint32), np.zeros(1, np.uint32), 1], [1],
         lambda a: [a[0], np.ones(1, np.uint32)]),
        ("delayed_store", [np.zeros(1, np.uint32), 77, 100], [1], lambda a: [np.array([77], np.uint32)]),
        # The partner's flag already set: seen; not set: given up, own flag set.
        ("handshake", [np.array([0, 1], np.uint32), 0, 10, np.zeros(2, np.uint32)], [1],
         lambda a: [np.array([1, 1], np.uint32), np.array([1, 0], np.uint32)]),
        ("handshake", [np.zeros(2, np.uint32), 0, 1, np.zeros(2, np.uint32)], [1],
         lambda a: [np.array([1, 0], np.uint32), np.zeros(2, np.uint32)]),
        # Three groups complete: log[0] = 3, each wrote its id.
        ("log_stream", [np.zeros(5, np.uint32), 7, 4, 10], [3],
         lambda a: [np.array([3, 7, 7, 7, 0], np.uint32)]),
    ]
    cases, seen = [], {}
    for name, args, g, expect in specs:
        seen[name] = seen.get(name, 0) + 1
        case = Case(f"cts_module.{name}" + (f".{seen[name]}" if seen[name] > 1 else ""), "", name, args, g, expect)
        case.spv, case.local = module, [lanes, 1, 1]
        cases.append(case)
    return cases


# ---------------------------------------------------------------- the runs
def lower(bin_dir, case, work, tools):
    """SPIR-V for level_zero, then SPIR bitcode; returns (bitcode, signature) or raises."""
    if case.spv:
        spv = case.spv
    else:
        mlir = os.path.join(work, "kernel.mlir")
        with open(mlir, "w") as f:
            f.write(case.text)
        spv = os.path.join(work, "kernel.spv")
        r = subprocess.run([os.path.join(bin_dir, "tessera-compile"), mlir, "--function", case.function, "--target",
                            "level_zero", "--emit", "spirv", "-o", spv], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError("tessera-compile --target level_zero failed:\n" + r.stdout + r.stderr)
    translated = os.path.join(work, "translated.bc")
    r = subprocess.run([tools.llvm_spirv, "-r", spv, "-o", translated], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("llvm-spirv -r failed:\n" + r.stdout + r.stderr)
    # The built-ins PoCL 3.1 lacks that the kernel calls (one-lane subgroups,
    # mem_fence): tests/pocl/missing_builtins.cl.
    bc = os.path.join(work, "kernel.bc")
    r = subprocess.run([tools.llvm_link, "--only-needed", translated, tools.builtins, "-o", bc], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("llvm-link-15 failed:\n" + r.stdout + r.stderr)
    r = subprocess.run([tools.llvm_dis, bc, "-o", "-"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("llvm-dis-15 failed:\n" + r.stderr)
    m = re.search(r"define spir_kernel void @" + re.escape(case.function) + r"\((.*)\)[^\n]*\{", r.stdout)
    if not m:
        raise RuntimeError(f"no spir_kernel @{case.function} in the translated module")
    meta = re.search(r"!reqd_work_group_size !(\d+)", m.group(0))
    local = list(case.local or [1, 1, 1])
    if meta:
        md = re.search(r"^!" + meta.group(1) + r" = !\{(.*)\}", r.stdout, re.M)
        local = [int(x) for x in re.findall(r"i32 (\d+)", md.group(1))]
    params = [p.strip() for p in m.group(1).split(",")] if m.group(1).strip() else []
    # "ptr addrspace(1) %1" and "float %0": a buffer, or a scalar's type.
    params = ["buffer" if "addrspace(1)" in p else p.split()[0] for p in params]
    return bc, params, local


def run_case(args, case, work, tools, tessera):
    if case.error:
        raise RuntimeError(case.error)
    bc, params, local = lower(args.bin, case, work, tools)
    if len(params) != len(case.args):
        raise RuntimeError(f"the SPIR-V kernel takes {len(params)} arguments, the Tile IR {len(case.args)}")
    spec_args = []
    for i, (p, a) in enumerate(zip(params, case.args)):
        if p == "buffer":
            if not isinstance(a, np.ndarray):
                raise RuntimeError(f"argument {i} is a buffer in SPIR-V, a scalar here")
            path = os.path.join(work, f"arg{i}.npy")
            np.save(path, a)  # np.save closes the file it opens
            spec_args.append({"kind": "buffer", "npy": path})
        else:
            if p not in SCALAR_CTYPES:
                raise RuntimeError(f"argument {i}: no ctypes type for the scalar '{p}'")
            spec_args.append({"kind": "scalar", "type": p, "value": a})
    grid = list(case.grid) + [1] * (len(local) - len(case.grid))
    spec = {"bitcode": bc, "kernel": case.function, "args": spec_args,
            "global": [g * l for g, l in zip(grid, local)], "local": local}
    spec_path = os.path.join(work, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    # The reference first: the cpu plugin, same text, same inputs.
    if case.expect:
        want = case.expect(case.args)
    else:
        fn = tessera.compile(case.text, device="cpu", function=case.function)
        got = fn(*case.args, grid=tuple(case.grid))
        want = list(got) if isinstance(got, tuple) else [got]
    # Built and launched once by one process, run by the next from PoCL's
    # kernel cache: in the process that compiled it, PoCL 3.1 ran the
    # softmax kernels (two Workgroup arrays, values live across barriers)
    # to NaNs, every time, where the same cached work-group function loaded
    # by any later process gives the cpu plugin's results bit for bit
    # (docs/level_zero.md, "Its kernels, run on a CPU").
    for step in ("--build-child", "--child"):
        try:
            r = subprocess.run([sys.executable, os.path.abspath(__file__), step, spec_path], capture_output=True,
                               text=True, timeout=CHILD_SECONDS)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the PoCL {'build' if step == '--build-child' else 'run'} did not end in "
                               f"{CHILD_SECONDS} s")
        if r.returncode != 0:
            raise RuntimeError(f"the PoCL {'build' if step == '--build-child' else 'run'} failed "
                               f"(exit {r.returncode}):\n{r.stdout}{r.stderr}")
    buffers = [np.load(a["npy"]) for a in spec_args if a["kind"] == "buffer"]
    if len(buffers) != len(want):
        raise RuntimeError(f"{len(buffers)} buffers from PoCL, {len(want)} from the reference")
    worst = []
    for i, (g, w) in enumerate(zip(buffers, want)):
        w = np.asarray(w)
        if g.shape != w.shape:
            raise RuntimeError(f"buffer {i}: shape {g.shape}, reference {w.shape}")
        if case.bf16_bits and g.dtype == np.int16:  # compared as the bf16 numbers they hold
            g, w = [tessera.from_bf16_bits(a.view(np.uint16)) for a in (g, w.astype(np.int16))]
            tol = TOLERANCE["bf16"]
        elif case.expect:  # stated semantics: exact (the module's saxpy is ContractionOff)
            tol = 0.0
        else:
            tol = 0.0 if g.dtype.kind in "iub" else TOLERANCE.get(str(g.dtype), 1e-3)
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        # Equal values (infinities too) and NaN against NaN match; a NaN
        # against a number is the largest error.
        same = (g64 == w64) | (np.isnan(g64) & np.isnan(w64))
        with np.errstate(invalid="ignore"):
            err = np.where(same, 0.0, np.abs(g64 - w64))
        err = np.nan_to_num(err, nan=np.inf)
        max_err = float(err.max()) if err.size else 0.0
        finite = w64[np.isfinite(w64)]
        max_ref = float(np.abs(finite).max()) if finite.size else 0.0
        if max_err > tol * max(1.0, max_ref):
            bad = int(np.argmax(err))
            raise RuntimeError(f"buffer {i} differs: max abs error {max_err:.3g} (max |ref| {max_ref:.3g}, "
                               f"tolerance {tol:g} relative); first worst element {bad}: PoCL {g64.flat[bad]!r}, "
                               f"cpu {w64.flat[bad]!r}")
        worst.append(max_err)
    return f"grid {case.grid} x group {local}, {len(buffers)} buffers, max abs error {max(worst or [0]):.3g}"


class Tools:
    pass


def find_tools():
    """The LLVM 15 tools PoCL's bitcode needs (a Tools), or why not (a str)."""
    t = Tools()
    llvm15 = "/usr/lib/llvm-15/bin"
    pick = lambda name: shutil.which(name + "-15") or (os.path.join(llvm15, name)
                                                       if os.access(os.path.join(llvm15, name), os.X_OK) else None)
    t.llvm_spirv = os.environ.get("LLVM_SPIRV") or shutil.which("llvm-spirv-15")
    t.llvm_link = pick("llvm-link")
    t.llvm_dis = pick("llvm-dis")
    t.clang = pick("clang")
    for name, what in [("llvm_spirv", "llvm-spirv-15 (the Khronos SPIR-V <-> LLVM translator)"),
                       ("llvm_link", "llvm-link-15 (package llvm-15)"), ("llvm_dis", "llvm-dis-15 (package llvm-15)"),
                       ("clang", "clang-15")]:
        if not getattr(t, name):
            return "no " + what
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--src")
    ap.add_argument("--python", help="the build tree's python folder (the tessera package)")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--keep", help="keep each case's files in this folder")
    ap.add_argument("--cts-module", help="the conformance suite's spirv-kernel module (default: the build's)")
    ap.add_argument("--graph", action="store_true",
                    help="also every kernel the GPU pipeline makes of the Graph IR examples")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--build-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child or args.build_child:
        return run_child(args.child or args.build_child, build_only=bool(args.build_child))
    tools = find_tools()
    if isinstance(tools, str):
        print(f"spirv_kernels_on_pocl: {tools}: skipped")
        return SKIP
    try:
        dev, why = OpenCL().spir_device()
    except OSError as e:
        dev, why = None, f"no OpenCL ICD loader ({e})"
    if dev is None:
        print(f"spirv_kernels_on_pocl: {why}: skipped")
        return SKIP
    print(f"spirv_kernels_on_pocl: OpenCL device '{why}', translator {tools.llvm_spirv}")
    sys.path.insert(0, args.python)
    import tessera
    notes = []
    failures = 0
    root = args.keep or tempfile.mkdtemp(prefix="tessera-pocl-")
    os.makedirs(root, exist_ok=True)
    try:
        cases = example_cases(args.src, tessera) + cts_cases(args.src)
        if args.cts_module:  # named (as ctest does): it must be there
            if not os.path.exists(args.cts_module):
                print(f"spirv_kernels_on_pocl: --cts-module {args.cts_module}: no such file")
                return 1
            cases += cts_module_cases(os.path.abspath(args.cts_module))
        else:
            notes.append("the conformance spirv-kernel module not run: not given (--cts-module)")
        if args.graph:
            cases += graph_cases(args.bin, args.src, tessera, notes, args.only, root)
        if args.only:
            cases = [c for c in cases if args.only in c.name]
        for n in notes:
            print("note: " + n)
        tools.builtins = os.path.join(root, "missing_builtins.bc")
        r = subprocess.run([tools.clang, "-x", "cl", "-cl-std=CL2.0", "-target", "spir64-unknown-unknown", "-emit-llvm",
                            "-c", "-O1", "-o", tools.builtins,
                            os.path.join(args.src, "tests", "pocl", "missing_builtins.cl")],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print("spirv_kernels_on_pocl: clang-15 could not build tests/pocl/missing_builtins.cl:\n" + r.stderr)
            return 1
        for case in cases:
            work = os.path.join(root, case.name)
            os.makedirs(work, exist_ok=True)
            try:
                print(f"PASS {case.name}: {run_case(args, case, work, tools, tessera)}", flush=True)
            except Exception as e:  # every failure is reported with its case, then the next case runs
                failures += 1
                print(f"FAIL {case.name}: {e}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"spirv_kernels_on_pocl: {len(cases) - failures} of {len(cases)} kernels match their reference")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
