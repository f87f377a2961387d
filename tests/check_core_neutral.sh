#!/bin/sh
# The core is hardware-neutral (DESIGN.md): libtessera_core.so includes and
# links no plugin.  Checked on the sources (no include of plugins/, no
# plugin target linked) and on the library (no plugin symbol defined, no
# plugin library needed).
#   usage: check_core_neutral.sh <repo root> <libtessera_core.so>
set -eu
root=$1 lib=$2
fail() { echo "check_core_neutral: FAILED: $*" >&2; exit 1; }
if grep -rnE '#include *"(plugins/|cpu_|vulkan)' "$root/core"; then
  fail "core/ includes plugin headers (above)"
fi
if grep -nE 'tessera_(cpu|vulkan)_plugin|tessera_plugin_(cpu|vulkan)' "$root/core/CMakeLists.txt"; then
  fail "core/CMakeLists.txt links a plugin (above)"
fi
if nm -D --defined-only "$lib" | grep -iE 'tessera_(cpu|vulkan)|TsCpu'; then
  fail "$lib defines plugin symbols (above)"
fi
if objdump -p "$lib" | grep NEEDED | grep -i plugin; then
  fail "$lib needs a plugin library (above)"
fi
echo "check_core_neutral: libtessera_core.so includes, links and defines no plugin"
