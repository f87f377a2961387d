#!/usr/bin/env bash
# The conformance suite on TWO Vulkan devices: Mesa's lavapipe registered
# twice (a copy of its driver under a second ICD file; the Vulkan loader
# then enumerates two physical devices), so that the areas that need
# devices>=2 run for real on the Vulkan plugin: peer copies, collectives
# across devices (host-staged), streams of one device used with buffers of
# another.  Exits 77 (ctest SKIP) when lavapipe is not installed.
#   usage: vulkan_two_devices.sh TESSERA_CONFORMANCE REPORT_DIR
set -u
CTS=$1 REPORT=$2
ICD=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -1)
if [[ -z "$ICD" ]]; then echo "no lavapipe ICD (mesa-vulkan-drivers): skipped"; exit 77; fi
LIB=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$ICD")
if [[ ! -f "$LIB" ]]; then echo "lavapipe driver $LIB missing: skipped"; exit 77; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$LIB" "$T/libvulkan_lvp_second.so"
python3 - "$ICD" "$T" <<'PY'
import json, sys
icd = json.load(open(sys.argv[1]))
icd["ICD"]["library_path"] = sys.argv[2] + "/libvulkan_lvp_second.so"
json.dump(icd, open(sys.argv[2] + "/lvp_second.json", "w"))
PY
export VK_ICD_FILENAMES="$ICD:$T/lvp_second.json"
out=$("$CTS" --backend vulkan --timeout 120 --unavailable-exit-code 77 --report-dir "$REPORT" 2>&1); rc=$?
echo "$out"
[[ $rc -eq 77 ]] && exit 77
if [[ $rc -ne 0 ]]; then echo "FAIL: conformance exit $rc"; exit 1; fi
# The point of the test: nothing skipped for want of a second device.
if grep -q "devices>=2" <<<"$out"; then echo "FAIL: a test still lacked a second device"; exit 1; fi
grep -q "Collectives.SpansSeveralDevices" <<<"$out" && { echo "FAIL: SpansSeveralDevices did not pass"; exit 1; }
echo "two Vulkan devices: every devices>=2 test ran"
