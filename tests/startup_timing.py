#!/usr/bin/env python3
"""Start-up cost of the runtime, with plugin isolation on and off
(docs/runtime.md, "Isolation").

Runs `tessera-info` and `tessera-startup-timing` (one Runtime::Create in a
fresh process, then a second one) N times under each setting, alternating
the settings run by run so that both see the same machine load (the
machines are shared and noisy), and prints the medians as JSON: the wall
time of each process, the in-process time of the first and second
Runtime::Create, and the ratio on/off.  TESSERA_BACKEND and the rest of the
environment are taken as they are, e.g.

  tests/startup_timing.py build/bin 30
  TESSERA_BACKEND=vulkan tests/startup_timing.py build/bin 30

usage: startup_timing.py <bin dir> [runs]
"""
import json
import os
import statistics
import subprocess
import sys
import time

BIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
SETTINGS = {"isolation_on": "on", "isolation_off": "off"}


def wall(argv, env):
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    return (time.perf_counter() - start) * 1000, out


samples = {s: {"tessera_info_wall_ms": [], "create_process_wall_ms": [], "first_create_ms": [],
               "second_create_ms": []} for s in SETTINGS}
backend = ""
for _ in range(RUNS):
    for setting, value in SETTINGS.items():
        env = dict(os.environ, TESSERA_PLUGIN_ISOLATION=value)
        s = samples[setting]
        ms, _ = wall([os.path.join(BIN, "tessera-info")], env)
        s["tessera_info_wall_ms"].append(ms)
        ms, out = wall([os.path.join(BIN, "tessera-startup-timing")], env)
        s["create_process_wall_ms"].append(ms)
        result = json.loads(out.stdout)
        backend = result["backend"]
        s["first_create_ms"].append(result["first_create_ms"])
        s["second_create_ms"].append(result["second_create_ms"])

report = {"runs": RUNS, "TESSERA_BACKEND": os.environ.get("TESSERA_BACKEND", ""), "backend": backend}
for setting in SETTINGS:
    report[setting] = {k: round(statistics.median(v), 2) for k, v in samples[setting].items()}
report["ratio_on_off"] = {k: round(report["isolation_on"][k] / report["isolation_off"][k], 2)
                          for k in report["isolation_on"] if report["isolation_off"][k] > 0}
print(json.dumps(report))
