#!/usr/bin/env bash
# tessera-conformance against plugins with one fault each
# (plugins/cpu_with_fault.cpp): what the runner reports must never read
# better than what happened.
#   usage: conformance_runner.sh TESSERA_CONFORMANCE FAULT_PLUGIN_DIR TEST_PLUGIN_DIR
set -u
CTS=$1 DIR=$2 TEST_PLUGINS=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@" | tail -20; fail=1; }

# A plugin that calls _exit(0) inside a test: the test fails, the area has
# an incident, and no test of the area goes missing (the exit read as a
# pass, the rest of the area was dropped and the plugin certified Full).
out=$("$CTS" --plugin "$DIR/libtessera_plugin_exit0_in_test.so" --areas events --report-dir "$T/exit0" 2>&1); rc=$?
want=$("$CTS" --backend cpu --areas events --report-dir "$T/cpu" 2>&1 | grep -o '^\[events *\] [A-Z]* *[0-9]* passed, [0-9]* failed, [0-9]* skipped')
total() { awk '{ for (i = 1; i <= NF; ++i) if ($(i+1) ~ /^(passed|failed|skipped)/) s += $i } END { print s }'; }
got_line=$(grep -o '^\[events *\] [A-Z]* *[0-9]* passed, [0-9]* failed, [0-9]* skipped' <<<"$out")
if [[ $rc -ne 1 ]]; then bad "exit0_in_test: exit $rc (want 1)" "$out"
elif [[ "$out" != *"INCIDENT     exited with code 0 in Events."* ]]; then bad "exit0_in_test: no incident" "$out"
elif [[ "$out" != *"Certification level: None"* ]]; then bad "exit0_in_test: certified" "$out"
elif [[ $(total <<<"$got_line") -ne $(total <<<"$want") ]]; then
  bad "exit0_in_test: $(total <<<"$got_line") tests reported, the area has $(total <<<"$want")" "$got_line" "$want"
else ok "exit0_in_test: $got_line"; fi

# Optional entry points left NULL (docs/abi.md): the abi area skips what
# needs them ("unsupported: entry point ..."), never crashes.
out=$("$CTS" --plugin "$DIR/libtessera_plugin_null_optionals.so" --areas abi --report-dir "$T/null" 2>&1); rc=$?
if [[ $rc -ne 0 || "$out" == *INCIDENT* || "$out" != *"[abi        ] PASSED"* ]]; then bad "null_optionals: exit $rc" "$out"
else ok "null_optionals: $(grep -m1 '^\[abi' <<<"$out")"; fi
if ! grep -q "| unsupported | entry point Event_Create |" "$T/null/report.md"; then
  bad "null_optionals: the skips do not name the entry point" "$(grep -m3 unsupported "$T/null/report.md")"
fi

# --unavailable-exit-code turns only UNAVAILABLE into a skip: a plugin that
# refuses to create a client, an ABI mismatch, a missing file and a bad
# option are failures (they all gave the skip code).
expect_rc() {  # name want-rc want-substring args...
  local name=$1 want=$2 text=$3; shift 3
  local out rc
  out=$("$CTS" "$@" --unavailable-exit-code 77 --areas device --report-dir "$T/$name" 2>&1); rc=$?
  if [[ $rc -ne $want ]]; then bad "$name: exit $rc (want $want)" "$out"
  elif [[ "$out" != *"$text"* ]]; then bad "$name: output lacks '$text'" "$out"
  else ok "$name: exit $rc"; fi
}
expect_rc bad_create 1 "INVALID_ARGUMENT" --plugin "$DIR/libtessera_plugin_bad_create.so"
expect_rc abi_major 1 "ABI_MISMATCH" --plugin "$TEST_PLUGINS/libtessera_plugin_major2.so"
expect_rc unknown_option 1 "unknown option" --backend cpu --plugin-option cpu.devcies=2
expect_rc no_driver 77 "the backend is unavailable" --plugin "$TEST_PLUGINS/libtessera_plugin_nodriver.so"
expect_rc missing_file 2 "No such file or directory" --plugin "$T/nope.so"

# Options that would misplace the report or never time out.
expect_usage() {  # name substring args...
  local name=$1 text=$2; shift 2
  local out rc
  out=$("$CTS" --backend cpu "$@" 2>&1); rc=$?
  if [[ $rc -ne 2 || "$out" != *"$text"* ]]; then bad "$name: exit $rc (want 2 and '$text')" "$out"
  else ok "$name: $out"; fi
}
expect_usage report_dir_empty "--report-dir needs a folder" --report-dir ""
expect_usage timeout_nan "--timeout needs a number of seconds" --timeout nan --report-dir "$T/x"
expect_usage timeout_inf "--timeout needs a number of seconds" --timeout inf --report-dir "$T/x"
expect_usage areas_empty "--areas needs at least one area" --areas "" --report-dir "$T/x"
expect_usage option_of_another_plugin "--plugin-option vulkan.validation=1 is for plugin 'vulkan', but this run tests cpu" \
  --plugin-option vulkan.validation=1 --report-dir "$T/x"
exit $fail
