#!/usr/bin/env bash
# ctests conformance.<backend>.validated: the whole conformance suite with
# the core's validation layer stacked over the plugin (TESSERA_VALIDATE=1;
# for vulkan without the Khronos layer, which conformance.vulkan.validation
# runs).  The suite's work is correctly ordered, so the layer must stay
# silent, but for the two tests that wait on a never-recorded event on
# purpose (Events.NeverRecordedEvent and
# Graphs.WaitOnAnEventRecordedOutsideTheCaptureIsAnError).  Fails on any
# other report (a false positive of the layer, or a plugin whose stream
# behaviour the layer does not model), on any test failure, and when the
# layer reported nothing at all (it was not stacked: silence proves nothing).
# Exits 77 (skipped) when the backend is unavailable.
#
#   core_validation.sh <tessera-conformance> <backend> <report-dir>
set -u
conformance=$1
backend=$2
report=$3
rm -rf "$report"
mkdir -p "$report"
console="$report/console.log"
TESSERA_VALIDATE=1 TESSERA_VULKAN_VALIDATION=0 \
  "$conformance" --backend "$backend" --timeout 300 --unavailable-exit-code 77 \
  --report-dir "$report" > "$console" 2>&1
rc=$?
tail -n 5 "$console"
[ "$rc" -eq 77 ] && { echo "core_validation: $backend unavailable: skipped"; exit 77; }
status=0
if [ "$rc" -ne 0 ]; then
  echo "core_validation: FAILED: tessera-conformance exited with $rc (see $console)"
  status=1
fi
reports=$(cat "$console" "$report"/areas/*.log 2>/dev/null | grep -c "tessera validation ($backend)")
unexpected=$(cat "$console" "$report"/areas/*.log 2>/dev/null |
  grep "tessera validation ($backend)" | grep -v "was never recorded")
if [ -n "$unexpected" ]; then
  echo "core_validation: FAILED: the validation layer reported:"
  echo "$unexpected" | head -n 20
  status=1
fi
if [ "$reports" -eq 0 ]; then
  echo "core_validation: FAILED: no report at all (the deliberate waits on never-recorded events went unseen: was the layer stacked?)"
  status=1
fi
[ "$status" -eq 0 ] && echo "core_validation: passed ($backend): only the $reports deliberate reports"
exit "$status"
