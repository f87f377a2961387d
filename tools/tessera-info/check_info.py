#!/usr/bin/env python3
"""ctest tessera_info.<backend>: tessera-info shows what kernels may use.

    check_info.py <tessera-info> <backend>

Runs tessera-info with TESSERA_BACKEND=<backend>, in text and in --json,
and checks that every device of that plugin reports its kernel features
(plugin ABI 1.1): types, subgroup operations, float atomics, subgroup sizes,
pinned-memory import.  Exits 77 (skipped) when the plugin is unavailable.
"""
import json
import os
import subprocess
import sys


def main():
    info, backend = sys.argv[1], sys.argv[2]
    env = dict(os.environ, TESSERA_BACKEND=backend)
    out = subprocess.run([info, "--json"], env=env, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    plugins = [p for p in doc["plugins"] if p["name"] == backend]
    if not plugins or plugins[0]["state"] in ("unavailable", "rejected"):
        print(f"{backend}: not available here: skipped")
        return 77
    errors = []
    for d in plugins[0]["devices"]:
        k = d.get("kernel_features")
        if not k or not k.get("known"):
            errors.append(f"{d['name']}: no kernel_features in --json")
            continue
        for key in ("shader_types", "subgroup_ops", "float_atomics", "subgroup_size_min",
                    "subgroup_size_max", "subgroup_size_control", "full_subgroups",
                    "host_memory_import"):
            if key not in k:
                errors.append(f"{d['name']}: kernel_features.{key} missing")
        if "basic" not in k.get("subgroup_ops", []):
            errors.append(f"{d['name']}: subgroup_ops lacks basic: {k.get('subgroup_ops')}")
    text = subprocess.run([info], env=env, capture_output=True, text=True).stdout
    for line in ("kernel types", "subgroup ops", "float atomics", "pinned memory"):
        if line not in text:
            errors.append(f"text output lacks '{line}'")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"{backend}: kernel features shown in text and --json")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
