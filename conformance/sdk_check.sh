#!/bin/sh
# The plugin SDK end to end (docs/plugin-sdk.md), as CI runs it:
#   1. cmake --install the main build into a fresh prefix;
#   2. configure and build examples/plugin_skeleton OUT OF TREE against that
#      prefix only (CMAKE_PREFIX_PATH), with find_package(Tessera) and
#      tessera_add_plugin();
#   3. load it with TESSERA_PLUGIN_PATH (tessera-info) and run the INSTALLED
#      tessera-conformance --plugin on it;
#   4. check that the runner exited with a report, no area crashed or timed
#      out, and every test is unsupported or failed cleanly (with a message).
#
# usage: sdk_check.sh <main build dir> <skeleton source dir> <work dir>
set -eu
build=$1
skeleton=$2
work=$3
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

say() { printf 'sdk_check: %s\n' "$*"; }
fail() { printf 'sdk_check: FAILED: %s\n' "$*" >&2; exit 1; }

say "installing $build into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
for f in include/tessera/plugin.h include/tessera/runtime.hpp \
         include/tessera/status.hpp include/tessera/cpu_kernel.h \
         include/tessera/ir_version.h include/tessera/program.hpp \
         include/tessera/program_compiler.hpp bin/tessera-conformance; do
  [ -e "$prefix/$f" ] || fail "the installation lacks $f"
done
ls "$prefix"/lib*/cmake/Tessera/TesseraConfig.cmake > /dev/null 2>&1 ||
  ls "$prefix"/lib/*/cmake/Tessera/TesseraConfig.cmake > /dev/null 2>&1 ||
  fail "the installation lacks TesseraConfig.cmake"

say "configuring the skeleton out of tree against $prefix"
generator=
command -v ninja > /dev/null 2>&1 && generator="-G Ninja"
# shellcheck disable=SC2086
cmake $generator -S "$skeleton" -B "$work/skeleton-build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_INSTALL_PREFIX="$work/skeleton-prefix" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configuring the skeleton"; }
cmake --build "$work/skeleton-build" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "building the skeleton"; }
cmake --install "$work/skeleton-build" > "$work/skeleton-install.log" 2>&1 ||
  { cat "$work/skeleton-install.log"; fail "installing the skeleton"; }
plugin=$(find "$work/skeleton-prefix" -name libtessera_plugin_skeleton.so | head -n 1)
[ -n "$plugin" ] || fail "tessera_add_plugin(... INSTALL) installed no plugin"
say "built and installed $plugin"

# Only the entry point is exported.
if command -v nm > /dev/null 2>&1; then
  exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u)
  [ "$exported" = "tessera_plugin_get_api" ] ||
    fail "the plugin exports more than tessera_plugin_get_api: $exported"
fi

# tessera-info sees it through TESSERA_PLUGIN_PATH (when installed).
# LD_LIBRARY_PATH: the installed tessera-info carries no RPATH to libdir.
if [ -x "$prefix/bin/tessera-info" ]; then
  libdir=$(dirname "$(find "$prefix" -name 'libtessera_core.so*' | head -n 1)")
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  TESSERA_PLUGIN_PATH=$(dirname "$plugin") "$prefix/bin/tessera-info" \
    > "$work/tessera-info.txt" 2>&1 || true
  grep -q skeleton "$work/tessera-info.txt" ||
    { cat "$work/tessera-info.txt"; fail "tessera-info does not list the skeleton"; }
fi

# Installed into Tessera's own prefix, the core finds it without any path.
cmake --install "$work/skeleton-build" --prefix "$prefix" > /dev/null 2>&1 ||
  fail "installing the skeleton into $prefix"
if [ -x "$prefix/bin/tessera-info" ]; then
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$prefix/bin/tessera-info" > "$work/tessera-info-prefix.txt" 2>&1 || true
  grep -q skeleton "$work/tessera-info-prefix.txt" ||
    { cat "$work/tessera-info-prefix.txt"; fail "the core does not find the skeleton installed in its prefix"; }
fi

# Its compiler (plugin ABI 1.2): tessera-info lists its target, and the
# installed tessera-compile reaches its Compiler_Compile, which checks the
# request and says the lowering is the part to write.
if [ -x "$prefix/bin/tessera-info" ]; then
  grep -q "compiles for skeleton -> skeleton-elf" "$work/tessera-info-prefix.txt" ||
    { cat "$work/tessera-info-prefix.txt"; fail "tessera-info does not list the skeleton's compile target"; }
fi
if [ -x "$prefix/bin/tessera-compile" ]; then
  set +e
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$prefix/bin/tessera-compile" "$skeleton/../saxpy.mlir" --target skeleton -o "$work/s.tsp" \
    > "$work/compile.txt" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 1 ] && grep -q "lowering Tile IR is not implemented yet" "$work/compile.txt" ||
    { cat "$work/compile.txt"; fail "tessera-compile --target skeleton did not reach the skeleton's compiler (exit $rc)"; }
  say "tessera-compile --target skeleton: $(grep -o 'lowering Tile IR is not implemented yet' "$work/compile.txt")"
fi

say "running the installed tessera-conformance on the skeleton"
report=$work/report
set +e
timeout 300 "$prefix/bin/tessera-conformance" --plugin "$plugin" \
  --timeout 30 --report-dir "$report" > "$work/conformance.txt" 2>&1
rc=$?
set -e
cat "$work/conformance.txt"
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "tessera-conformance exited with $rc"
for f in report.json junit.xml report.md; do
  [ -s "$report/$f" ] || fail "no $f in $report"
done
grep -q '^[0-9]* passed, [0-9]* failed, [0-9]* skipped$' "$work/conformance.txt" ||
  fail "no summary line"

python3 - "$report/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
total = 0
for area in r["areas"]:
    if area["incidents"]:
        bad.append("%s: %s" % (area["name"], "; ".join(area["incidents"])))
    for t in area["tests"]:
        total += 1
        if t["result"] == "unsupported":
            continue
        if t["result"] == "failed" and t.get("message"):
            continue
        bad.append("%s: %s %s" % (t["name"], t["result"], t.get("message", "")))
if total == 0:
    bad.append("no test ran")
if r["plugin"].get("name") != "skeleton":
    bad.append("the report names plugin %r, not skeleton" % r["plugin"].get("name"))
if bad:
    print("sdk_check: not clean:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("sdk_check: %d tests, every one unsupported or failed cleanly; no crash, no hang"
      % total)
PY
grep -q "is not implemented yet" "$report/report.json" ||
  fail "the failures do not carry the skeleton's UNIMPLEMENTED message"
say "OK"
