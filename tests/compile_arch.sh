#!/bin/sh
# With a device, Graph IR is scheduled for the architecture the plugin says
# it compiles for there (TsDeviceProperties.compile_arch, ABI 1.5), not for
# the target's default: the "ARCH:key=value" tokens of the target schedule
# that apply are the device's (cuda: sm_90a:mma=wgmma on an H100; hip:
# gfx90a:mma=mfma on an MI250).  The archdevice test plugin (the cpu plugin,
# tests/plugins/archdevice.cpp) lists "native,testarch", reports
# TESSERA_TEST_COMPILE_ARCH as its device's arch, and adds the token
# "testarch:mma=bogus", which fails lowering exactly when it applies.
# Usage: compile_arch.sh <tessera-run> <dir of libtessera_plugin_archdevice.so> <examples>
set -u
run=$1 plugins=$2 examples=$3
cache=$(mktemp -d) && trap 'rm -rf "$cache"' EXIT
export TESSERA_PLUGIN_PATH=$plugins TESSERA_BACKEND=archdevice TESSERA_CACHE_DIR=$cache
fail=0
check() {  # check NAME EXPECTED-EXIT PATTERN [NOT-PATTERN]
  name=$1 want=$2 pattern=$3 notpattern=${4:-}
  out=$(timeout 120 "$run" "$examples/mlp.mlir" --iterations 1 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pattern" ||
     { [ -n "$notpattern" ] && printf '%s\n' "$out" | grep -q -- "$notpattern"; }; then
    echo "FAIL: $name: exit $rc (wanted $want), output:"; printf '%s\n' "$out" | tail -20; fail=1
  else
    echo "ok: $name"
  fi
}
# No arch reported: the target's default (native), which has no such token
# (and the compiled program is cached).
TESSERA_TEST_COMPILE_ARCH= check "no arch: the default" 0 "verify: .*PASS" "mma=bogus"
# The device compiles for testarch: its token applies, lowering fails; the
# program cached for the default arch is not taken for it.
TESSERA_TEST_COMPILE_ARCH=testarch check "the device's arch schedules" 1 "mma=bogus is not a matmul unit"
# An arch the target does not list: a warning, then the default (compiled
# afresh: the default's program is cached, and rightly taken).
TESSERA_CACHE_DIR=$cache/fresh TESSERA_TEST_COMPILE_ARCH=elsewhere check "an unlisted arch: the default" 0 \
  "compiles for 'elsewhere', which is not one of target 'cpu''s architectures" "mma=bogus"
# An explicit --target arch wins over the device's.
out=$(TESSERA_TEST_COMPILE_ARCH=testarch timeout 120 "$run" "$examples/mlp.mlir" --target cpu:native --iterations 1 2>&1)
if printf '%s\n' "$out" | grep -q "mma=bogus" || ! printf '%s\n' "$out" | grep -q "verify: .*PASS"; then
  echo "FAIL: --target cpu:native: the device's arch taken, or no result:"; printf '%s\n' "$out" | tail -5; fail=1
else
  echo "ok: --target wins"
fi
exit $fail
