//===- tessera-opt.cpp - mlir-opt with the Tessera dialects and passes ----===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Passes.h"
#include "tessera/cpu/Pipeline.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace {
// The input must be a regular file (or "-", stdin): MLIR reads the whole
// input into memory first, so /dev/zero ran out of memory and a FIFO
// without a writer hung.  tessera-run and tessera-compile refuse them the
// same way.
bool InputsAreRegularFiles(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (std::strcmp(a, "-o") == 0) {  // -o FILE: an output
      ++i;
      continue;
    }
    if (a[0] == '-') continue;
    struct stat st {};
    if (::stat(a, &st) == 0 && !S_ISREG(st.st_mode)) {
      std::fprintf(stderr, "tessera-opt: %s: not a regular file (give a .mlir file, or - for stdin)\n", a);
      return false;
    }
  }
  return true;
}
}  // namespace

int main(int argc, char **argv) {
  if (!InputsAreRegularFiles(argc, argv)) return 1;
  mlir::registerAllPasses();  // upstream passes (they live in libMLIR.so)
  tessera::registerAllPasses();
  // The cpu plugin's code generator (plugins/cpu/compiler), for its lit
  // tests and for looking at what it makes.
  tessera::cpu::registerCPUPasses();
  tessera::cpu::registerCPUPipelines();
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tessera optimizer driver\n", registry));
}
