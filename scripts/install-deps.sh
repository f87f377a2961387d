#!/usr/bin/env bash
# Installs every Debian 12 package the build and the tests need.  Idempotent:
# it skips apt-get entirely when everything is already there.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache lld pkg-config python3
  python3-numpy           # the NumPy oracle of the end-to-end tests (tests/e2e)
  # The Python package (python/): pybind11 for the extension module, the
  # interpreter's headers, pytest for its tests, DLPack's header for
  # __dlpack__ / from_dlpack.
  python3-dev pybind11-dev python3-pybind11 python3-pytest libdlpack-dev
  libboost-dev            # Boost.DLL: the plugin loader
  libgtest-dev            # GoogleTest: tests/
  libbenchmark-dev        # Google Benchmark: bench/
  nlohmann-json3-dev      # JSON output of tessera-info and the conformance report
  # Vulkan plugin: headers (the library itself is dlopen'ed, never linked),
  # Mesa's lavapipe CPU driver to run it without a GPU, vulkaninfo, the GLSL
  # -> SPIR-V compiler and validator for its test kernels, and the Khronos
  # validation layer its validation test runs under.
  libvulkan-dev mesa-vulkan-drivers vulkan-tools glslang-tools spirv-tools
  vulkan-validationlayers
  # IR (ir/, tessera-opt, tessera-run): MLIR 16 and LLVM 16 (shared libMLIR),
  # lit's FileCheck, lld-16 (and liblld-16-dev below) for generated kernels.
  llvm-16-dev libmlir-16-dev mlir-16-tools llvm-16-tools lld-16
  liblld-16-dev           # lld as a library: the cpu compiler links kernels in process
  # OpenBLAS: the reference GEMM in tessera-bench and tessera-run.
  libopenblas-dev
  # HIP and Level Zero plugins: the headers (the runtimes are dlopen'ed,
  # never linked), the runtimes themselves so that "not available" is the
  # vendor's own answer, and ROCm's device-library bitcode (ocml, ockl) the
  # hip compiler links for math functions.
  libamdhip64-dev libze-dev libze1 rocm-device-libs
  # The level_zero compiler's SPIR-V kernels run on a CPU
  # (tests/spirv_kernels_on_pocl.py): PoCL takes SPIR bitcode, the Khronos
  # translator makes it of SPIR-V, clang-15 / llvm-link-15 / llvm-dis-15
  # (PoCL's LLVM) build and link the built-ins PoCL lacks (one-lane
  # subgroups, mem_fence: tests/pocl/missing_builtins.cl).
  pocl-opencl-icd ocl-icd-libopencl1 llvm-spirv-15 clang-15 llvm-15
  # Open MPI: SPMD across processes (libtessera_mpi.so, mpirun in the mpi.*
  # tests); without it everything else builds and those tests skip.
  libopenmpi-dev openmpi-bin
  # libFuzzer (fuzz/, scripts/fuzz.sh, docs/fuzzing.md): clang 16 and its
  # sanitizer and fuzzer runtimes; the fuzz tree is built with clang only.
  clang-16 libclang-rt-16-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
