#!/usr/bin/env python3
"""Turn one tessera-bench JSON run into ratios against its references.

    build/bin/tessera-bench --benchmark_format=json > bench.json
    python3 bench/compare.py bench.json        # or: ... | compare.py -

Benchmarks are named <metric>/<implementation>[/<size>]; a Tessera
implementation and its reference share metric and size and are measured in
the same run, so the machine's noise mostly cancels in the ratio.  For each
benchmark the median over repetitions is used (the "_median" aggregate when
present, else the median of the individual runs).

The issue's targets are printed with PASS or MISS.  This is a report, not a
test: the exit status is 0 unless --strict is given (then 1 on any MISS or
missing benchmark).
"""
import argparse
import json
import re
import statistics
import sys

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load(path):
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def strip_settings(name):
    """Drop Google Benchmark's run settings, should any be left in a name."""
    parts = [p for p in name.split("/")
             if not re.match(r"^(min_time|min_warmup_time|iterations|repeats|"
                             r"threads):", p)
             and p not in ("real_time", "manual_time", "process_time")]
    return "/".join(parts)


def collect(doc):
    """name -> {"ns": median time per iteration, "bps": bytes/s or None}."""
    medians = {}
    runs = {}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            name = strip_settings(b.get("run_name", b["name"]))
            medians[name] = {"error": b.get("error_message", "error")}
            continue
        scale = UNIT_NS.get(b.get("time_unit", "ns"), 1.0)
        entry = {"ns": b["real_time"] * scale,
                 "cpu_ns": b["cpu_time"] * scale,
                 "bps": b.get("bytes_per_second"),
                 "ips": b.get("items_per_second"),
                 "handoff_ms": b.get("handoff_ms")}
        name = strip_settings(b.get("run_name", b["name"]))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = entry
        else:
            runs.setdefault(name, []).append(entry)
    for name, entries in runs.items():
        if name in medians:
            continue
        bps = [e["bps"] for e in entries if e["bps"] is not None]
        medians[name] = {
            "ns": statistics.median(e["ns"] for e in entries),
            "cpu_ns": statistics.median(e["cpu_ns"] for e in entries),
            "bps": statistics.median(bps) if bps else None,
            "ips": None,
            "handoff_ms": entries[0].get("handoff_ms"),
        }
    return medians


def size_bytes(name):
    m = re.search(r"/(\d+)(B|KiB|MiB|GiB)$", name)
    if not m:
        return None
    return int(m.group(1)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20,
                              "GiB": 1 << 30}[m.group(2)]


def bandwidth(results, name):
    r = results.get(name)
    if not r or "error" in r:
        return None
    if r.get("bps"):
        return r["bps"]
    size = size_bytes(name)
    return size / (r["ns"] * 1e-9) if size else None


def time_ns(results, name, clock="ns"):
    """Median time per iteration: wall ("ns") or the calling thread's CPU
    time ("cpu_ns")."""
    r = results.get(name)
    if not r or "error" in r:
        return None
    return r[clock]


def fmt_ns(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.2f} us"
    return f"{v:.1f} ns"


def fmt_bw(v):
    return "n/a" if v is None else f"{v / 1e9:.2f} GB/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="tessera-bench --benchmark_format=json "
                                 "output, or - for stdin")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when a target is missed or a result missing")
    args = ap.parse_args()
    doc = load(args.json)
    res = collect(doc)

    rows = []  # metric, tessera, reference, ratio, target, verdict

    def verdict(ok):
        return "n/a" if ok is None else ("PASS" if ok else "MISS")

    # launch_async: no reference, informative.
    la = time_ns(res, "launch_async/tessera_cpu")
    rows.append(("launch_async (empty kernel)", fmt_ns(la), "-", "-",
                 "-", "info"))

    # launch_roundtrip: tessera_cpu / bare_pool <= 1.5
    rt = time_ns(res, "launch_roundtrip/tessera_cpu")
    bp = time_ns(res, "launch_roundtrip/bare_pool")
    ratio = rt / bp if rt and bp else None
    rows.append(("launch_roundtrip", fmt_ns(rt), f"{fmt_ns(bp)} bare_pool",
                 f"{ratio:.2f}x" if ratio else "n/a", "<= 1.5x bare pool",
                 verdict(None if ratio is None else ratio <= 1.5)))

    # graph replay per node < 1 us; eager per node as the comparison.
    gr = time_ns(res, "graph_replay_per_node/tessera_cpu")
    ge = time_ns(res, "graph_replay_per_node/tessera_cpu_eager")
    ratio = gr / ge if gr and ge else None
    rows.append(("graph_replay_per_node", fmt_ns(gr),
                 f"{fmt_ns(ge)} eager", f"{ratio:.2f}x" if ratio else "n/a",
                 "< 1 us per node",
                 verdict(None if gr is None else gr < 1000.0)))

    # abi_call: core - direct < 50 ns.  Both are single-threaded calls that
    # never wait, so CPU time is the cost; wall time on a shared machine adds
    # whatever preemption hit the loop.
    core = time_ns(res, "abi_call/core", "cpu_ns")
    direct = time_ns(res, "abi_call/direct", "cpu_ns")
    overhead = core - direct if core is not None and direct is not None \
        else None
    rows.append(("abi_call (Stream query, cpu)", fmt_ns(core),
                 f"{fmt_ns(direct)} direct",
                 "n/a" if overhead is None else f"+{overhead:.1f} ns",
                 "core - direct < 50 ns",
                 verdict(None if overhead is None else overhead < 50.0)))

    core_w = time_ns(res, "abi_call/core")
    direct_w = time_ns(res, "abi_call/direct")
    rows.append(("abi_call (Stream query, wall)", fmt_ns(core_w),
                 f"{fmt_ns(direct_w)} direct",
                 "n/a" if core_w is None or direct_w is None
                 else f"+{core_w - direct_w:.1f} ns", "-", "info"))

    # copies: tessera bandwidth / memcpy bandwidth >= 0.9
    mc = bandwidth(res, "copy/memcpy/64MiB")
    for label, name in (("copy h2d pinned 64MiB",
                         "copy/tessera_cpu_h2d_pinned/64MiB"),
                        ("copy d2h pinned 64MiB",
                         "copy/tessera_cpu_d2h_pinned/64MiB")):
        bw = bandwidth(res, name)
        ratio = bw / mc if bw and mc else None
        rows.append((label, fmt_bw(bw), f"{fmt_bw(mc)} memcpy",
                     f"{ratio:.2f}x" if ratio else "n/a", ">= 0.9x memcpy",
                     verdict(None if ratio is None else ratio >= 0.9)))

    # Vulkan (issue 5): Tessera on the vulkan plugin against raw Vulkan code
    # in the same binary.  Times: tessera / raw (lower is better for
    # Tessera); bandwidths: tessera / raw (higher is better).
    def vk_time(label, metric, limit, size=""):
        t = time_ns(res, f"{metric}/tessera_vulkan{size}")
        r = time_ns(res, f"{metric}/raw_vulkan{size}")
        ratio = t / r if t and r else None
        rows.append((label, fmt_ns(t), f"{fmt_ns(r)} raw",
                     f"{ratio:.2f}x" if ratio else "n/a",
                     f"<= {limit}x raw" if limit else "-",
                     verdict(None if ratio is None else ratio <= limit)
                     if limit else "info"))

    def vk_bandwidth(label, name_t, name_r, limit):
        t = bandwidth(res, name_t)
        r = bandwidth(res, name_r)
        ratio = t / r if t and r else None
        rows.append((label, fmt_bw(t), f"{fmt_bw(r)} raw",
                     f"{ratio:.2f}x" if ratio else "n/a",
                     f">= {limit}x raw" if limit else "-",
                     verdict(None if ratio is None else ratio >= limit)
                     if limit else "info"))

    vk_time("dispatch_small vulkan (per dispatch)", "dispatch_small", 1.2)
    vk_time("submit_wait vulkan", "submit_wait", 1.2)
    vk_bandwidth("copy vulkan dev->dev 64MiB", "copy/tessera_vulkan/64MiB",
                 "copy/raw_vulkan/64MiB", 0.8)
    # saxpy: no target in the issue; reported as time and as a ratio.
    st = time_ns(res, "saxpy/tessera_vulkan/16M")
    sr = time_ns(res, "saxpy/raw_vulkan/16M")
    ratio = st / sr if st and sr else None
    rows.append(("saxpy vulkan 16M", fmt_ns(st), f"{fmt_ns(sr)} raw",
                 f"{ratio:.2f}x" if ratio else "n/a", "-", "info"))
    # The same saxpy, its kernel generated by Tessera from Tile IR
    # (examples/saxpy.mlir -> tessera::spv::compileForVulkan), against the
    # same raw GLSL reference: issue 18 asks for 1.1x.
    sg = time_ns(res, "saxpy/tessera_vulkan_tile_ir/16M")
    ratio = sg / sr if sg and sr else None
    rows.append(("saxpy vulkan 16M, Tile IR kernel", fmt_ns(sg), f"{fmt_ns(sr)} raw",
                 f"{ratio:.2f}x" if ratio else "n/a", "<= 1.1x raw",
                 verdict(None if ratio is None else ratio <= 1.1)))
    # The GEMM on vulkan (issue 18): the Graph IR matmul through the vulkan
    # plugin's compiler against a hand-tiled GLSL GEMM, 1.2x asked.
    vk_time("gemm_f32 vulkan 1024^3 vs hand-tiled GLSL", "gemm_f32", 1.2, "/1024")
    # CUDA (issue 12): Tessera on the cuda plugin against the raw driver
    # API in the same binary.
    def cu_time(label, metric, limit):
        t = time_ns(res, f"{metric}/tessera_cuda")
        r = time_ns(res, f"{metric}/raw_cuda")
        ratio = t / r if t and r else None
        rows.append((label, fmt_ns(t), f"{fmt_ns(r)} raw",
                     f"{ratio:.2f}x" if ratio else "n/a",
                     f"<= {limit}x raw" if limit else "-",
                     verdict(None if ratio is None else ratio <= limit)
                     if limit else "info"))

    # Issue 16: collectives across processes (tessera-mpi-bench under
    # mpirun, its own JSON): Tessera over MPI against the raw MPI call,
    # throughput ratio >= 0.95.  Rows only when that JSON is given.
    for metric in ("all_reduce", "reduce_scatter", "all_gather"):
        for impl, limit in (("tessera_mpi", 0.95), ("tessera_mpi_deterministic", None),
                            ("tessera_cpu_shm", None)):
            t = time_ns(res, f"{metric}/{impl}/16MiB")
            r = time_ns(res, f"{metric}/raw_mpi/16MiB")
            if t is None:
                continue
            ratio = r / t if t and r else None
            label = {"tessera_mpi": "over MPI", "tessera_mpi_deterministic": "over MPI (deterministic)",
                     "tessera_cpu_shm": "cpu plugin's own (shared memory, deterministic)"}[impl]
            rows.append((f"{metric} 16MiB {label}",
                         fmt_ns(t), f"{fmt_ns(r)} raw MPI",
                         f"{ratio:.2f}x" if ratio else "n/a",
                         f">= {limit}x raw MPI" if limit else "-",
                         verdict(None if ratio is None else ratio >= limit) if limit else "info"))

    # Issue 16 item 3: an SPMD program plain and with its stage and
    # all_reduce pipelined on two streams (tessera-mpi-bench --program);
    # a gain (> 1x) is expected where the collective does not run on the
    # cores that compute (GPUs, NICs), so it is reported, not judged.
    for name in sorted(res):
        if "/overlap" not in name:
            continue
        fn, variant, ranks = (name.split("/") + ["", ""])[:3]
        t = time_ns(res, name)
        r = time_ns(res, f"{fn}/no_overlap/{ranks}")
        ratio = r / t if t and r else None
        rows.append((f"{fn} {variant} ({ranks})", fmt_ns(t), f"{fmt_ns(r)} no overlap",
                     f"{ratio:.2f}x" if ratio else "n/a", "-", "info"))

    cu_time("launch + sync cuda", "launch_roundtrip", 1.1)
    cu_time("launch async cuda (per launch)", "launch_async", None)
    vk_bandwidth("copy cuda h2d pinned 64MiB", "copy/tessera_cuda_h2d_pinned/64MiB",
                 "copy/raw_cuda_h2d_pinned/64MiB", 0.95)
    vk_bandwidth("all_reduce cuda 64MiB, 1 device (NCCL)", "all_reduce/tessera_cuda/64MiB/1dev",
                 "all_reduce/raw_nccl/64MiB/1dev", None)

    # Overlap: launches -> host work -> synchronize against launches ->
    # synchronize -> host work, the host work as long as the device work.
    # About 0.5x when the device runs while the host works; 1.0x when the
    # runtime holds the launches until synchronize.
    so = time_ns(res, "overlap/serial/tessera_vulkan")
    oo = time_ns(res, "overlap/overlapped/tessera_vulkan")
    ratio = oo / so if so and oo else None
    rows.append(("vulkan overlap (host work while launched)", fmt_ns(oo),
                 f"{fmt_ns(so)} serial", f"{ratio:.2f}x" if ratio else "n/a",
                 "<= 0.8x serial",
                 verdict(None if ratio is None else ratio <= 0.8)))
    # Batching: what one submit + wait costs against one dispatch inside a
    # batched command buffer (informative).
    sw = time_ns(res, "submit_wait/tessera_vulkan")
    ds = time_ns(res, "dispatch_small/tessera_vulkan")
    rows.append(("vulkan batching gain", fmt_ns(ds), f"{fmt_ns(sw)} unbatched",
                 f"{sw / ds:.2f}x" if sw and ds else "n/a", "-", "info"))

    # Issue 3: GEMM / fused MLP compiled from Graph IR by the cpu code
    # generator against OpenBLAS with the same thread count (items/s = FLOP/s),
    # and the compile time of examples/mlp.mlir.
    def gflops(name):
        r = res.get(name)
        if not r or "error" in r:
            return None
        return r["ips"] / 1e9 if r.get("ips") else None

    def fmt_gf(v):
        return "n/a" if v is None else f"{v:.1f} GFLOP/s"

    # Issue 18: the default schedule at least 0.9x OpenBLAS at every size
    # (the autotuned one 1.0x: bench/autotune).
    for size, limit in (("1000", 0.9), ("1024", 0.9), ("2048", 0.9), ("4096", 0.9)):
        t = gflops(f"gemm_f32/tessera_cpu/{size}")
        r = gflops(f"gemm_f32/openblas/{size}")
        ratio = t / r if t and r else None
        rows.append((f"gemm_f32 {size}^3", fmt_gf(t), f"{fmt_gf(r)} openblas",
                     f"{ratio:.2f}x" if ratio else "n/a",
                     f">= {limit}x openblas" if limit else "-",
                     verdict(None if ratio is None else ratio >= limit)
                     if limit else "info"))
    # The GEMMs as fractions of the machine's f32 FMA peak on the same
    # threads (fma_peak: the wider ISA the CPU has), measured in the run.
    peak = gflops("fma_peak/avx512") or gflops("fma_peak/avx2")
    if peak:
        for name in ("gemm_f32/tessera_cpu/2048", "gemm_f32/openblas/2048"):
            t = gflops(name)
            rows.append((f"{name} of FMA peak", fmt_gf(t), f"{fmt_gf(peak)} peak",
                         f"{t / peak:.2f}" if t else "n/a", "-", "info"))
    # bf16 x bf16 -> f32 (operands widened while packing): no target,
    # reported against the f32 OpenBLAS GEMM of the same size.
    t = gflops("gemm_bf16/tessera_cpu/2048")
    r = gflops("gemm_f32/openblas/2048")
    ratio = t / r if t and r else None
    rows.append(("gemm_bf16 2048^3 (-> f32)", fmt_gf(t),
                 f"{fmt_gf(r)} openblas f32",
                 f"{ratio:.2f}x" if ratio else "n/a", "-", "info"))
    t = gflops("mlp_f32/tessera_cpu/512")
    r = gflops("mlp_f32/openblas_unfused/512")
    ratio = t / r if t and r else None
    rows.append(("mlp_f32 512 (fused)", fmt_gf(t), f"{fmt_gf(r)} unfused",
                 f"{ratio:.2f}x" if ratio else "n/a", ">= 1.3x unfused",
                 verdict(None if ratio is None else ratio >= 1.3)))
    # The most any fused MLP could gain on this machine: the unfused
    # reference's FLOP rate against the FMA peak measured in the run (the
    # MLP is its two GEMMs; a ratio above this bound is not reachable).
    if peak and r:
        rows.append(("mlp_f32 512 bound: FMA peak / unfused", fmt_gf(peak), f"{fmt_gf(r)} unfused",
                     f"{peak / r:.2f}x", "-", "info"))
    # Attention in the FlashAttention form (online softmax, no score
    # matrix) against cblas_sgemm + softmax pass + cblas_sgemm; FLOP/s count
    # the two matmuls.  No target in the issue: reported as a ratio.
    for size in ("1024", "2048"):
        t = gflops(f"attention_f32/tessera_cpu/{size}")
        r = gflops(f"attention_f32/openblas_unfused/{size}")
        ratio = t / r if t and r else None
        rows.append((f"attention_f32 seq {size} d 64 (flash)", fmt_gf(t),
                     f"{fmt_gf(r)} unfused",
                     f"{ratio:.2f}x" if ratio else "n/a", "-", "info"))
    # Fusion of an elementwise tree (Schedule IR tile, one loop nest)
    # against one C++ loop per op and one hand-fused C++ loop, same threads:
    # no target in the issue, reported as bandwidth ratios.
    ct = bandwidth(res, "chain_f32/tessera_cpu/4M")
    for ref, label in (("cpp_fused", "hand-fused C++"), ("cpp_unfused", "C++ loop per op")):
        cr = bandwidth(res, f"chain_f32/{ref}/4M")
        ratio = ct / cr if ct and cr else None
        rows.append((f"chain_f32 4M vs {label}", fmt_bw(ct), fmt_bw(cr),
                     f"{ratio:.2f}x" if ratio else "n/a", "-", "info"))
    # Issue 11: the compile through the program layer and the plugin
    # boundary (bytecode hand-off, the compiler part, Program creation)
    # against the cpu code generator called directly; and what a Program
    # adds to a run against launching its kernel directly.
    cold = time_ns(res, "compile/tessera_cpu/mlp")
    cold_d = time_ns(res, "compile/direct_cpu/mlp")
    warm = time_ns(res, "compile_warm/tessera_cpu/mlp")
    warm_d = time_ns(res, "compile_warm/direct_cpu/mlp")
    ratio = cold / cold_d if cold and cold_d else None
    rows.append(("compile mlp.mlir cold", fmt_ns(cold), f"{fmt_ns(cold_d)} direct",
                 f"{ratio:.3f}x" if ratio else "n/a", "< 1 s, <= 1.05x",
                 verdict(None if ratio is None else cold < 1e9 and ratio <= 1.05)))
    # The bytecode hand-off (written by the core, read by the plugin) as a
    # share of the cold compile through the plugin.
    r = res.get("compile/tessera_cpu/mlp") or {}
    handoff = r.get("handoff_ms")
    share = handoff * 1e6 / cold if handoff is not None and cold else None
    rows.append(("bytecode hand-off, mlp cold", f"{handoff:.2f} ms" if handoff is not None else "n/a",
                 f"{fmt_ns(cold)} compile", f"{share * 100:.2f}%" if share is not None else "n/a",
                 "< 5%", verdict(None if share is None else share < 0.05)))
    ratio = warm / warm_d if warm and warm_d else None
    rows.append(("compile mlp.mlir warm", fmt_ns(warm), f"{fmt_ns(warm_d)} direct",
                 f"{ratio:.2f}x" if ratio else "n/a", "< 1 ms (cache)",
                 verdict(None if warm is None else warm < 1e6)))
    for metric, label in (("program_launch", "Program::Run enqueue"),
                          ("program_roundtrip", "Program::Run + wait")):
        p = time_ns(res, f"{metric}/tessera_program/saxpy4k")
        d = time_ns(res, f"{metric}/direct_launch/saxpy4k")
        ratio = p / d if p and d else None
        rows.append((f"{label} (saxpy 4k)", fmt_ns(p), f"{fmt_ns(d)} direct",
                     f"{ratio:.2f}x" if ratio else "n/a", "<= 1.1x",
                     verdict(None if ratio is None else ratio <= 1.1)))

    header = ("metric", "tessera", "reference", "ratio", "target", "result")
    widths = [max(len(str(r[i])) for r in rows + [header])
              for i in range(len(header))]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line.format(*r))

    errors = {n: r["error"] for n, r in res.items() if "error" in r}
    for n, e in sorted(errors.items()):
        print(f"error: {n}: {e}")

    ctx = doc.get("context", {})
    if ctx:
        print(f"\n{ctx.get('host_name', '?')}: {ctx.get('num_cpus', '?')} "
              f"cpus @ {ctx.get('mhz_per_cpu', '?')} MHz, "
              f"load {ctx.get('load_avg', '?')}, "
              f"benchmark library build {ctx.get('library_build_type', '?')}")
        if "openblas_core" in ctx:
            print(f"OpenBLAS kernels: {ctx['openblas_core']}")

    missed = any(r[5] in ("MISS", "n/a") for r in rows if r[4] != "-")
    if args.strict and (missed or errors):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
