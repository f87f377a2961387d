#!/usr/bin/env bash
# Runs a command on the vulkan backend under VK_LAYER_KHRONOS_validation
# (TESSERA_VALIDATE=1: the plugin enables the layer by name and routes its
# messages to stderr) and fails when
#  - the command fails (exit status other than 0),
#  - any validation message appears in its output,
#  - the layer was not active (the plugin prints "validation layer
#    VK_LAYER_KHRONOS_validation active" when it is): silence from a layer
#    that never loaded proves nothing,
#  - its output reports a failed or unchecked result (tessera-run's
#    ": FAIL", "verify: no reference").
# Exits 77 (skipped) when the command exits 77 without the layer too (no
# Vulkan here); a 77 only under the layer is a failure.
#
#   run_under_validation.sh <name> <command> [args...]
set -u
name=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
TESSERA_BACKEND=vulkan TESSERA_VALIDATE=1 VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
  "$@" > "$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -eq 77 ]; then
  if TESSERA_BACKEND=vulkan "$@" > /dev/null 2>&1; [ $? -eq 77 ]; then
    echo "$name: no usable Vulkan device here: skipped"
    exit 77
  fi
  echo "$name: FAILED: Vulkan works, but not with VK_LAYER_KHRONOS_validation"
  exit 1
fi
status=0
pattern='tessera vulkan: validation (error|warning)|Validation Error|VUID-'
if grep -E -q "$pattern" "$log"; then
  echo "$name: FAILED: the validation layer reported:"
  grep -E "$pattern" "$log" | head -20
  status=1
fi
if ! grep -q "validation layer VK_LAYER_KHRONOS_validation active" "$log"; then
  echo "$name: FAILED: the validation layer was not active"
  status=1
fi
if grep -E -q ": FAIL|verify: no reference" "$log"; then
  echo "$name: FAILED: the result was wrong or not checked"
  status=1
fi
if [ "$rc" -ne 0 ]; then
  echo "$name: FAILED: the command exited with $rc"
  status=1
fi
[ "$status" -eq 0 ] && echo "$name: passed under VK_LAYER_KHRONOS_validation, no validation message"
exit "$status"
