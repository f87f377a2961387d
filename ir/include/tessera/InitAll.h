//===- InitAll.h - register every Tessera dialect and pass ---------------===//
#ifndef TESSERA_INITALL_H
#define TESSERA_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace tessera {
/// Tessera's three dialects plus the upstream dialects its passes produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Every pass of ir/ and its named pipelines (plugins register their own
/// code generators' passes: tessera-opt does both).
void registerAllPasses();
}  // namespace tessera

#endif
