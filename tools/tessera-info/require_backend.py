#!/usr/bin/env python3
"""ctest <backend>_required (TESSERA_REQUIRE_VULKAN=ON): the backend must work.

    require_backend.py <tessera-info> <backend> [--expect-failure]

Every Vulkan test skips (exit 77) where Vulkan is unavailable, so that a
developer machine without a driver stays green.  In CI that would hide a
broken driver install (every Vulkan test skipped, the run still green).  This
check runs tessera-info with TESSERA_BACKEND=<backend> and FAILS, saying why,
unless that plugin is loaded and has at least one device.

--expect-failure inverts the result (exit 0 only when the check fails with its
message): ctest <backend>_required.detects_no_driver runs it with no Vulkan
driver, so the check is shown to be able to fail.
"""
import json
import os
import subprocess
import sys


def check(info, backend):
    """Returns (ok, message)."""
    env = dict(os.environ, TESSERA_BACKEND=backend)
    try:
        out = subprocess.run([info, "--json"], env=env, capture_output=True, text=True,
                             timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"cannot run {info}: {e}"
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        return False, (f"{info} --json exited with {out.returncode} and printed no JSON:\n"
                       f"{out.stdout}{out.stderr}")
    plugins = [p for p in doc.get("plugins", []) if p.get("name") == backend]
    if not plugins:
        return False, (f"no '{backend}' plugin was found (was it built? "
                       f"plugins seen: {[p.get('name') for p in doc.get('plugins', [])]})")
    usable = [p for p in plugins if p.get("state") in ("loaded", "available") and p.get("devices")]
    if not usable:
        why = "; ".join(f"{p.get('path')}: {p.get('state')}: {p.get('reason') or 'no device'}"
                        for p in plugins)
        return False, f"the {backend} backend has no usable device: {why}"
    names = [d.get("name") for p in usable for d in p["devices"]]
    return True, f"{backend}: {len(names)} device(s): {', '.join(names)}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    expect_failure = "--expect-failure" in sys.argv[1:]
    info, backend = args[0], args[1]
    ok, message = check(info, backend)
    option = f"TESSERA_REQUIRE_{backend.upper()}"
    if expect_failure:
        if ok:
            print(f"FAIL: the check passed where it must fail ({message})")
            return 1
        print(f"the check fails as it must: {message}")
        return 0
    if ok:
        print(message)
        return 0
    print(f"FAIL: {option} is ON (CI: scripts/test.sh), but {message}.\n"
          f"Every {backend} test would only have been skipped.  Fix the driver "
          f"install (scripts/install-deps.sh), or configure with -D{option}=OFF "
          f"on a machine that has no {backend}.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
