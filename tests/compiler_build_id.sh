#!/bin/sh
# A rebuilt compiler is never answered from an older build's caches: the
# build_id a plugin reports for its compile targets (its compiler part's
# size and modification time, found without loading it) changes when the
# part changes, and the program cache is keyed on it.  Checked on a copy of
# the vulkan plugin and its part (the cpu plugin's part is found beside
# libtessera.so, which cannot be copied alone).
#   usage: compiler_build_id.sh <bin dir> <plugin dir>
set -eu
bin=$1 plugins=$2
[ -f "$plugins/libtessera_plugin_vulkan.so" ] || { echo "no vulkan plugin built: nothing to check"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/plugins/compilers"
cp "$plugins/libtessera_plugin_vulkan.so" "$work/plugins/"
cp "$plugins/compilers/libtessera_plugin_vulkan_compiler.so" "$work/plugins/compilers/"
build_id() {
  "$bin/tessera-info" --json --plugin-path "$work/plugins" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["plugins"]:
    if p["path"].startswith(sys.argv[1]):
        print(p["compile_targets"][0]["build_id"])' "$work/plugins"
}
touch -d '2026-01-01 00:00:00' "$work/plugins/compilers/libtessera_plugin_vulkan_compiler.so"
first=$(build_id)
[ -n "$first" ] || { echo "FAILED: the vulkan plugin reports no build_id for its compile target" >&2; exit 1; }
touch -d '2026-01-02 00:00:00' "$work/plugins/compilers/libtessera_plugin_vulkan_compiler.so"
second=$(build_id)
[ "$first" != "$second" ] ||
  { echo "FAILED: build_id did not change when the compiler part changed: $first" >&2; exit 1; }
echo "build_id follows the compiler part: $first -> $second"
