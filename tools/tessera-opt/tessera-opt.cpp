//===- tessera-opt.cpp - mlir-opt with the Tessera dialects and passes ----===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Passes.h"
#include "tessera/cpu/Pipeline.h"

int main(int argc, char **argv) {
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
