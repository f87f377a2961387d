#!/usr/bin/env bash
# Builds Tessera with a sanitizer into build-<kind> and runs every test.
#   bash scripts/sanitize.sh address     # ASan + UBSan + LeakSanitizer
#   bash scripts/sanitize.sh thread      # ThreadSanitizer
#   bash scripts/sanitize.sh undefined   # UBSan alone
# Extra arguments go to cmake. Benchmarks are not built (nothing is timed).
set -euo pipefail
cd "$(dirname "$0")/.."
KIND=${1:?usage: scripts/sanitize.sh address|thread|undefined [cmake args]}
shift
if [[ $KIND == address ]]; then
  # Set before the build too: it runs instrumented tools (tessera-opt,
  # tessera-cts-compile). allow_user_poisoning=0: LLVM's BumpPtrAllocator
  # poisons its slabs from headers compiled into our instrumented code and
  # unpoisons them from the uninstrumented libLLVM / liblld (in-process lld
  # links), which ASan would report as use-after-poison inside lld.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:allow_user_poisoning=0}
fi
BUILD_DIR=build-$KIND bash scripts/build.sh -DTESSERA_SANITIZE="$KIND" -DTESSERA_BUILD_BENCH=OFF "$@"
if [[ $KIND == address ]]; then
  # The Vulkan loader unloads the driver (lavapipe) at vkDestroyInstance;
  # memory the driver still referenced from its globals then looks leaked
  # (frames "<unknown module>"). Preloading the driver keeps it mapped, so
  # what LeakSanitizer reports is ours. The runtime is linked into the
  # programs, hence verify_asan_link_order=0.
  LVP=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n1 || true)
  if [[ -n $LVP ]]; then export LD_PRELOAD=$LVP; fi
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
cd "build-$KIND"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900
