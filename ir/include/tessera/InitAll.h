//===- InitAll.h - register every Tessera dialect and pass ---------------===//
#ifndef TESSERA_INITALL_H
#define TESSERA_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace tessera {
/// Tessera's three dialects plus the upstream dialects its passes produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Every Tessera pass, plus the named pipelines
/// `tessera-cpu-graph-pipeline` and `tessera-cpu-tile-pipeline`.
void registerAllPasses();
}  // namespace tessera

#endif
