// The unit tests' MLIR context: every Tessera dialect, and diagnostics kept
// as text (one per line) for the failure messages, instead of printed.
#pragma once

#include <memory>
#include <string>

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "tessera/InitAll.h"

namespace tessera::unittest {

/// A new context whose diagnostics are appended to `*diagnostics` (which
/// must outlive it).
inline std::unique_ptr<mlir::MLIRContext> NewContext(std::string *diagnostics) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->getDiagEngine().registerHandler([diagnostics](mlir::Diagnostic &d) {
    *diagnostics += d.str() + "\n";
    return mlir::success();
  });
  return context;
}

}  // namespace tessera::unittest
