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
  # detect_odr_violation=0: the static IR libraries (Tile, Schedule, ...)
  # are linked into libtessera_compiler.so and into each plugin's compiler
  # part, so MLIR's TypeID statics exist in several objects, and the
  # dynamic linker binds every reference to one copy (ASan's report showed
  # the same address twice). Level 1 is not enough: once a part is
  # dlclosed, ASan's ODR-indicator check reads the unloaded copy and
  # crashes when the next part loads.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:allow_user_poisoning=0:detect_odr_violation=0}
fi
# No Python module: Debian's python3 is not instrumented, and an ASan
# extension module cannot load into it ("ASan runtime does not come first").
BUILD_DIR=build-$KIND bash scripts/build.sh -DTESSERA_SANITIZE="$KIND" -DTESSERA_BUILD_BENCH=OFF -DTESSERA_PYTHON=OFF "$@"
cd "build-$KIND"
if [[ $KIND == address ]]; then
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # The Vulkan loader unloads the driver (lavapipe) at vkDestroyInstance;
  # memory the driver still referenced from its globals then looks leaked
  # (frames "<unknown module>"). A preloaded shim (pin_library.c) loads the
  # driver once more with RTLD_NODELETE, so it stays mapped and what
  # LeakSanitizer reports is ours. Not the driver itself in LD_PRELOAD: that
  # puts its libLLVM-15 into the global scope, ahead of the LLVM 16 of the
  # cpu compiler's in-process lld link, which then crashes. The runtime is
  # linked into the programs, hence verify_asan_link_order=0.
  LVP=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n1 || true)
  if [[ -n $LVP ]]; then
    cc -shared -fPIC -O2 -o pin_library.so ../scripts/pin_library.c -ldl
    # The loader too: the vulkan plugin dlcloses it.
    export LD_PRELOAD=$PWD/pin_library.so TESSERA_PIN_LIBRARY=$LVP:libvulkan.so.1
  fi
fi
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900
