#!/bin/sh
# The installed package on its own (what a user gets from `cmake --install`):
#   1. every installed tool starts with no LD_LIBRARY_PATH (RUNPATH covers
#      the prefix's lib folder and LLVM's);
#   2. the installed tessera-info searches the installed plugin folder, not
#      the build tree;
#   3. examples/cpp_program, built OUT OF TREE against the prefix alone
#      (find_package(Tessera), Tessera::compiler), compiles and runs a program;
#   4. the installed tessera-compile and tessera-run work together;
#   5. the installed Python package (when it was built) imports from the
#      prefix alone and runs a program against numpy.
#   usage: install_check.sh <build dir> <repo root> <work dir>
set -eu
build=$1 root=$2 work=$3
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
say() { printf 'install_check: %s\n' "$*"; }
fail() { printf 'install_check: FAILED: %s\n' "$*" >&2; exit 1; }
unset LD_LIBRARY_PATH TESSERA_PLUGIN_PATH TESSERA_BACKEND || true
export TESSERA_CACHE_DIR=$work/cache

cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }

for tool in tessera-info tessera-run tessera-compile tessera-opt tessera-conformance; do
  [ -x "$prefix/bin/$tool" ] || fail "$tool is not installed"
  "$prefix/bin/$tool" --help > "$work/$tool.help" 2>&1 ||
    { cat "$work/$tool.help"; fail "the installed $tool does not start"; }
done
say "every installed tool starts without LD_LIBRARY_PATH"

"$prefix/bin/tessera-info" --json > "$work/info.json" || fail "the installed tessera-info"
python3 - "$work/info.json" "$prefix" "$build" <<'PY' || exit 1
import json, os, sys
info, prefix, build = json.load(open(sys.argv[1])), os.path.realpath(sys.argv[2]), os.path.realpath(sys.argv[3])
def in_build(p):  # the prefix itself may lie inside the build folder
    p = os.path.realpath(p)
    return p.startswith(build + "/") and not p.startswith(prefix + "/")
bad = [d for d in info["search_path"] if in_build(d)]
if bad:
    sys.exit("install_check: FAILED: the installed tessera-info searches the build tree: %s" % bad)
if not any(os.path.realpath(d).startswith(prefix) for d in info["search_path"]):
    sys.exit("install_check: FAILED: the installed tessera-info does not search %s: %s" % (prefix, info["search_path"]))
for p in info["plugins"]:
    if p["path"] != "<embedded>" and in_build(p["path"]):
        sys.exit("install_check: FAILED: plugin %s from the build tree: %s" % (p["name"], p["path"]))
    if p["name"].endswith("_compiler"):  # a compiler part is not a plugin
        sys.exit("install_check: FAILED: the compiler part %s is listed as a plugin" % p["path"])
print("install_check: tessera-info searches %s" % ", ".join(info["search_path"]))
PY

generator=
command -v ninja > /dev/null 2>&1 && generator="-G Ninja"
# shellcheck disable=SC2086
cmake $generator -S "$root/examples/cpp_program" -B "$work/app" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$work/app-configure.log" 2>&1 ||
  { cat "$work/app-configure.log"; fail "configuring examples/cpp_program against the prefix"; }
cmake --build "$work/app" > "$work/app-build.log" 2>&1 ||
  { cat "$work/app-build.log"; fail "building examples/cpp_program"; }
(cd "$work" && TESSERA_BACKEND=cpu "$work/app/tessera-example-program" "$root/examples/mlp.mlir") \
  > "$work/app.log" 2>&1 || { cat "$work/app.log"; fail "running examples/cpp_program"; }
grep -q '^OK$' "$work/app.log" || { cat "$work/app.log"; fail "examples/cpp_program did not finish"; }
say "examples/cpp_program: $(grep '^compiled' "$work/app.log")"

"$prefix/bin/tessera-compile" "$root/examples/softmax.mlir" --target cpu -o "$work/softmax.tsp" \
  > "$work/compile.log" 2>&1 || { cat "$work/compile.log"; fail "the installed tessera-compile"; }
TESSERA_BACKEND=cpu "$prefix/bin/tessera-run" "$work/softmax.tsp" --iterations 1 > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "the installed tessera-run on a compiled program"; }
grep -q PASS "$work/run.log" || { cat "$work/run.log"; fail "the installed tessera-run did not check"; }
say "installed tessera-compile -> tessera-run: $(grep verify "$work/run.log")"

pydir=$prefix/lib/python3/dist-packages
if ls "$pydir"/tessera/_tessera*.so > /dev/null 2>&1; then
  python=/usr/bin/python3
  [ -x "$python" ] || python=python3
  (cd "$work" && PYTHONPATH=$pydir TESSERA_BACKEND=cpu "$python" - "$pydir" "$root/examples/softmax.mlir") \
    > "$work/python.log" 2>&1 <<'PY' || { cat "$work/python.log"; fail "the installed Python package"; }
import os, sys
import numpy as np
import tessera
where = os.path.realpath(tessera.__file__)
assert where.startswith(os.path.realpath(sys.argv[1])), "tessera imported from %s" % where
fn = tessera.compile(sys.argv[2])
x = np.random.default_rng(0).standard_normal((512, 1024), np.float32)
e = np.exp(x - x.max(axis=1, keepdims=True))
np.testing.assert_allclose(fn(x), e / e.sum(axis=1, keepdims=True), rtol=1e-3, atol=1e-6)
print("python: tessera from", os.path.dirname(where), "ran", fn.program.function)
PY
  say "$(cat "$work/python.log")"
else
  say "python: no installed package (built with TESSERA_PYTHON=OFF or without pybind11): not checked"
fi
say "OK"
