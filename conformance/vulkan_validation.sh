#!/usr/bin/env bash
# ctest conformance.vulkan.validation: the whole conformance suite on the
# Vulkan plugin under VK_LAYER_KHRONOS_validation (TESSERA_VALIDATE=1, which
# makes the plugin enable the layer by name and route its messages to
# stderr).  Fails when
#  - any test fails (the runner's exit status),
#  - any validation message appears: in the runner's output or in any area's
#    log (each area runs in a child process whose output goes to
#    <report>/areas/<area>.log),
#  - the layer was not active in an area (the plugin prints "validation layer
#    VK_LAYER_KHRONOS_validation active" when it is): silence from a layer
#    that never loaded proves nothing.
# Exits 77 (skipped) when the machine has no Vulkan at all.
#
#   vulkan_validation.sh <tessera-conformance> <report-dir>
set -u
conformance=$1
report=$2
rm -rf "$report"
mkdir -p "$report"
console="$report/console.log"
# Is there a Vulkan at all?  Without one, skip; with one, an "unavailable"
# under the layer below is a failure (the layer broke instance creation).
"$conformance" --backend vulkan --areas device --unavailable-exit-code 77 \
  --report-dir "$report/plain" > "$report/plain.log" 2>&1
if [ $? -eq 77 ]; then
  echo "conformance.vulkan.validation: no Vulkan here: skipped"
  exit 77
fi
TESSERA_VALIDATE=1 VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
  "$conformance" --backend vulkan --timeout 300 --unavailable-exit-code 77 \
  --report-dir "$report" > "$console" 2>&1
rc=$?
cat "$console"
if [ "$rc" -eq 77 ]; then
  echo "conformance.vulkan.validation: FAILED: Vulkan works, but not with VK_LAYER_KHRONOS_validation"
  exit 1
fi
pattern='tessera vulkan: validation (error|warning)|Validation Error|VUID-'
status=0
if grep -E -n "$pattern" "$console" "$report"/areas/*.log; then
  echo "conformance.vulkan.validation: FAILED: the validation layer reported the messages above"
  status=1
fi
missing=""
for log in "$report"/areas/*.log; do
  grep -q "validation layer VK_LAYER_KHRONOS_validation active" "$log" ||
    missing="$missing $(basename "$log")"
done
if [ -z "$(ls "$report"/areas/*.log 2>/dev/null)" ]; then
  echo "conformance.vulkan.validation: FAILED: no area log in $report/areas"
  status=1
elif [ -n "$missing" ]; then
  echo "conformance.vulkan.validation: FAILED: the validation layer was not active in:$missing"
  status=1
fi
if [ "$rc" -ne 0 ]; then
  echo "conformance.vulkan.validation: FAILED: tessera-conformance exited with $rc"
  status=1
fi
[ "$status" -eq 0 ] && echo "conformance.vulkan.validation: passed, no validation message, layer active in every area"
exit "$status"
