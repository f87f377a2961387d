"""The reference for bench/programs/gemm_bf16.mlir on a GPU machine:
torch.matmul (cuBLAS) on random bf16 inputs, timed with CUDA events
(median of 20 after 5 warm-ups).  Prints one JSON line per size.

    python3 bench/torch_gemm.py 4096 8192
"""
import json
import statistics
import sys

import torch


def time_ms(n: int) -> float:
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(5):
        torch.matmul(a, b)
    times = []
    for _ in range(20):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


for arg in sys.argv[1:] or ["8192"]:
    n = int(arg)
    ms = time_ms(n)
    print(json.dumps({"gemm_bf16": n, "torch_cublas_ms": round(ms, 4),
                      "tflops": round(2 * n**3 / ms / 1e9, 1),
                      "device": torch.cuda.get_device_name()}))
