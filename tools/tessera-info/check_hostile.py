#!/usr/bin/env python3
"""tessera-info survives hostile plugins (issue 17, isolation).

Runs tessera-info (text and --json) with the folder of hostile test plugins
(tests/plugins/hostile.cpp: crash, abort in a constructor, exit(), hang,
crash in the entry point, lying answers) in its plugin path and
TESSERA_BACKEND=crash_create,hang_create,cpu.  It must finish, select cpu,
and list each hostile file with a reason that says what happened.  Then the
same with TESSERA_PLUGIN_ISOLATION=off and only the plugins that answer
badly (not those that crash): the in-process checks alone must hold.

usage: check_hostile.py <tessera-info> <hostile plugin dir>
"""
import json
import os
import subprocess
import sys

INFO, DIR = sys.argv[1], sys.argv[2]
failures = []

EXPECTED = {
    "crash_create": "crashed its probe process (SIGSEGV) while in Client_Create",
    "abort_ctor": "crashed its probe process (SIGABRT) while loading it (its library constructors)",
    "exit_create": "ended its probe process with exit status 0 while in Client_Create",
    "hang_create": "hangs: its probe process did not finish within 1 s while in Client_Create",
    "crash_entry": "crashed its probe process (SIGSEGV) while calling its entry point",
    "lying_table": "crashed its probe process (SIGSEGV) while in Client_Create",
    "lying_devices": "Client_GetDevices returned 1099511627776 devices",
    "null_devices": "Client_GetDevices returned 2 devices without a device array",
    "code0_error": "Client_Create returned an error object whose code is 0 (success)",
    "huge_message": "a message that claims SIZE_MAX bytes",
    "null_client": "Client_Create returned success without setting its out-pointer 'client'",
}


def run(args, env_extra):
    env = dict(os.environ, TESSERA_PLUGIN_PATH="", TESSERA_PLUGIN_PROBE_TIMEOUT="1",
               TESSERA_BACKEND="crash_create,hang_create,cpu")
    env.update(env_extra)
    try:
        return subprocess.run([INFO] + args, capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        failures.append(f"tessera-info {' '.join(args)} did not finish within 120 s")
        return None


def check(plugins, names, label):
    for name in names:
        path = os.path.join(DIR, f"libtessera_plugin_{name}.so")
        if not os.path.exists(path):
            failures.append(f"{label}: {path} was not built")
            continue
        entry = next((p for p in plugins if p["path"].endswith(f"libtessera_plugin_{name}.so")), None)
        if entry is None:
            failures.append(f"{label}: {name} is not listed")
        elif entry["state"] not in ("rejected", "unavailable") or EXPECTED[name] not in entry["reason"]:
            failures.append(f"{label}: {name}: state {entry['state']}, reason {entry['reason']!r}; "
                            f"expected a reason with {EXPECTED[name]!r}")


# Isolation on: everything, crashing ones included.
out = run(["--json", "--plugin-path", DIR], {})
if out is not None:
    if out.returncode != 0:
        failures.append(f"tessera-info --json exited with {out.returncode}: {out.stderr.strip()}")
    else:
        report = json.loads(out.stdout)
        if report["selected_backend"] != "cpu":
            failures.append(f"selected {report['selected_backend']!r}, not cpu")
        check(report["plugins"], EXPECTED, "isolation on")
text = run(["--plugin-path", DIR], {})
if text is not None and ("Selected backend: cpu" not in text.stdout or
                         "crashed its probe process (SIGSEGV)" not in text.stdout):
    failures.append(f"tessera-info (text) did not report the crash and select cpu:\n{text.stdout}")

# Isolation off: the plugins that lie (they do not crash) are caught in process.
liars = ["lying_devices", "null_devices", "code0_error", "huge_message", "null_client"]
args = ["--json"]
for name in liars:
    args += ["--plugin-path", os.path.join(DIR, f"libtessera_plugin_{name}.so")]
out = run(args, {"TESSERA_PLUGIN_ISOLATION": "off", "TESSERA_BACKEND": ",".join(liars) + ",cpu"})
if out is not None:
    if out.returncode != 0:
        failures.append(f"isolation off: tessera-info exited with {out.returncode}: {out.stderr.strip()}")
    else:
        check(json.loads(out.stdout)["plugins"], liars, "isolation off")

for f in failures:
    print("FAIL:", f)
if not failures:
    print("tessera-info survives every hostile plugin and names each")
sys.exit(1 if failures else 0)
