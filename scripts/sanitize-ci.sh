#!/usr/bin/env bash
# CI's sanitizer stage (scripts/test.sh; README "Building by hand"): a
# core-only build (TESSERA_BUILD_IR=OFF: the runtime, the cpu plugin and the
# unit tests; no MLIR, so it fits CI's time) under
#  - address: AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer
#    over every unit test of tessera_tests, in build-ci-address;
#  - thread: ThreadSanitizer over the same tests, in build-ci-thread.
# TESSERA_SANITIZE_CONFORMANCE=ON adds the whole conformance suite on cpu to
# the address run (the plugin has no compiler part in this build, so it
# lists no compile targets and the areas that compile report "unsupported:
# compiler"). CI (scripts/test.sh) runs:
#   TESSERA_SANITIZE_CONFORMANCE=ON bash scripts/sanitize-ci.sh address thread
# The vulkan plugin is not built here (cpu only: its sanitizer run is
# scripts/sanitize.sh).  The full sanitizer builds, compilers included, are
# scripts/sanitize.sh.
#   bash scripts/sanitize-ci.sh [address|thread]...   (default: address)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
KINDS=("$@")
[[ ${#KINDS[@]} -eq 0 ]] && KINDS=(address)
CONFORMANCE=${TESSERA_SANITIZE_CONFORMANCE:-OFF}
for kind in "${KINDS[@]}"; do
  dir=build-ci-$kind
  start=$SECONDS
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE="$kind" \
    -DTESSERA_BUILD_IR=OFF -DTESSERA_BUILD_BENCH=OFF -DTESSERA_PYTHON=OFF -DTESSERA_WITH_MPI=OFF \
    -DTESSERA_REQUIRE_VULKAN=OFF -DTESSERA_HAVE_VULKAN_HEADERS=OFF >/dev/null
  targets=(tessera_tests)
  [[ $kind == address && $CONFORMANCE == ON ]] && targets+=(tessera-conformance)
  cmake --build "$dir" -j "$JOBS" --target "${targets[@]}"
  if [[ $kind == address ]]; then
    # As scripts/sanitize.sh: the plugins are dlopened by the programs that
    # link the runtime (verify_asan_link_order=0).  No Vulkan here
    # (TESSERA_HAVE_VULKAN_HEADERS=OFF: tessera-conformance would otherwise
    # build the vulkan plugin), so no driver to pin (scripts/pin_library.c).
    export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:allow_user_poisoning=0:detect_odr_violation=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  else
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  fi
  # Only what was built: the unit tests of tessera_tests (the other test
  # programs of the tree are not built here).
  (cd "$dir" && ctest -L unit -E "_NOT_BUILT|^compiler[.]|^core[.]" --output-on-failure -j "$JOBS" --timeout 300)
  if [[ $kind == address && $CONFORMANCE == ON ]]; then
    # Every area: without its compiler part (it needs the IR) the cpu
    # plugin lists no compile targets, so the compiler, kernels and layouts
    # areas and the compile cases of abi report "unsupported: compiler".
    "$dir/bin/tessera-conformance" --backend cpu --timeout 300 --report-dir "$dir/conformance-report/cpu"
  fi
  unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
  echo "sanitize-ci: $kind done in $((SECONDS - start)) s"
done
