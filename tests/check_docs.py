#!/usr/bin/env python3
"""Keeps docs/ in step with the code (ctest docs.check).

What a user reads must name what exists, and what exists must be written
down.  Checked here:
  1. every repository path quoted in docs/*.md and README.md exists;
  2. every environment variable the libraries and tools read
     (getenv("TESSERA_...") outside tests) is in docs/runtime.md;
  3. every plugin option `tessera-info --json` lists is in docs/runtime.md
     as TESSERA_<PLUGIN>_<OPTION>, and every compile option of every
     compile target is named somewhere in docs/;
  4. every flag of tessera-run, tessera-compile and tessera-info --help is
     named somewhere in docs/ or README.md;
  5. the conformance suite's test counts (per area and in total) in
     docs/conformance.md.
Each failure says what is missing and where it should go.

usage: check_docs.py <source dir> <bin dir>
"""
import glob
import json
import os
import re
import subprocess
import sys

SRC, BIN = sys.argv[1], sys.argv[2]
failures = []


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


docs = {p: read(p) for p in sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))}
docs[os.path.join(SRC, "README.md")] = read(os.path.join(SRC, "README.md"))
all_docs = "\n".join(docs.values())
runtime_md = read(os.path.join(SRC, "docs", "runtime.md"))

# 1. Paths. Only quoted ones under a top-level folder of the repository;
# {a,b} alternatives and globs are expanded.
TOP = {d for d in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, d)) and not d.startswith(".")}
TOP |= {".ci"}
for path, text in docs.items():
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"`([A-Za-z0-9_.{}*,/-]+/[A-Za-z0-9_.{}*,/-]*)`", line):
            quoted = m.group(1)
            if quoted.split("/")[0] not in TOP or quoted.split("/")[0] == "build":
                continue
            alts = [quoted]
            brace = re.search(r"\{([^}]*)\}", quoted)
            if brace:
                alts = [quoted[: brace.start()] + a + quoted[brace.end():] for a in brace.group(1).split(",")]
            for alt in alts:
                alt = alt.rstrip("/.,")
                if not glob.glob(os.path.join(SRC, alt)):
                    failures.append(f"{os.path.relpath(path, SRC)}:{lineno}: names `{alt}`, which does not exist "
                                    "(moved or renamed? update the page)")

# 2. Environment variables read outside tests.
env_vars = set()
for folder in ("core", "program", "tools", "plugins", "ir"):
    for f in glob.glob(os.path.join(SRC, folder, "**", "*.*"), recursive=True):
        base = os.path.basename(f)
        if not f.endswith((".c", ".cpp", ".h", ".hpp")) or "_test" in base or "/test" in f[len(SRC):]:
            continue
        env_vars |= set(re.findall(r'getenv\("(TESSERA_[A-Z0-9_]+)"\)', read(f)))
for var in sorted(env_vars):
    if var not in runtime_md:
        failures.append(f"docs/runtime.md: the code reads {var} but the environment table does not name it")

# 3. Plugin options and compile options, as the plugins declare them.
info = subprocess.run([os.path.join(BIN, "tessera-info"), "--json"], capture_output=True, text=True)
try:
    plugins = json.loads(info.stdout)["plugins"]
except (ValueError, KeyError) as e:
    failures.append(f"tessera-info --json did not give a plugin list ({e}): {info.stderr.strip()}")
    plugins = []
for plugin in plugins:
    name = plugin.get("name", "")
    for opt in plugin.get("options", []):
        var = f"TESSERA_{name.upper()}_{opt['name'].upper()}"
        # Options the core sets from its own variables are documented there.
        if opt["name"] in ("cache_dir", "validation"):
            continue
        if var not in runtime_md:
            failures.append(f"docs/runtime.md: plugin {name} declares option '{opt['name']}' "
                            f"but {var} is not documented")
    for target in plugin.get("compile_targets", []):
        for opt in target.get("options", []):
            if f"`{opt['name']}`" not in all_docs and f"{opt['name']}=" not in all_docs:
                failures.append(f"docs/: compile target {target['name']} of plugin {name} declares option "
                                f"'{opt['name']}', named on no page (docs/program.md lists compile options)")

# 4. Tool flags.
for tool in ("tessera-run", "tessera-compile", "tessera-info"):
    exe = os.path.join(BIN, tool)
    if not os.path.exists(exe):
        failures.append(f"{exe} was not built")
        continue
    out = subprocess.run([exe, "--help"], capture_output=True, text=True)
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", out.stdout + out.stderr)) - {"--help"}
    if not flags:
        failures.append(f"{tool} --help listed no flag: {out.stdout[:200]}{out.stderr[:200]}")
    for flag in sorted(flags):
        if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", all_docs):
            failures.append(f"docs/: {tool} {flag} (in its --help) is named on no page")

# 5. The conformance suite's counts in docs/conformance.md: per area and in
# total, as tessera-conformance --gtest_list_tests lists them.
cts = os.path.join(BIN, "tessera-conformance")
if os.path.exists(cts):
    listed = subprocess.run([cts, "--gtest_list_tests"], capture_output=True, text=True).stdout
    counts, suite = {}, None
    for line in listed.splitlines():
        if line and not line.startswith(" "):
            suite = line.strip().rstrip(".").lower()
            counts[suite] = 0
        elif line.strip() and suite:
            counts[suite] += 1
    conformance_md = docs[os.path.join(SRC, "docs", "conformance.md")]
    for area, n in counts.items():
        m = re.search(r"^\| " + re.escape(area) + r" \| (\d+) \|", conformance_md, re.M)
        if not m:
            failures.append(f"docs/conformance.md: the areas table has no row for area {area} ({n} tests)")
        elif int(m.group(1)) != n:
            failures.append(f"docs/conformance.md: area {area} has {n} tests; the table says {m.group(1)}")
    total = sum(counts.values())
    m = re.search(r"^\| \*\*total\*\* \| \*\*(\d+)\*\* \| \|", conformance_md, re.M)
    if not m or int(m.group(1)) != total:
        failures.append(f"docs/conformance.md: the suite has {total} tests; the table's total says "
                        f"{m.group(1) if m else 'nothing'}")
    if f"{total} tests." not in conformance_md:
        failures.append(f"docs/conformance.md: the text before the areas table should say '{total} tests.'")

for f in failures:
    print("FAIL", f)
print(f"docs.check: {len(failures)} problem(s)")
sys.exit(1 if failures else 0)
